"""Pure parts of the traffic manager: method detection in each location, calendar windows of
the rate limits, effective ceilings, instants of maintenance windows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apimctl.server.traffic.area import Area
from apimctl.server.traffic.entitlement import detect_method
from apimctl.server.traffic.limits import ceiling, period_window
from apimctl.server.traffic.maintenance import instant
from apimctl.server.traffic.model import Call


def _call(path: str = "/api/v1/forecast/daily", query: list[tuple[str, str]] | None = None,
          headers: list[tuple[str, str]] | None = None, body: bytes = b"") -> Call:
    return Call("GET", "https", "api.example.com", path, query or [], [("Host", "api.example.com"), *(headers or [])],
                body, 0.0)


@pytest.mark.parametrize(("locations", "key", "call", "expected"), [
    (["request-path"], "", _call(), "forecast/daily"),
    (["request-path"], "3 4", _call(), "forecast/daily"),
    (["request-path"], "4", _call(), "daily"),
    (["request-parameters"], "m", _call(query=[("m", "hourly")]), "hourly"),
    (["request-header"], "X-Method", _call(headers=[("X-Method", "weekly")]), "weekly"),
    (["request-body"], "method", _call(headers=[("Content-Type", "application/json")], body=b'{"method": "x"}'), "x"),
    (["request-parameters", "request-header"], "m", _call(headers=[("m", "fallback")]), "fallback"),
    (["custom"], "m", _call(query=[("m", "ignored")]), None),
])
def test_method_detection(locations: list[str], key: str, call: Call, expected: str | None) -> None:
    endpoint = {"apiMethodDetectionLocations": locations, "apiMethodDetectionKey": key}
    assert detect_method(call, endpoint, "/forecast/daily") == expected


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("period", "start", "end"), [
    ("minute", "2030-01-09T10:15:00", "2030-01-09T10:16:00"),
    ("hour", "2030-01-09T10:00:00", "2030-01-09T11:00:00"),
    ("day", "2030-01-09T00:00:00", "2030-01-10T00:00:00"),
    ("week", "2030-01-07T00:00:00", "2030-01-14T00:00:00"),  # from Monday
    ("month", "2030-01-01T00:00:00", "2030-02-01T00:00:00"),
])
def test_rate_windows_are_calendar_windows(period: str, start: str, end: str) -> None:
    assert period_window(period, _at("2030-01-09T10:15:42")) == (_at(start), _at(end))


def test_effective_ceilings() -> None:
    plan = {"qpsLimitCeiling": 5, "qpsLimitKeyOverrideAllowed": False}
    assert ceiling(plan, {"qpsLimitCeiling": 50}, "qps") == 5  # no override: the plan's
    assert ceiling({**plan, "qpsLimitKeyOverrideAllowed": True}, {"qpsLimitCeiling": 50}, "qps") == 50
    assert ceiling({**plan, "qpsLimitKeyOverrideAllowed": True}, {"qpsLimitCeiling": None}, "qps") == 5
    assert ceiling({**plan, "qpsLimitExempt": True}, {}, "qps") is None
    assert ceiling(plan, {"qpsLimitExempt": True}, "qps") is None
    assert ceiling({"qpsLimitCeiling": 0}, {}, "qps") is None
    assert ceiling({"qpsLimitCeiling": None}, {}, "qps") is None


def test_instants_of_both_renderings() -> None:
    assert instant("2027-01-16T02:00:00Z") == instant("2027-01-16T02:00:00.000+0000") == _at("2027-01-16T02:00:00")
    assert instant("not a time") is None


def test_allow_missing_key_needs_the_noapikey_key() -> None:
    from apimctl.server.traffic.key import find_key
    from apimctl.server.traffic.model import Refused, Trace

    endpoint = {"allowMissingApiKey": True, "apiKeyValueLocations": ["request-parameters"],
                "apiKeyValueLocationKey": "api_key"}
    with pytest.raises(Refused) as refused:
        find_key(_call("/v1"), Area("a"), endpoint, Trace(""))
    assert refused.value.message_id == "ERR_403_DEVELOPER_INACTIVE"
    assert "the area has no key noapikey" in refused.value.reason
