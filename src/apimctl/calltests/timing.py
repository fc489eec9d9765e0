"""Time in call tests: instants written in test files, and the virtual clock of an embedded
run (calls at a given time, a stub's delay moving the clock instead of waiting)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from apimctl.platform import epoch_seconds

# the instants a virtual clock can show: those the traffic manager can write down (its call
# log and maintenance windows print them as ISO 8601, years 1970 to 9999)
EARLIEST, LATEST = 0.0, datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


class ClockError(ValueError):
    """The virtual clock was asked to leave the instants it can show."""


def parse_instant(value: str) -> float | None:
    """Seconds since the epoch of an ISO 8601 date-time (no zone: UTC); None if it is not one."""
    return epoch_seconds(value)


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace(".000000Z", "Z")


class VirtualClock:
    """A clock that moves only when told: ``set`` to an instant, ``advance`` by seconds."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def set(self, instant: float) -> None:
        if not (math.isfinite(instant) and EARLIEST <= instant <= LATEST):
            raise ClockError(f"the virtual clock runs from {iso(EARLIEST)} to {iso(LATEST)}")
        self.now = instant

    def advance(self, seconds: float) -> None:
        self.set(self.now + seconds)
