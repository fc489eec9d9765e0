"""What ``apimctl doctor`` checks before a plan or an apply: can this area be reached?

One call to the management API tells whether the URL answers and the credentials (a token,
or the token exchange) are accepted; then the dialect the target speaks, the quota headers its
replies carry (the traffic manager's ``X-Packagekey-*``, ``X-Plan-Quota-Reset``) and the apply
lease (the role the applies take). Each check is one :class:`Check`, in that order; a check
that cannot run because an earlier one failed says so. Nothing is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal

from apimctl import kinds
from apimctl.api.dialect import detect
from apimctl.applying import lease
from apimctl.errors import ApiError, ApimctlError, AuthError, NotFound, QuotaExhausted, Throttled

Status = Literal["ok", "warn", "fail", "skip"]
QUOTA_HEADERS = ("x-packagekey-qps-allotted", "x-packagekey-qps-current",
                 "x-packagekey-quota-allotted", "x-packagekey-quota-current", "x-plan-quota-reset",
                 "retry-after")
# the kind the first call lists (``ROLES.probe``): one object of it, its id only
_PROBED = kinds.ROLES.probe


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, how it went, and what to do."""

    name: str
    status: Status
    detail: str


@dataclass(frozen=True)
class Target:
    """What the checks are told of the target: its label, how it authenticates, and the
    client's own rate limit (``None``: none)."""

    label: str
    exchange: bool
    qps: float | None


def _skipped(names: tuple[str, ...], why: str) -> list[Check]:
    return [Check(name, "skip", f"not checked ({why})") for name in names]


async def diagnose(connect: Callable[[], AbstractAsyncContextManager[Any]], target: Target,
                   headers: Callable[[], Mapping[str, str]],
                   clock: Callable[[], float] = time.monotonic) -> list[Check]:
    """Every check, in order. ``headers``: the headers of the replies seen so far (the CLI
    observes them on the client's transport)."""
    credential = "token exchange" if target.exchange else "token"
    checks: list[Check] = []
    async with connect() as client:
        started = clock()
        try:
            await client.get(_PROBED.collection_path(), {"fields": "id", "limit": 1})
        except ApimctlError as exc:
            return [*_first_call_failed(exc, target, credential),
                    *_skipped(("dialect", "quota", "lease"), "no answer from the API")]
        elapsed = (clock() - started) * 1000
        checks.append(Check("url", "ok", f"{target.label} answers ({elapsed:.0f} ms)"))
        checks.append(Check(credential, "ok", "accepted" + (
            ": an access token was issued" if target.exchange else "")))
        checks.append(await _dialect(client))
        checks.append(_quota(headers(), target.qps))
        checks.append(await _lease(client))
    return checks


def _first_call_failed(exc: ApimctlError, target: Target, credential: str) -> list[Check]:
    if isinstance(exc, AuthError):
        return [Check("url", "ok", f"{target.label} answers"),
                Check(credential, "fail", f"refused: {exc}")]
    if isinstance(exc, NotFound):
        return [Check("url", "fail", f"{target.label}: 404, not the management API: the URL "
                                     "should end in /v3/rest (https://HOST/v3/rest)"),
                *_skipped((credential,), "no API at this URL")]
    if isinstance(exc, Throttled | QuotaExhausted):
        return [Check("url", "ok", f"{target.label} answers"),
                Check(credential, "ok", "accepted"),
                Check("quota", "fail", str(exc))]
    what = str(exc) if isinstance(exc, ApiError) else f"{type(exc).__name__}: {exc}"
    return [Check("url", "fail", f"{target.label}: {what}"),
            *_skipped((credential,), "no answer from the API")]


async def _dialect(client: Any) -> Check:
    try:
        found = await detect(client)
    except ApimctlError as exc:
        return Check("dialect", "warn", f"not detected: {exc}")
    return Check("dialect", "ok", f"{found.name} ({found.reason})")


def _quota(seen: Mapping[str, str], qps: float | None) -> Check:
    own = f"apimctl's own limit: {qps:g} calls/s" if qps else "apimctl's own limit: off"
    found = {name: seen[name] for name in QUOTA_HEADERS if name in seen}
    if not found:
        return Check("quota", "ok", f"no quota headers in the replies ({own})")
    parts = []
    if "x-packagekey-quota-current" in found or "x-packagekey-quota-allotted" in found:
        parts.append(f"{found.get('x-packagekey-quota-current', '?')} of "
                     f"{found.get('x-packagekey-quota-allotted', '?')} calls used")
    if "x-packagekey-qps-allotted" in found:
        parts.append(f"{found['x-packagekey-qps-allotted']} calls/s allowed")
    if "x-plan-quota-reset" in found:
        parts.append(f"resets {found['x-plan-quota-reset']}")
    if "retry-after" in found:
        parts.append(f"throttled: retry after {found['retry-after']} s")
    status: Status = "warn" if _nearly_used(found) or "retry-after" in found else "ok"
    return Check("quota", status, f"{'; '.join(parts)} ({own})")


def _nearly_used(found: Mapping[str, str]) -> bool:
    try:
        used = float(found["x-packagekey-quota-current"])
        allotted = float(found["x-packagekey-quota-allotted"])
    except (KeyError, ValueError):
        return False
    return allotted > 0 and used >= 0.9 * allotted


async def _lease(client: Any) -> Check:
    try:
        holder = await lease.find(client)
    except ApimctlError as exc:
        return Check("lease", "warn", f"cannot read the apply lease: {exc}")
    if holder is None:
        return Check("lease", "ok", "free: no apply is running")
    if holder.expired(time.time()):
        return Check("lease", "warn", f"left by {holder.describe()}, expired: the next apply "
                                      "takes it over (or: apimctl unlock)")
    return Check("lease", "warn", f"held by {holder.describe()}: an apply is running "
                                  "(or was killed: apimctl unlock RUN_ID)")
