"""Rule functions for this platform's datetimes: ``datetime`` (``after``/``before``: an ISO 8601
datetime or ``now``) and ``interval`` (``start``, ``end``, ``maxDuration``, ``minDuration``: ISO
8601 durations such as ``PT12H``). Registered in :data:`apimctl.lint.functions.FUNCTIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from apimctl.lint.function_base import ABSENT, Context, OptionError, Result, show


def parse_datetime(text: Any) -> datetime | None:
    """An ISO 8601 datetime (UTC when it names no zone), or ``None``."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


_DURATION = re.compile(r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")


def parse_duration(text: Any) -> timedelta | None:
    """An ISO 8601 duration of weeks, days, hours, minutes and seconds (``PT12H``, ``P1D``)."""
    found = _DURATION.fullmatch(text) if isinstance(text, str) else None
    if found is None or not any(found.groups()) or text.endswith("T"):
        return None
    weeks, days, hours, minutes, seconds = (float(g) if g else 0.0 for g in found.groups())
    return timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)


def human(span: timedelta) -> str:
    """``timedelta(days=3, hours=2)`` -> ``3 days 2 hours``."""
    seconds = int(span.total_seconds())
    parts = []
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}" + ("s" if count != 1 else ""))
    return " ".join(parts) or "0 seconds"


def prepare_datetime(options: Mapping[str, Any]) -> dict[str, datetime | str]:
    out: dict[str, datetime | str] = {}
    for key in ("after", "before"):
        text = options.get(key)
        if text is None:
            continue
        moment = "now" if text == "now" else parse_datetime(text)
        if moment is None:
            raise OptionError((key,), f"expected now or an ISO 8601 datetime, got {show(text)}")
        out[key] = moment
    return out


def datetime_check(value: Any, options: Mapping[str, datetime | str], label: str,
                   ctx: Context) -> list[Result]:
    if value is ABSENT:
        return []
    moment = parse_datetime(value)
    if moment is None:
        return [((), f"{label} must be an ISO 8601 datetime (it is {show(value)})")]
    out: list[Result] = []
    after, before = options.get("after"), options.get("before")
    if after is not None:
        bound = ctx.now if after == "now" else after
        if isinstance(bound, datetime) and moment <= bound:
            what = "in the future" if after == "now" else f"after {bound.isoformat()}"
            out.append(((), f"{label} must be {what} (it is {value})"))
    if before is not None:
        bound = ctx.now if before == "now" else before
        if isinstance(bound, datetime) and moment >= bound:
            what = "in the past" if before == "now" else f"before {bound.isoformat()}"
            out.append(((), f"{label} must be {what} (it is {value})"))
    return out


def prepare_interval(options: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(options)
    for key in ("maxDuration", "minDuration"):
        if key in options:
            span = parse_duration(options[key])
            if span is None:
                raise OptionError((key,), f"expected an ISO 8601 duration such as PT12H or P1D, "
                                          f"got {show(options[key])}")
            out[key] = span
    return out


def interval(value: Any, options: Mapping[str, Any], label: str, ctx: Context) -> list[Result]:
    if not isinstance(value, dict):
        return []
    start_key, end_key = options["start"], options["end"]
    start, end = parse_datetime(value.get(start_key)), parse_datetime(value.get(end_key))
    if start is None or end is None:
        return []
    span = end - start
    if span <= timedelta(0):
        return [((end_key,), f"{label}: {end_key} must be after {start_key}")]
    longest, shortest = options.get("maxDuration"), options.get("minDuration")
    if longest is not None and span > longest:
        return [((end_key,), f"{label} lasts {human(span)}, longer than {human(longest)}")]
    if shortest is not None and span < shortest:
        return [((end_key,), f"{label} lasts {human(span)}, shorter than {human(shortest)}")]
    return []
