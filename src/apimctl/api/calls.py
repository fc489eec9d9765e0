"""What the client counts and when it gives up: call statistics and the circuit breaker.

Used by :class:`apimctl.api.client.ApiClient` for every request it sends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from apimctl.errors import ApiError, Unreachable

_READS = frozenset({"GET", "HEAD"})

# the daily quota as the platform tells it: the traffic manager in front of the API adds these
# to its answers when the key's package has rate-limit headers on (SUPPLEMENT §10 fact 1, and
# the traffic manager's limits, "with rateLimitHeadersEnabled"); the reset time is written as
# ``Tuesday, February 02, 2027 12:00:00 AM GMT``
QUOTA_ALLOTTED = "X-Packagekey-Quota-Allotted"
QUOTA_CURRENT = "X-Packagekey-Quota-Current"
QUOTA_RESET = "X-Plan-Quota-Reset"
_RESET_FORMAT = "%A, %B %d, %Y %I:%M:%S %p GMT"


@dataclass
class QuotaSeen:
    """The daily quota as the last answer that carried the quota headers told it: calls
    ``allotted`` per day, the ``current`` count, and when it resets (``None``: not told)."""

    allotted: int | None = None
    current: int | None = None
    reset: datetime | None = None

    def observe(self, headers: Mapping[str, str]) -> None:
        """Take the quota headers of one answer (an answer without them changes nothing)."""
        allotted, current = _count(headers.get(QUOTA_ALLOTTED)), _count(headers.get(QUOTA_CURRENT))
        if allotted is None or current is None:
            return
        self.allotted, self.current = allotted, current
        try:
            self.reset = datetime.strptime(str(headers.get(QUOTA_RESET, "")).strip(),
                                           _RESET_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            self.reset = None

    @property
    def left(self) -> int | None:
        """The calls left today, as told (``None``: no answer told it)."""
        if self.allotted is None or self.current is None:
            return None
        return max(0, self.allotted - self.current)


def _count(value: str | None) -> int | None:
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number >= 0 else None


@dataclass
class CallStats:
    """Management API requests actually sent (every retry counts), per (METHOD, path)."""

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    token_calls: int = 0  # token exchanges, kept apart from the management API calls
    quota: QuotaSeen = field(default_factory=QuotaSeen)  # the daily quota, as answers tell it

    def record(self, method: str, path: str) -> None:
        self.calls[(method, path)] += 1

    def reads(self) -> int:
        return sum(n for (method, _), n in self.calls.items() if method in _READS)

    def writes(self) -> int:
        return sum(n for (method, _), n in self.calls.items() if method not in _READS)

    def total(self) -> int:
        return sum(self.calls.values())


class Breaker:
    """Fails every call at once after ``threshold`` connection failures in a row.

    A dead server answers nothing: without this, every call of an apply retried on its own with
    backoff (minutes, and over a thousand attempts). Failures to connect count (refused, reset,
    DNS, a connect timeout), and so does a call that got no complete reply within its total
    deadline (a server that accepts connections and answers nothing, or drips its reply, is as
    dead as one that refuses); any reply, even a 5xx, resets the count, and a dropped response
    neither counts nor resets. Once open it stays open for the client's life
    (one command): the server may come back, but this run has given up on it.
    """

    def __init__(self, host: str, threshold: int = 3) -> None:
        self.host, self.threshold = host, max(1, threshold)
        self.failures = 0  # calls failed in a row (what opens the breaker)
        self.attempts = 0  # attempts sent for them (one token exchange may stand for many calls)
        self.last = ""
        self.open = False

    def check(self, where: str) -> None:
        """Raise ``Unreachable`` when the breaker is open (nothing is sent)."""
        if self.open:
            raise Unreachable(
                f"{where}: not sent: {self.host} is unreachable ({self._count()}, the last: "
                f"{self.last}); giving up on it",
                method=where.split(" ", 1)[0],
            )

    def _count(self) -> str:
        said = f"{self.attempts} connection attempt{'' if self.attempts == 1 else 's'} in a row failed"
        return said if self.attempts == self.failures else f"{said}, for {self.failures} calls"

    def failed(self, error: ApiError, calls: int = 1) -> None:
        """Count a failed attempt; ``calls``: the calls it failed for (a token exchange that
        timed out fails every call waiting for its token)."""
        self.failures += max(1, calls)
        self.attempts += 1
        self.last = error.message.split(": ", 1)[-1]
        self.open = self.open or self.failures >= self.threshold

    def succeeded(self) -> None:
        if not self.open:
            self.failures = self.attempts = 0
