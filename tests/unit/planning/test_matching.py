"""Identity matching: desired objects paired with live ones by name within their parent, by
``id`` pin or by a previous name; what is left over is unmatched."""

from __future__ import annotations

from typing import Any

import pytest

from apimctl.errors import PlanError
from apimctl.planning.desired import desired_objects
from apimctl.planning.matching import match, written
from apimctl.state.live import LiveState, from_raw


def _live() -> LiveState:
    return from_raw({
        "role": [{"id": "r1", "name": "Partners"}, {"id": "r2", "name": "Stray"}],
        "service": [
            {"id": "s1", "name": "Weather", "endpoints": [{"id": "e1", "name": "Forecast"}],
             "errorSets": [{"id": "x1", "name": "Default", "errorMessages": []}]},
            {"id": "s2", "name": "Old", "endpoints": [{"id": "e2", "name": "Forecast"}]},
        ],
    })


def _pairs(doc: dict[str, Any], live: LiveState | None = None) -> dict[str, str | None]:
    found = match(desired_objects(doc), live or _live())
    return {want.address: (got.id if got else None) for want, got in found.pairs}


def test_by_name_within_the_parent() -> None:
    doc = {"roles": [{"name": "Partners"}, {"name": "New"}],
           "services": [{"name": "Weather", "endpoints": [{"name": "Forecast"}, {"name": "Radar"}]}]}
    assert _pairs(doc) == {"role:Partners": "r1", "role:New": None, "service:Weather": "s1",
                           "endpoint:Weather/Forecast": "e1", "endpoint:Weather/Radar": None}


def test_children_of_a_parent_to_be_created_are_created_too() -> None:
    # "Forecast" exists under two live services, but not under the new one
    assert _pairs({"services": [{"name": "Brand new", "endpoints": [{"name": "Forecast"}]}]}) == {
        "service:Brand new": None, "endpoint:Brand new/Forecast": None}


def test_previous_names_and_id_pins() -> None:
    doc = {"roles": [{"name": "Friends", "previousNames": ["Gone", "Partners"]}, {"name": "Other", "id": "r2"}],
           "services": [{"name": "Climate", "previousNames": ["Weather"]}]}
    assert _pairs(doc) == {"role:Friends": "r1", "role:Other": "r2", "service:Climate": "s1"}


def test_the_current_name_wins_over_a_previous_one() -> None:
    doc = {"roles": [{"name": "Stray", "previousNames": ["Partners"]}]}
    assert _pairs(doc) == {"role:Stray": "r2"}


def test_unmatched_live_objects() -> None:
    found = match(desired_objects({"roles": [{"name": "Partners"}]}), _live())
    assert sorted(o.id for o in found.unmatched) == ["e1", "e2", "r2", "s1", "s2", "x1"]
    assert found.live_of["role:Partners"] is not None and found.live_of["role:Partners"].id == "r1"


def test_a_pin_to_nothing_is_an_error() -> None:
    with pytest.raises(PlanError, match="id 'r9' pins role 'Partners' to no live object"):
        match(desired_objects({"roles": [{"name": "Partners", "id": "r9"}]}), _live())


def test_two_objects_claiming_one_live_object_is_an_error() -> None:
    doc = {"roles": [{"name": "Partners"}, {"name": "Friends", "previousNames": ["Partners"]}]}
    with pytest.raises(PlanError, match="both match live id r1"):
        match(desired_objects(doc), _live())


def test_declared_twice_is_an_error() -> None:
    with pytest.raises(PlanError, match="role 'Partners' is declared twice"):
        match(desired_objects({"roles": [{"name": "Partners"}, {"name": "Partners"}]}), _live())


def test_written_keeps_the_fields_and_members_the_manifest_listed() -> None:
    (endpoint,) = desired_objects({"services": [{"name": "W", "endpoints": [
        {"name": "F", "methods": [{"name": "get"}]}]}]})["endpoint"]
    normal = {"name": "F", "cors": {"maxAge": 0}, "methods": {"get": {"x": 1}, "post": {"x": 2}}}
    assert written(endpoint, normal) == {"name": "F", "methods": {"get": {"x": 1}}}
