"""Routes as resources in the plan's order: a freed route before it is taken, a swap across
services broken with a temporary route, updates of one service left to their one call."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.planning.desired import Desired
from apimctl.planning.routes import check_routes, route_dependencies
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


def _endpoint(key: str, alias: str, hosts: list[str] | None, methods: list[str] | None = None) -> Desired:
    doc: dict[str, Any] = {"requestPathAlias": alias}
    if hosts is not None:
        doc["publicDomains"] = hosts
    if methods is not None:
        doc["supportedHttpMethods"] = methods
    return _desired(key, doc)


def _refusal(objs: list[Desired], by_method: bool) -> str | None:
    try:
        check_routes({"endpoint": objs}, by_method)
    except PlanError as exc:
        return str(exc)
    return None


def test_two_declared_endpoints_on_one_route_are_refused_by_the_targets_rule() -> None:
    get = _endpoint("S1/A", "/a", ["api.example.com"], ["get"])
    post = _endpoint("S2/B", "/a", ["API.example.com"], ["post"])
    # spec: a path on a domain is one route whatever the methods; mashery: by method too
    assert _refusal([get, post], by_method=False) == (
        "the target keeps endpoint routes unique by public domain and path, and two declared "
        "endpoints claim the same route: S1/A and S2/B (api.example.com/a)")
    assert _refusal([get, post], by_method=True) is None
    both = _endpoint("S3/C", "/a", ["api.example.com"], ["get", "post"])
    assert _refusal([get, post, both], by_method=True) == (
        "the target keeps endpoint routes unique by method, public domain and path, and two "
        "declared endpoints claim the same route: S1/A and S3/C (GET api.example.com/a); "
        "S2/B and S3/C (POST api.example.com/a)")
    # without public domains an endpoint claims no route
    assert _refusal([_endpoint("S1/A", "/a", None), _endpoint("S2/B", "/a", [])], by_method=False) is None


def test_the_first_five_clashes_are_named_in_the_order_declared() -> None:
    objs = [_endpoint(f"S{i}/E", "/same", ["api.example.com", "b.example.com"]) for i in range(5)]
    message = _refusal(objs, by_method=False)
    assert message is not None and message.endswith(
        "S0/E and S1/E (api.example.com/same); S0/E and S1/E (b.example.com/same); "
        "S0/E and S2/E (api.example.com/same); S0/E and S2/E (b.example.com/same); "
        "S0/E and S3/E (api.example.com/same); and 3 more")


_HOSTS = st.lists(st.sampled_from(["a.example.com", "B.example.com", "c.example.com"]), max_size=2)
_METHODS = st.none() | st.lists(st.sampled_from(["get", "post", "PUT"]), min_size=1, max_size=2)


@given(st.lists(st.tuples(st.sampled_from(["/x", "/y"]), st.none() | _HOSTS, _METHODS), max_size=6),
       st.booleans())
def test_refused_exactly_when_two_endpoints_share_a_route_with_a_domain(
        declared: list[tuple[str, list[str] | None, list[str] | None]], by_method: bool) -> None:
    objs = [_endpoint(f"S{i}/E", alias, hosts, methods) for i, (alias, hosts, methods) in enumerate(declared)]
    claimed: dict[str, int] = {}
    clash = False
    for obj in objs:
        for route in kinds.ENDPOINT.ops.routes(obj.doc, by_method):
            if not route.endswith("|"):
                clash |= route in claimed
                claimed[route] = 1
    message = _refusal(objs, by_method)
    assert (message is not None) == clash, message


_NAME = st.sampled_from(["api.example.com", "API.Example.com", " api.example.com ", "b.example.com", ""])
# a public domain as manifests write it (a name), as the API renders it ({address}, with an id
# or without), or an odd value a real area may hold (SUPPLEMENT §10.10)
_DOMAIN = _NAME | st.builds(lambda n: {"address": n}, _NAME) | st.builds(
    lambda n: {"id": 7, "address": n}, _NAME) | st.just({}) | st.integers(0, 9)
_DOMAINS = st.none() | _DOMAIN | st.lists(_DOMAIN, max_size=3)
_WRITTEN_METHODS = st.none() | st.lists(st.sampled_from(["get", "GET", "post", "Put"]), max_size=3)


@given(st.sampled_from(["/x", "", None]), _DOMAINS, _WRITTEN_METHODS, st.booleans())
def test_routes_are_method_alias_and_host_whatever_shape_the_domains_have(
        alias: str | None, domains: Any, methods: list[str] | None, by_method: bool) -> None:
    doc: dict[str, Any] = {"requestPathAlias": alias, "publicDomains": domains}
    if methods is not None:
        doc["supportedHttpMethods"] = methods
    listed = [] if domains is None else domains if isinstance(domains, list) else [domains]
    hosts = {(d.get("address", "") if isinstance(d, dict) else str(d)).strip().lower() for d in listed} or {""}
    expected = {f"{alias or ''}|{h}" for h in hosts}
    if by_method:
        said = ["get"] if methods is None else [m.lower() for m in methods] or [""]
        expected = {f"{m}|{r}" for m in said for r in expected}
    assert kinds.ENDPOINT.ops.routes(doc, by_method) == expected
