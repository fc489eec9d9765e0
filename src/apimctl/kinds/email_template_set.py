"""Email template sets (``emailTemplateSets``): read only, a data source. Each set holds the
area's templates of the notices it sends (``/emailTemplateSets/{id}/emailTemplates``: the
sender, subject and body of each type of notice). Plans name the set their notices use
(``emailTemplateSet``, by name; the API's ``emailTemplateSetId``); apimctl reads the sets
(``GET /emailTemplateSets``, with their templates) and exports the ones exported plans name,
but never creates, updates, deletes or prunes one. Manifests may declare sets by name, so
that the plans' references to them are checked offline; a declared set the area lacks is a
plan error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.kinds.base import Compare, Export, Kind, Write
from apimctl.kinds.ops import (
    NESTED_COMPUTED_FIELDS,
    Exported,
    Lookups,
    Ops,
    Read,
    as_list,
    fingerprint,
)

TEMPLATES = "emailTemplates"
# what the live state holds of a template: its type of notice (the key) and its text
TEMPLATE_FIELDS: tuple[str, ...] = ("type", "from", "subject", "body")


class EmailTemplateSetOps(Ops):
    """A set reads as its name and its templates (by type of notice), and is exported as its
    name: the templates are the platform's, never written."""

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        identity = self.kind.identity
        doc: dict[str, Any] = {identity: raw.get(identity)}
        if TEMPLATES in raw:
            doc[TEMPLATES] = [{k: v for k, v in t.items() if k not in NESTED_COMPUTED_FIELDS}
                              for t in as_list(raw[TEMPLATES]) if isinstance(t, Mapping)]
        return Read(doc, fingerprint(raw)[0])

    def export(self, entry: Exported) -> Any:
        """The set's name (with its id, when asked for), as a plan names it."""
        doc = {k: v for k, v in entry.doc.items() if k in (self.kind.identity, "id")}
        return doc if len(doc) > 1 else doc[self.kind.identity]


EMAIL_TEMPLATE_SET: Kind = Kind(
    name="emailTemplateSet", manifest_key="emailTemplateSets", label="email template set",
    path="/emailTemplateSets", body="emailTemplateSet", read_only=True,
    compare=Compare(computed=frozenset({"id", "created", "updated"}), opaque=frozenset({TEMPLATES})),
    write=Write(deletable=False),
    export=Export(pinnable=False, manifest_rank=6),
    fields=("id", "name", "updated", f"{TEMPLATES}.id",
            *(f"{TEMPLATES}.{f}" for f in TEMPLATE_FIELDS)),
    operations=EmailTemplateSetOps,
)
