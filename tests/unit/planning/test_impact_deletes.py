"""What goes with a delete (``apimctl.planning.impact.deletes``), from a live area made by
hand: a service with two endpoints (one returning a named error set), a package whose plan
entitles one endpoint and gives a role key permissions, and that role."""

from __future__ import annotations

import pytest

from apimctl.planning.impact.deletes import goes_with
from apimctl.planning.impact.world import World
from apimctl.plans.model import Step
from apimctl.state.live import LiveObject, LiveState


def _world() -> World:
    live = LiveState()
    for obj in (
        LiveObject("role", "Partners", "r1", {"name": "Partners"}),
        LiveObject("service", "Ordering", "s1", {"name": "Ordering", "roles": ["Partners"]}),
        LiveObject("errorSet", "Ordering/XML", "x1", {"name": "XML"}, "Ordering", "s1"),
        LiveObject("endpoint", "Ordering/Track", "e1", {"name": "Track", "errorSet": "XML"},
                   "Ordering", "s1"),
        LiveObject("endpoint", "Ordering/Place", "e2", {"name": "Place", "errorSet": None},
                   "Ordering", "s1"),
        LiveObject("package", "Shop", "k1", {"name": "Shop"}),
        LiveObject("plan", "Shop/Pro", "p1", {"name": "Pro", "roles": ["Partners"], "services": [
            {"name": "Ordering", "endpoints": [{"name": "Track"}]}]}, "Shop", "k1"),
    ):
        live.add(obj)
    return World(live)


@pytest.mark.parametrize(("kind", "key", "text"), [
    ("service", "Ordering", "goes with it: 2 endpoints, 1 error set, its entitlements in plan "
                            "Pro, the read permissions of role Partners"),
    ("endpoint", "Ordering/Track", "goes with it: its entitlements in plan Pro"),
    ("package", "Shop", "goes with it: its plan Pro"),
    ("plan", "Shop/Pro", "goes with it: its entitlements to Ordering, the key permissions of "
                         "role Partners"),
    ("role", "Partners", "goes with it: its read permissions on service Ordering, its key "
                         "permissions on plan Pro"),
    ("errorSet", "Ordering/XML", "goes with it: the error messages of endpoint Track (they fall "
                                 "back to the service's first error set)"),
])
def test_a_delete_says_what_goes_with_it(kind: str, key: str, text: str) -> None:
    line = goes_with(Step("delete", kind, key, id="x"), _world())
    assert line is not None and (line.text, line.effect, line.keys) == (text, "informs", None)


def test_nothing_goes_with_an_endpoint_no_plan_entitles_nor_with_an_update() -> None:
    world = _world()
    assert goes_with(Step("delete", "endpoint", "Ordering/Place", id="e2"), world) is None
    assert goes_with(Step("update", "service", "Ordering", id="s1"), world) is None
