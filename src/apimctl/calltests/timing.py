"""Time in call tests: instants written in test files, and the virtual clock of an embedded
run (calls at a given time, a stub's delay moving the clock instead of waiting)."""

from __future__ import annotations

from datetime import UTC, datetime

from apimctl.platform import epoch_seconds


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
        self.now = instant

    def advance(self, seconds: float) -> None:
        self.now += seconds
