"""Top-level objects two live models hold alike (by their digests), and a model without them."""

from __future__ import annotations

from apimctl.state.alike import alike, without
from apimctl.state.objects import LiveObject, LiveState


def _area(qps: int = 5, path: str = "/v1", extra: bool = False) -> LiveState:
    live = LiveState()
    for name, digest in [("Payments", f"s{qps}"), ("Weather", "s5")]:
        live.add(LiveObject("service", name, f"id-{name}", {"name": name}, name=name, norm=digest.encode()))
        for ep in ["Forecast", *(["Beta"] if extra and name == "Weather" else [])]:
            key = f"{name}/{ep}"
            norm = f"e{path}".encode() if name == "Weather" else b"e"
            live.add(LiveObject("endpoint", key, f"id-{key}", {"name": ep}, name, f"id-{name}", name=ep, norm=norm))
    live.add(LiveObject("role", "Partners", "id-r", {"name": "Partners"}, name="Partners"))  # no digest
    return live


def test_alike_needs_the_object_and_everything_under_it() -> None:
    assert alike(_area(), _area(), {"service", "role"}) == {
        "service": {"Payments": [_area().of("endpoint")[0]], "Weather": [_area().of("endpoint")[1]]}}
    assert set(alike(_area(qps=7), _area(), {"service"})["service"]) == {"Weather"}  # the service differs
    assert set(alike(_area(path="/v2"), _area(), {"service"})["service"]) == {"Payments"}  # an endpoint does
    assert set(alike(_area(extra=True), _area(), {"service"})["service"]) == {"Payments"}  # one more endpoint
    assert alike(_area(), _area(), {"role"}) == {}  # no digests: never alike
    assert alike(_area(), _area(), set()) == {}


def test_without_drops_the_objects_under_those_held() -> None:
    live = _area(extra=True)
    rest = without(live, {"service": {"Weather": []}})
    assert [o.key for o in rest.of("service")] == ["Payments"]
    assert [o.key for o in rest.of("endpoint")] == ["Payments/Forecast"]
    assert [o.key for o in rest.of("role")] == ["Partners"]
    assert live.count() == 6  # the model itself is left as it was


def _documents(**changed: object) -> LiveState:
    """A service and its endpoint, with the digests of their documents (as ``read_live``
    makes them with ``digested``), the endpoint's fields in the order given."""
    live = LiveState()
    live.add(LiveObject("service", "Weather", "s1", {"name": "Weather", "qpsLimitOverall": 5},
                        name="Weather", digested=True))
    endpoint = {"name": "Forecast", "requestPathAlias": "/v1", **changed}
    live.add(LiveObject("endpoint", "Weather/Forecast", "e1", endpoint, "Weather", "s1",
                        name="Forecast", digested=True))
    return live


def test_documents_alike_by_their_digests() -> None:
    assert set(alike(_documents(), _documents(), {"service"})["service"]) == {"Weather"}
    assert alike(_documents(requestPathAlias="/v2"), _documents(), {"service"}) == {}
    # equal in their normal forms, unequal as documents (a default written out): compared in full
    assert alike(_documents(trafficManagerDomain=None), _documents(), {"service"}) == {}


def test_a_document_replaced_loses_its_digest() -> None:
    live = _documents()
    endpoint = live.of("endpoint")[0]
    assert endpoint.doc_digest is not None
    endpoint.doc = {**endpoint.doc, "requestPathAlias": "/v3"}
    assert endpoint.doc_digest is None
    assert alike(live, _documents(), {"service"}) == {}
