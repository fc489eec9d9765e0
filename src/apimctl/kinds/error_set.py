"""Error sets (``errorSets`` of a service): the platform fills every set with the full message catalog."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apimctl import platform
from apimctl.kinds.base import Compare, Kind, Write, frozen
from apimctl.kinds.capabilities import CatalogItems
from apimctl.kinds.dialects import Dialect, exported_messages, message_default
from apimctl.kinds.nested_writes import Catalog, NestedWrite
from apimctl.kinds.ops import Lookups, Ops, Read, Resolver, as_list, fingerprint
from apimctl.kinds.protocol import Holdings
from apimctl.kinds.words import named

MESSAGES = "errorMessages"

# the error message catalog (SUPPLEMENT §5): id -> (HTTP status, status text)
ERROR_CATALOG = platform.ERROR_CATALOG
# The error set the platform gives a service created without any (SUPPLEMENT §2).
PLATFORM_ERROR_SET = "Default"

ERROR_MESSAGE_FIELDS: tuple[str, ...] = ("status", "detailHeader", "responseBody")


def catalog_message(message_id: str, dialect: Dialect) -> Mapping[str, Any]:
    """A catalog message as the platform creates it in ``dialect`` (SUPPLEMENT §5, §10.5)."""
    return message_default(message_id, ERROR_CATALOG[message_id][1], dialect)


def dialect_message_fields(message_id: str, dialect: Dialect) -> Mapping[str, Any]:
    """What a listed message is created with when the manifest leaves it out: the
    ``detailHeader`` of a dialect with defaults of its own (SUPPLEMENT §10.5)."""
    return {"detailHeader": dialect.detail_header(message_id)} if dialect.message_details else {}


class ErrorSetOps(Ops, CatalogItems):
    """An error set's messages are written whole when created, one by one when they change;
    they are the platform's catalog, which every set holds whole."""

    writes: Mapping[str, NestedWrite] = frozen({
        MESSAGES: Catalog(key="id", ids=tuple(ERROR_CATALOG), default=catalog_message,
                          filled=dialect_message_fields)})

    def implied_items(self, path: str) -> Sequence[str]:
        """Every set holds the whole catalog: a message not listed is at its catalog default."""
        return tuple(ERROR_CATALOG) if path == MESSAGES else ()

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]:
        """A catalog message's status defaults to the catalog's status text."""
        if path == MESSAGES and key in ERROR_CATALOG:
            return {**defaults, "status": ERROR_CATALOG[key][1]}
        return defaults

    def written(self, entries: Sequence[Any]) -> bool:
        """A service's sets are exported unless they are the one set the platform creates."""
        return list(entries) != [{ERROR_SET.identity: PLATFORM_ERROR_SET}]

    def export_dialect(self, fields: dict[str, Any], normal: Mapping[str, Any],
                       dialect: Dialect) -> None:
        """A message's ``detailHeader`` against the dialect's default (:func:`exported_messages`)."""
        exported_messages(fields, normal, dialect)

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """The error messages of the objects that return the set's."""
        return [f"the error messages of {named(kind.label, [o.name for o in held])} (they fall "
                "back to the service's first error set)" for kind, held in area.naming(self.kind.name, key)]

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        if MESSAGES in doc:
            doc[MESSAGES] = [{k: v for k, v in m.items() if k != "code"} for m in as_list(doc[MESSAGES])]
        return Read(doc, *fingerprint(parent if parent is not None else raw))

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        body = self.own_fields(desired)
        messages = desired.get(MESSAGES)
        if messages is not None:
            body[MESSAGES] = [dict(m) for m in messages]
        return body


ERROR_SET: Kind = Kind(
    name="errorSet", manifest_key="errorSets", label="error set",
    item_labels=frozen({"errorMessages": "error message"}), path="/services/{service}/errorSets",
    body="errorSet", parent="service",
    compare=Compare(computed=frozenset({"id", "created", "updated"})),
    defaults=frozen({"type": "application/json", "jsonp": False, "jsonpType": "", "errorMessages": []}),
    keyed=frozen({"errorMessages": "id"}),
    nested=frozen({"errorMessages": frozen({"status": "", "detailHeader": "", "responseBody": ""})}),
    read_also=("created", "updated"),
    write=Write(covered_by_parent=True, keeps_one=True, made_with_parent=(PLATFORM_ERROR_SET,)),
    operations=ErrorSetOps,
)
