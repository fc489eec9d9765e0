"""Organizations (``organizations``): read only, a data source. Roles name them; apimctl reads
them (``GET /organizations``) and exports the ones exported roles name, but never creates,
updates, deletes or prunes one. Manifests may declare organizations by name, so that the
roles' references to them are checked offline; a declared organization the area lacks is a
plan error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.kinds.base import Compare, Export, Kind, Write
from apimctl.kinds.ops import Exported, Lookups, Ops, Read, fingerprint


class OrganizationOps(Ops):
    """An organization reads as its name and is exported as its name."""

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        return Read({ORGANIZATION.identity: raw.get(ORGANIZATION.identity)}, fingerprint(raw)[0])

    def export(self, entry: Exported) -> Any:
        return entry.doc if len(entry.doc) > 1 else entry.doc[ORGANIZATION.identity]


ORGANIZATION: Kind = Kind(
    name="organization", manifest_key="organizations", label="organization",
    path="/organizations", body="organization", read_only=True,
    fields=("id", "name", "updated"),
    compare=Compare(computed=frozenset({"id", "created", "updated", "description", "parent",
                                        "isActive", "suborganizations"})),
    write=Write(deletable=False),
    export=Export(pinnable=False, manifest_rank=5),
    operations=OrganizationOps,
)
