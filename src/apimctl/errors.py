"""The one error hierarchy of the reconciler.

Core modules raise these; only the CLI (``apimctl.cli``) catches them, prints their message
and maps them to exit codes. A message always says where and what.

    ApimctlError
    ├── ManifestError        invalid input (YAML, schema, references); carries all problems
    ├── ApiError             the management API refused or failed
    │   ├── AuthError        401 / token exchange refused
    │   ├── NotFound         404
    │   ├── Invalid          400 validation (items name the property)
    │   ├── Throttled        ERR_403_DEVELOPER_OVER_QPS (retryable, honours Retry-After)
    │   ├── QuotaExhausted   ERR_403_DEVELOPER_OVER_RATE (stop, never retried)
    │   ├── ServerError      5xx or an unreadable reply (retryable)
    │   ├── TransportError   timeout, dropped connection (retryable; outcome unknown)
    │   ├── IncompleteRead   a list read gave fewer objects than its X-Total-Count (never planned from)
    │   └── Unreachable      connections refused in a row: the server is gone (stop, not sent)
    ├── PlanError            a plan cannot be made or is refused (stale, too many deletes)
    └── ApplyError           apply stopped; carries the summary
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ApimctlError(Exception):
    """Base of every error apimctl raises on purpose."""

    exit_code = 1


@dataclass(frozen=True)
class Problem:
    """One located problem in the input: ``file:line:col: path: message``."""

    file: str
    line: int
    col: int
    path: str
    message: str
    severity: str = "error"  # "error" | "warning"

    def __str__(self) -> str:
        # line 0: the problem is about the whole file or directory, not a place in it
        where = (f"{self.file}:{self.line}:{self.col}" if self.line else self.file) if self.file else "<input>"
        path = f" {self.path}:" if self.path else ""
        return f"{where}:{path} {self.message}"


class ManifestError(ApimctlError):
    """The manifests are invalid; ``problems`` holds every problem found in the run."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.col, p.path))
        errors = [p for p in self.problems if p.severity == "error"]
        super().__init__("\n".join(str(p) for p in errors) or "invalid manifests")


@dataclass
class ApiError(ApimctlError):
    """The management API answered with an error (or not at all)."""

    message: str
    status: int | None = None
    method: str | None = None
    url: str | None = None
    items: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class AuthError(ApiError):
    pass


class NotFound(ApiError):
    pass


class Invalid(ApiError):
    pass


@dataclass
class Throttled(ApiError):
    retry_after: float | None = None


class QuotaExhausted(ApiError):
    pass


class ServerError(ApiError):
    pass


class TransportError(ApiError):
    """No usable reply: the request may or may not have been carried out."""


class IncompleteRead(ApiError):
    """A list read twice over gave fewer distinct objects than ``X-Total-Count`` announced
    (short or repeated pages, SUPPLEMENT §10.10.9): nothing may be planned from it."""


class Unreachable(ApiError):
    """The server is gone: several connection attempts in a row failed, so the client sends
    nothing more (the request was not carried out). Never retried; an apply stops."""


def is_retryable(exc: BaseException) -> bool:
    """Retry is a type, not a guess: 5xx, transport failures and throttling only."""
    return isinstance(exc, ServerError | TransportError | Throttled)


class PlanError(ApimctlError):
    pass


class ApplyError(ApimctlError):
    exit_code = 3
