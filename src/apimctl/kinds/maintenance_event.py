"""Scheduled maintenance events (``scheduledMaintenanceEvents``): windows over endpoints."""

from __future__ import annotations

from apimctl.kinds.base import Kind, Reference, SubResource, frozen

MAINTENANCE_EVENT = Kind(
    name="maintenanceEvent", manifest_key="scheduledMaintenanceEvents",
    path="/scheduledMaintenanceEvents", body="scheduledMaintenanceEvent",
    depends_on=("endpoint",),
    references=(Reference("endpoints[]", "endpoint"),),
    computed=frozenset({"id", "created", "updated"}),
    datetimes=frozenset({"startDateTime", "endDateTime"}),
    sets=frozenset({"endpoints"}),
    left_alone=frozenset({"endpoints"}),
    fields=("id", "name", "created", "updated", "startDateTime", "endDateTime",
            "endpoints.id", "endpoints.name"),
    sub_resources=frozen({
        "endpoints": SubResource("endpoints", None, "POST {id: endpoint id} / DELETE"),
    }),
)
