"""Step 3, maintenance: a scheduled maintenance event whose window contains the call's time
and whose endpoints include this one answers ``ERR_503_SERVICE_UNAVAILABLE`` (SUPPLEMENT
§11.3). The window is ``[startDateTime, endDateTime)``; a time without a zone is UTC."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from apimctl.platform import epoch_seconds
from apimctl.server.traffic.model import Refused, Trace

instant = epoch_seconds  # ``Z``, ``+0000`` or no zone (UTC)


def iso(seconds: float) -> str:
    return _iso(math.floor(seconds))


@lru_cache(maxsize=16)  # the call log writes the time of every call: once per second is enough
def _iso(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_maintenance(events: list[dict[str, Any]], endpoint: dict[str, Any], now: float,
                      trace: Trace) -> None:
    for event in events:
        if not any(ref.get("id") == endpoint.get("id") for ref in event.get("endpoints") or []):
            continue
        start, end = instant(event.get("startDateTime")), instant(event.get("endDateTime"))
        if start is not None and end is not None and start <= now < end:
            raise Refused("maintenance", "ERR_503_SERVICE_UNAVAILABLE",
                          f"inside maintenance window {event.get('name')!r} "
                          f"({event.get('startDateTime')} to {event.get('endDateTime')})")
    trace.add("maintenance", "none scheduled now")
