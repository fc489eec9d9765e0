"""Step 6, limits: the service's overall QPS, the key's QPS and its calls per rate period
(SUPPLEMENT §11.6), counted in memory per server process.

Ceilings: the plan's, or the key's own where the plan allows key overrides
(``qpsLimitKeyOverrideAllowed``, ``rateLimitKeyOverrideAllowed``; a key ceiling of null
means "the plan's"); an exempt flag of the plan or of the key removes the limit; a ceiling
of 0 or null is no limit. Windows are calendar windows of the traffic manager's clock (UTC):
the second for QPS, the plan's ``rateLimitPeriod`` (minute, hour, day, week from Monday,
month) for the rate. A refused call is not counted. With the endpoint's
``rateLimitHeadersEnabled`` the answer carries the ``X-Packagekey-*`` and
``X-Plan-Quota-Reset`` headers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from apimctl.server.traffic.key import KeyFound
from apimctl.server.traffic.model import Refused, Trace


def period_window(period: str, now: float) -> tuple[float, float]:
    """[start, end) of the calendar window of ``period`` holding ``now`` (UTC)."""
    return _window(period, int(now))  # windows start on whole minutes at least


@lru_cache(maxsize=64)
def _window(period: str, second: int) -> tuple[float, float]:
    moment = datetime.fromtimestamp(second, UTC)
    if period == "minute":
        start = moment.replace(second=0, microsecond=0)
        end = start + timedelta(minutes=1)
    elif period == "hour":
        start = moment.replace(minute=0, second=0, microsecond=0)
        end = start + timedelta(hours=1)
    elif period == "week":
        start = (moment - timedelta(days=moment.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
        end = start + timedelta(days=7)
    elif period == "month":
        start = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        end = (start + timedelta(days=32)).replace(day=1)
    else:  # day
        start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        end = start + timedelta(days=1)
    return start.timestamp(), end.timestamp()


def ceiling(plan: dict[str, Any], key: dict[str, Any], kind: str) -> int | None:
    """The effective ceiling of ``qps`` or ``rate`` for a key on a plan; None: no limit."""
    if plan.get(f"{kind}LimitExempt") is True or key.get(f"{kind}LimitExempt") is True:
        return None
    value = plan.get(f"{kind}LimitCeiling")
    own = key.get(f"{kind}LimitCeiling")
    if own is not None and plan.get(f"{kind}LimitKeyOverrideAllowed") is True:
        value = own
    return value if isinstance(value, int) and value > 0 else None


@dataclass
class Window:
    start: float = 0.0
    count: int = 0

    def current(self, start: float) -> int:
        return self.count if self.start == start else 0

    def add(self, start: float) -> None:
        if self.start != start:
            self.start, self.count = start, 0
        self.count += 1


@dataclass
class Usage:
    """What the limits step decided (for the trace and the rate-limit headers)."""

    qps: tuple[int, int] | None = None  # (current, allotted)
    rate: tuple[int, int, float] | None = None  # (current, allotted, reset time)
    headers: list[tuple[str, str]] = field(default_factory=list)


class Limits:
    """The counters of one server process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, ...], Window] = {}

    def _window(self, *name: str) -> Window:
        return self._windows.setdefault(name, Window())

    def reset(self) -> None:
        with self._lock:
            self._windows.clear()

    def check(self, area: str, service: dict[str, Any], endpoint: dict[str, Any], found: KeyFound,
              now: float, trace: Trace) -> Usage:
        with self._lock:
            return self._check(area, service, endpoint, found, now, trace)

    def _check(self, area: str, service: dict[str, Any], endpoint: dict[str, Any], found: KeyFound,
               now: float, trace: Trace) -> Usage:
        second = float(int(now))
        usage = Usage()
        overall = service.get("qpsLimitOverall")
        service_window = self._window(area, "service", str(service.get("id")))
        if isinstance(overall, int) and overall > 0 and service_window.current(second) >= overall:
            raise Refused("limits", "ERR_403_SERVICE_OVER_QPS",
                          f"service over {overall} calls per second", [("Retry-After", "1")])
        key, plan = found.key, found.plan
        texts: list[str] = []
        key_windows: list[tuple[Window, float]] = [(service_window, second)]
        if key is not None and plan is not None:
            qps = ceiling(plan, key, "qps")
            qps_window = self._window(area, "qps", found.value)
            if qps is not None:
                used = qps_window.current(second)
                if used >= qps:
                    raise Refused("limits", "ERR_403_DEVELOPER_OVER_QPS",
                                  f"key over {qps} calls per second", [("Retry-After", "1")])
                usage.qps = (used + 1, qps)
                texts.append(f"{used + 1} of {qps} per second")
                key_windows.append((qps_window, second))
            rate = ceiling(plan, key, "rate")
            period = str(plan.get("rateLimitPeriod") or "day")
            start, end = period_window(period, now)
            rate_window = self._window(area, "rate", found.value, period)
            if rate is not None:
                used = rate_window.current(start)
                if used >= rate:
                    raise Refused("limits", "ERR_403_DEVELOPER_OVER_RATE",
                                  f"key over {rate} calls per {period}")
                usage.rate = (used + 1, rate, end)
                texts.append(f"{used + 1} of {rate} per {period}")
                key_windows.append((rate_window, start))
        for window, start in key_windows:
            window.add(start)
        if overall and isinstance(overall, int) and overall > 0:
            texts.insert(0, f"service {service_window.count} of {overall} per second")
        trace.add("limits", "; ".join(texts) if texts else "no limit applies")
        if endpoint.get("rateLimitHeadersEnabled") is True:
            usage.headers = rate_headers(usage)
        return usage


def rate_headers(usage: Usage) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    if usage.qps:
        headers += [("X-Packagekey-Qps-Allotted", str(usage.qps[1])), ("X-Packagekey-Qps-Current", str(usage.qps[0]))]
    if usage.rate:
        reset = datetime.fromtimestamp(usage.rate[2], UTC).strftime("%A, %B %d, %Y %I:%M:%S %p GMT")
        headers += [("X-Packagekey-Quota-Allotted", str(usage.rate[1])),
                    ("X-Packagekey-Quota-Current", str(usage.rate[0])), ("X-Plan-Quota-Reset", reset)]
    return headers
