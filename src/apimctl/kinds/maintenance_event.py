"""Scheduled maintenance events (``scheduledMaintenanceEvents``): windows over endpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.kinds.base import (
    Kind,
    Lookups,
    Ops,
    Read,
    Reference,
    Resolver,
    SubResource,
    as_list,
    fingerprint,
    frozen,
)
from apimctl.kinds.endpoint import ENDPOINT
from apimctl.kinds.service import SERVICE

ENDPOINTS = "endpoints"


class MaintenanceEventOps(Ops):
    """An event's endpoints are ``{service, endpoint}`` pairs, linked one by one."""

    collections: tuple[str, ...] = (ENDPOINTS,)

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
            body[ENDPOINTS] = [{"id": refs.id(ENDPOINT.name, endpoint_key(e))} for e in endpoints]
        return body


def endpoint_key(ref: Mapping[str, Any]) -> str:
    """The key of the endpoint a ``{service, endpoint}`` pair names."""
    return f"{ref[SERVICE.name]}/{ref[ENDPOINT.name]}"


MAINTENANCE_EVENT: Kind = Kind(
    name="maintenanceEvent", manifest_key="scheduledMaintenanceEvents",
    label="maintenance event", manifest_rank=4,
    path="/scheduledMaintenanceEvents", body="scheduledMaintenanceEvent",
    depends_on=("endpoint",),
    references=(Reference("endpoints[].endpoint", "endpoint", within="endpoints[].service",
                           body=("id",)),),
    computed=frozenset({"id", "created", "updated"}),
    datetimes=frozenset({"startDateTime", "endDateTime"}),
    sets=frozenset({"endpoints"}),
    left_alone=frozenset({"endpoints"}),
    fields=("id", "name", "created", "updated", "startDateTime", "endDateTime",
            "endpoints.id", "endpoints.name"),
    sub_resources=frozen({
        "endpoints": SubResource("endpoints", None, "POST {id: endpoint id} / DELETE"),
    }),
    ops=MaintenanceEventOps(lambda: MAINTENANCE_EVENT),
)
