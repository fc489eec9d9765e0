"""Steps 6-7 of SUPPLEMENT §11 through the traffic listener, in both dialects: the key's QPS
and rate limits on the virtual clock, key overrides, exempt plans, the service's overall QPS,
the rate-limit headers (mashery's ``rateLimitHeadersEnabled``); CORS pre-flights allowed and
refused, and the headers of an actual call."""

from __future__ import annotations

from .support import Area

ORIGIN = "https://app.example.com"


def _codes(area: Area, path: str, times: int) -> list[str]:
    out = []
    for _ in range(times):
        response = area.call("GET", path)
        out.append(response.headers.get(area.error_header, str(response.status_code)))
    return out


def test_key_qps_is_counted_per_second(area: Area) -> None:
    area.clock.now = float(int(area.clock.now) + 100)
    path = f"/v2/forecast?api_key={area.keys['gold2']}"
    assert _codes(area, path, 4) == ["200", "200", "200", "ERR_403_DEVELOPER_OVER_QPS"]
    refused = area.call("GET", path)
    assert refused.status_code == 403
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["x-error-detail-header"] == "Slow down"  # the endpoint's set
    assert refused.json() == {"error": "slow down"}
    area.clock.now += 1
    assert area.call("GET", path).status_code == 200


def test_key_rate_is_counted_per_period(area: Area) -> None:
    start = (int(area.clock.now) // 60 + 10) * 60
    path = f"/v2/forecast?api_key={area.keys['gold3']}"
    codes = []
    for second in range(6):
        area.clock.now = float(start + second)
        response = area.call("GET", path)
        codes.append(response.headers.get(area.error_header, str(response.status_code)))
    assert codes == ["200"] * 5 + ["ERR_403_DEVELOPER_OVER_RATE"]
    area.clock.now = float(start + 60)
    assert area.call("GET", path).status_code == 200


def test_a_key_ceiling_counts_where_the_plan_allows_overrides(area: Area) -> None:
    area.clock.now = float(int(area.clock.now) + 100)
    path = f"/v2/forecast?api_key={area.keys['flex']}"  # Flex: 1 per second, key: 4
    assert _codes(area, path, 5) == ["200"] * 4 + ["ERR_403_DEVELOPER_OVER_QPS"]


def test_exempt_plans_are_not_limited(area: Area) -> None:
    area.clock.now = float(int(area.clock.now) + 100)
    assert _codes(area, f"/v2/forecast?api_key={area.keys['free']}", 6) == ["200"] * 6


def test_service_overall_qps_is_rendered_with_the_default_set(area: Area) -> None:
    area.clock.now = float((int(area.clock.now) // 60 + 10) * 60)
    path = f"/v2/busy?api_key={area.keys['gold']}"
    assert _codes(area, path, 3) == ["200", "200", "ERR_403_SERVICE_OVER_QPS"]
    refused = area.call("GET", path)
    assert refused.status_code == 403
    # the service's only set is the default one a new service gets (SUPPLEMENT §3)
    assert refused.headers["content-type"] == "application/json"
    assert refused.json() == {"errorCode": "ERR_403_SERVICE_OVER_QPS", "errorMessage": "Forbidden"}
    detail = refused.headers.get("x-error-detail-header")
    assert detail == ("Rate Limit Exceeded" if area.dialect == "mashery" else None)  # §10.5 defaults


def test_rate_limit_headers(area: Area) -> None:
    area.clock.now = float((int(area.clock.now) // 60 + 10) * 60)
    response = area.call("GET", f"/v2/counted?api_key={area.keys['gold']}")
    assert response.status_code == 200
    if area.dialect == "mashery":
        assert response.headers["x-packagekey-qps-allotted"] == "3"
        assert response.headers["x-packagekey-qps-current"] == "1"
        assert response.headers["x-packagekey-quota-allotted"] == "5"
        assert response.headers["x-packagekey-quota-current"] == "1"
        assert response.headers["x-plan-quota-reset"].endswith("GMT")
    else:
        assert "x-packagekey-qps-allotted" not in response.headers


def _preflight(area: Area, origin: str, method: str = "GET", headers: str = "") -> dict[str, str]:
    extra = {"Access-Control-Request-Headers": headers} if headers else {}
    response = area.call("OPTIONS", "/v2/forecast", headers={
        "Origin": origin, "Access-Control-Request-Method": method, **extra})
    return {"status": str(response.status_code), **{k.lower(): v for k, v in response.headers.items()}}


def test_cors_preflight_allowed(area: Area) -> None:
    answer = _preflight(area, ORIGIN, "POST", "X-Api-Key")
    assert answer["status"] == "200"
    assert answer["access-control-allow-origin"] == ORIGIN
    assert answer["access-control-allow-methods"] == "GET, POST"
    assert answer["access-control-allow-headers"] == "X-Api-Key"
    assert answer["access-control-max-age"] == "60"
    assert answer["access-control-allow-credentials"] == "true"
    assert _preflight(area, "https://eu.app.example.com")["status"] == "200"  # sub-domain matching


def test_cors_preflight_refused(area: Area) -> None:
    for answer in (_preflight(area, "https://evil.example.org"), _preflight(area, "http://app.example.com"),
                   _preflight(area, ORIGIN, "GET", "X-Other"), _preflight(area, ORIGIN, "DELETE")):
        assert answer["status"] in ("403", "405")
        assert "access-control-allow-origin" not in answer


def test_cors_headers_of_an_actual_call(area: Area) -> None:
    key = area.keys["free"]
    allowed = area.call("GET", f"/v2/forecast?api_key={key}", headers={"Origin": ORIGIN})
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    assert allowed.headers["access-control-expose-headers"] == "X-Backend"
    other = area.call("GET", f"/v2/forecast?api_key={key}", headers={"Origin": "https://evil.example.org"})
    assert other.status_code == 200
    assert "access-control-allow-origin" not in other.headers
