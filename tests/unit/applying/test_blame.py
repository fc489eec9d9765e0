"""Which children of a refused nested write the API blamed, and their names in messages."""

from __future__ import annotations

from apimctl.applying.blame import blamed, named_positions
from apimctl.errors import Invalid, ServerError

HEAD = "POST /services: 400 Bad Request"


def _invalid(*items: dict[str, str]) -> Invalid:
    return Invalid(f"{HEAD}: validation failed", status=400, items=list(items))


def test_blamed_positions_with_their_reasons() -> None:
    exc = _invalid({"property": "endpoints[2].maxAge", "message": "must be a number"},
                   {"property": "endpoints[0]", "message": "duplicate name"},
                   {"property": "endpoints[2].name", "message": "too long"})
    assert blamed(exc, "endpoints", 3) == {
        2: f"{HEAD}: maxAge: must be a number; name: too long",
        0: f"{HEAD}: duplicate name",
    }


def test_nothing_blamed_when_an_item_is_about_something_else() -> None:
    assert blamed(_invalid({"property": "name", "message": "taken"}), "endpoints", 3) is None
    assert blamed(_invalid({"property": "errorSets[0].name", "message": "x"}), "endpoints", 3) is None
    assert blamed(_invalid({"property": "endpoints[3].x", "message": "x"}), "endpoints", 3) is None  # out of range
    assert blamed(_invalid(), "endpoints", 3) is None


def test_named_positions_replaces_indexes_by_names() -> None:
    exc = ServerError("PUT /services/s1: endpoints[1].maxAge invalid; endpoints[5].x; errorSets[0] bad")
    named = named_positions(exc, {"endpoints": ["A", "Forecast"], "errorSets": ["Errs"]})
    assert named.message == "PUT /services/s1: endpoints[Forecast].maxAge invalid; endpoints[5].x; errorSets[Errs] bad"
    assert type(named) is ServerError


def test_named_positions_of_a_bare_array_take_the_label_given() -> None:
    exc = Invalid("PUT /services/s1/endpoints: [0].name: too long", status=400)
    assert named_positions(exc, {"": ["Forecast"]}, "endpoints").message == (
        "PUT /services/s1/endpoints: endpoints[Forecast].name: too long")


def test_named_positions_leaves_other_messages_alone() -> None:
    exc = Invalid("nothing positional here; items[0] is not a child", status=400)
    assert named_positions(exc, {"endpoints": ["A"]}) is exc
