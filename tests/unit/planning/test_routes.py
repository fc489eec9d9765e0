"""Routes as resources in the plan's order: a freed route before it is taken, a swap across
services broken with a temporary route, updates of one service left to their one call."""

from __future__ import annotations

from typing import Any

from apimctl import kinds
from apimctl.planning.desired import Desired
from apimctl.planning.routes import route_dependencies
from apimctl.plans.model import Change, Step
from apimctl.state.live import LiveState


def _desired(key: str, doc: dict[str, Any]) -> Desired:
    return Desired(kinds.ENDPOINT, key, key.rpartition("/")[2], doc, ())


def _update(key: str, parent: str, old: str, new: str) -> Step:
    return Step("update", "endpoint", key, f"id-{key}", f"service:{parent}", f"sid-{parent}",
                (Change("requestPathAlias", old, new),))


def routes(doc: dict[str, Any]) -> set[str]:
    return kinds.ENDPOINT.ops.routes(doc, False)


def test_routes_are_alias_and_each_public_domain() -> None:
    assert routes({"requestPathAlias": "/a", "publicDomains": ["API.example.com", "b.example.com"]}) == {
        "/a|api.example.com", "/a|b.example.com"}
    assert routes({"requestPathAlias": "/a"}) == {"/a|"}


def test_a_cross_service_swap_goes_through_a_temporary_route() -> None:
    steps = {"endpoint:S1/A": _update("S1/A", "S1", "/a", "/b"), "endpoint:S2/B": _update("S2/B", "S2", "/b", "/a")}
    desired = {"endpoint:S1/A": _desired("S1/A", {"requestPathAlias": "/b"}),
               "endpoint:S2/B": _desired("S2/B", {"requestPathAlias": "/a"})}
    live = {"endpoint:S1/A": {"name": "A", "requestPathAlias": "/a"},
            "endpoint:S2/B": {"name": "B", "requestPathAlias": "/b"}}
    deps: dict[str, tuple[str, ...]] = {a: () for a in steps}
    extra = route_dependencies(steps, desired, live, deps, LiveState())
    assert list(extra) == ["endpoint:S1/A (temporary route)"]
    assert deps["endpoint:S2/B"] == ("endpoint:S1/A (temporary route)",)
    assert set(deps["endpoint:S1/A"]) == {"endpoint:S1/A (temporary route)", "endpoint:S2/B"}


def test_updates_of_one_service_are_not_ordered_against_each_other() -> None:
    steps = {"endpoint:S/A": _update("S/A", "S", "/a", "/b"), "endpoint:S/B": _update("S/B", "S", "/b", "/a")}
    desired = {"endpoint:S/A": _desired("S/A", {"requestPathAlias": "/b"}),
               "endpoint:S/B": _desired("S/B", {"requestPathAlias": "/a"})}
    live = {"endpoint:S/A": {"requestPathAlias": "/a"}, "endpoint:S/B": {"requestPathAlias": "/b"}}
    deps: dict[str, tuple[str, ...]] = {a: () for a in steps}
    assert route_dependencies(steps, desired, live, deps, LiveState()) == {}
    assert deps == {"endpoint:S/A": (), "endpoint:S/B": ()}
