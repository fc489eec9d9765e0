"""Error sets (``errorSets`` of a service): the platform fills every set with the full message catalog."""

from __future__ import annotations

from apimctl.kinds.base import Kind, SubResource, frozen

ERROR_MESSAGE_FIELDS: tuple[str, ...] = ("status", "detailHeader", "responseBody")

ERROR_SET_READ_FIELDS: tuple[str, ...] = (
    "id", "name", "type", "jsonp", "jsonpType", "errorMessages",
)

ERROR_SET = Kind(
    name="errorSet", manifest_key="errorSets", path="/services/{service}/errorSets",
    body="errorSet", parent="service", pinnable=True,
    computed=frozenset({"id", "created", "updated"}),
    defaults=frozen({"type": "application/json", "jsonp": False, "jsonpType": "", "errorMessages": []}),
    keyed=frozen({"errorMessages": "id"}),
    nested=frozen({"errorMessages": frozen({"status": "", "detailHeader": "", "responseBody": ""})}),
    fields=ERROR_SET_READ_FIELDS,
    sub_resources=frozen({
        "errorMessages": SubResource("errorMessages", "errorMessage",
                                     "PUT errorMessages/{id} upserts one message"),
    }),
)
