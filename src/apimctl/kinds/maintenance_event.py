"""Scheduled maintenance events (``scheduledMaintenanceEvents``): windows over endpoints."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from apimctl.kinds.base import Compare, Export, Kind, Reference, frozen, join_key
from apimctl.kinds.capabilities import SetMembers
from apimctl.kinds.endpoint import ENDPOINT
from apimctl.kinds.findings import Declarations, Finding, JsonPath, duplicates, string
from apimctl.kinds.nested_writes import Links, NestedWrite
from apimctl.kinds.ops import (
    Exported,
    Lookups,
    Ops,
    Read,
    Resolver,
    as_list,
    escape_literal,
    fingerprint,
    member_name,
)
from apimctl.kinds.references.paths import refs_of
from apimctl.kinds.service import SERVICE

ENDPOINTS = "endpoints"
START, END = "startDateTime", "endDateTime"
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")


def _window(path: JsonPath, event: Mapping[str, Any]) -> Iterator[Finding]:
    """A window that ends after it starts (the schema reports a malformed time)."""
    times: dict[str, datetime] = {}
    for key in (START, END):
        text = string(event, key)
        if text is None or not _DATETIME.match(text):
            continue  # the schema reports the shape
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            yield Finding((*path, key), f"not a valid datetime: {exc}")
            continue
        if parsed.tzinfo is not None:
            times[key] = parsed
    start, end = times.get(START), times.get(END)
    if start is not None and end is not None and start >= end:
        yield Finding((*path, END), f"must be after {START} ({event[START]})")


class MaintenanceEventOps(Ops, SetMembers):
    """An event's endpoints are ``{service, endpoint}`` pairs, linked one by one."""

    writes: Mapping[str, NestedWrite] = frozen({ENDPOINTS: Links()})

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        endpoints = []
        for ep in as_list(raw.get(ENDPOINTS)):
            found = lookups.key(ENDPOINT.name, ep.get("id"))
            if found is not None:
                endpoints.append({SERVICE.name: found[0], ENDPOINT.name: found[1]})
        doc[ENDPOINTS] = endpoints
        return Read(doc, fingerprint(raw)[0])

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        body = self.own_fields(desired)
        endpoints = desired.get(ENDPOINTS)
        if endpoints is not None:
            body[ENDPOINTS] = [dict(e) for e in endpoints]
        return self.resolved(body, refs, parent)  # each pair as {id: endpoint id}


    def export(self, entry: Exported) -> Any:
        """The event's endpoints as ``{service, endpoint}`` pairs, sorted."""
        doc = super().export(entry)
        endpoints = [e for e in entry.live.get(ENDPOINTS) or [] if isinstance(e, Mapping)]
        pairs = sorted({(str(e.get(SERVICE.name)), str(e.get(ENDPOINT.name))) for e in endpoints})
        doc.pop(ENDPOINTS, None)
        if pairs:
            doc[ENDPOINTS] = escape_literal([{SERVICE.name: s, ENDPOINT.name: e} for s, e in pairs])
        return doc

    def check(self, declared: Declarations) -> Iterator[Finding]:
        """Each event's window, and no endpoint listed twice in one event."""
        for obj in declared.of(self.kind.name):
            yield from _window(obj.path, obj.entry)
            seen: dict[tuple[str, str], list[JsonPath]] = {}
            for ref in refs_of(self.kind, obj.entry):
                seen.setdefault((ref.parent or "", ref.name), []).append((*obj.path, *ref.item))
            yield from duplicates(seen, lambda k: f"{ENDPOINT.label} '{k[0]}/{k[1]}' is listed twice")

    def set_member(self, item: Mapping[str, Any]) -> Any:
        """A ``{service, endpoint}`` pair is the endpoint's key."""
        if SERVICE.name in item and ENDPOINT.name in item:
            return endpoint_key(item)
        return member_name(item)


def endpoint_key(ref: Mapping[str, Any]) -> str:
    """The key of the endpoint a ``{service, endpoint}`` pair names."""
    return join_key(join_key(None, ref[SERVICE.name]), ref[ENDPOINT.name])


MAINTENANCE_EVENT: Kind = Kind(
    name="maintenanceEvent", manifest_key="scheduledMaintenanceEvents",
    label="maintenance event",
    path="/scheduledMaintenanceEvents", body="scheduledMaintenanceEvent",
    depends_on=("endpoint",),
    references=(Reference("endpoints[].endpoint", "endpoint", within="endpoints[].service",
                           body=("id",)),),
    compare=Compare(computed=frozenset({"id", "created", "updated"}),
                    datetimes=frozenset({START, END}),
                    sets=frozenset({"endpoints"}),
                    left_alone=frozenset({"endpoints"})),
    fields=("id", "name", "created", "updated", "startDateTime", "endDateTime",
            "endpoints.id", "endpoints.name"),
    export=Export(manifest_rank=4, export_file="maintenance.yaml",
                  export_first=("startDateTime", "endDateTime")),
    operations=MaintenanceEventOps,
)
