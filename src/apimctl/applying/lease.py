"""The apply lease: one apply at a time per area, with nothing but the management API.

Two pipelines applying to one area at once create duplicates (both see an object missing and
both create it). ``apply`` therefore takes an area-wide lease before its first write and
releases it at the end, like Terraform's state lock.

The lease is a **role** named :data:`LEASE_NAME` (the kind holding the role
``ROLES.lease``: :data:`LEASE_KIND`): role names are unique in an area, so its
creation is atomic on the platform (a second create is refused as a duplicate). Its
``description`` holds who holds it and until when (JSON: user, host, start time, the run's id,
expiry). The holder renews the expiry while the apply runs; a lease whose expiry has passed is
stale and the next apply takes it over (deleting it by id, so two takers cannot both win).
Every read of the role names the fields it needs (:data:`LEASE_FIELDS`): a real area may leave
a role's ``description`` out unless asked (SUPPLEMENT 10.10.8). A lease whose description
cannot be read (missing, or not ours to parse) is held until its ``updated`` time (else
``created``) plus the lifetime, and never taken over before; this run knows its own by the
role's id. ``apimctl unlock`` deletes it by hand (like ``terraform force-unlock``). The role is
visible in the platform's administration pages and under ``GET /roles``; planning never shows
or prunes it (``ROLES.reserved``).

Fencing (:mod:`apimctl.applying.fence`): the writes of the apply go through a client that
sends nothing unless the lease is known to be held (:meth:`Lease.hold`), confirming it first
when the last confirmation is older than a third of its lifetime; a lease lost (broken, taken
over after this run was paused past its lifetime) stops the apply.

Called by the apply command (:mod:`apimctl.applying.command`) and by ``apimctl unlock``
(:func:`break_lease`, the core of ``apimctl.cli.unlock``).
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import math
import os
import socket
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from apimctl import kinds
from apimctl.applying.fence import LeaseLost, Term, elapsed
from apimctl.errors import (
    ApiError,
    ApimctlError,
    Invalid,
    NotFound,
    QuotaExhausted,
    ServerError,
    TransportError,
)
from apimctl.state.normalise import canonical_datetime

DEFAULT_TTL = 120.0  # seconds a lease lives without renewal
POLL = 2.0  # seconds between tries while waiting for a held lease
CREATE_TRIES = 5  # POSTs of the lease when one's outcome is unknown or it vanished meanwhile
LEASE_FIELDS = "id,name,description,updated,created"  # named: a description may not come unasked
_PREFIX = "apimctl apply lease "
# the kind whose one object is the lease, and that object's identity (``ROLES.lease``)
LEASE_KIND = kinds.ROLES.lease
LEASE_NAME = kinds.ROLES.lease_name


class LeaseClient(Protocol):
    """The part of ``apimctl.api.client.ApiClient`` the lease uses."""

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]: ...
    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]: ...
    async def put(self, path: str, body: Any, params: Any = None) -> Any: ...
    async def delete(self, path: str) -> None: ...


@dataclass(frozen=True)
class Holder:
    """Who holds the lease (as written in the role's description). ``readable`` is false for
    a role whose description could not be read: it is held until its ``updated`` time (else
    ``created``) plus the lifetime (``inf`` when it shows neither)."""

    user: str
    host: str
    started: str
    run_id: str
    expires: float  # seconds since the epoch
    role_id: str = ""
    readable: bool = True

    def describe(self) -> str:
        if not self.readable:
            return f"an apply whose lease (role id {self.role_id or '?'}) has no readable description"
        return f"{self.user}@{self.host}, run {self.run_id}, started {self.started}"

    def expired(self, now: float) -> bool:
        return self.expires <= now

    def text(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if k not in ("role_id", "readable")}
        return _PREFIX + json.dumps(fields, sort_keys=True)

    @classmethod
    def parse(cls, role: dict[str, Any], ttl: float = DEFAULT_TTL) -> Holder:
        """The holder a lease role describes; see :func:`unreadable` for one it does not."""
        text = str(role.get("description") or "")
        try:
            data = json.loads(text.removeprefix(_PREFIX))
            return cls(str(data["user"]), str(data["host"]), str(data["started"]),
                       str(data["run_id"]), float(data["expires"]), str(role.get("id", "")))
        except (ValueError, KeyError, TypeError, AttributeError):
            return unreadable(role, ttl)


def unreadable(role: dict[str, Any], ttl: float) -> Holder:
    """A lease role without a readable description: held until its last write (``updated``,
    else ``created``) plus ``ttl``; never taken over earlier (another run may be renewing it)."""
    last = _epoch(role.get("updated")) or _epoch(role.get("created"))
    expires = last + ttl if last is not None else math.inf
    return Holder("?", "?", "?", "?", expires, str(role.get("id", "")), readable=False)


def _epoch(value: Any) -> float | None:
    text = canonical_datetime(value)
    if not isinstance(text, str) or not text:
        return None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()


class LeaseHeld(ApimctlError):
    """Another apply holds the area's lease."""

    def __init__(self, holder: Holder, waited: float) -> None:
        self.holder = holder
        wait = f" (waited {waited:.0f}s)" if waited >= 1 else ""
        until = ("until it is broken by hand" if not math.isfinite(holder.expires) else
                 datetime.fromtimestamp(holder.expires, UTC).strftime("until %Y-%m-%dT%H:%M:%SZ"))
        unlock = f"apimctl unlock {holder.run_id}" if holder.readable else "apimctl unlock --force"
        super().__init__(
            f"another apply holds this area's lease{wait}: {holder.describe()}, "
            f"held {until} unless renewed. Wait for it (--lock-timeout SECONDS), or, if "
            f"that run is gone, break the lease with `{unlock}` "
            f"(the lease is the {LEASE_KIND.label} {LEASE_NAME!r})")


def _now_text(clock: Callable[[], float]) -> str:
    return datetime.fromtimestamp(clock(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_holder(clock: Callable[[], float] = time.time, ttl: float = DEFAULT_TTL) -> Holder:
    """A holder for this process: the user, the host, the time and a fresh run id."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER", "unknown")
    return Holder(user, socket.gethostname(), _now_text(clock), uuid.uuid4().hex[:12], clock() + ttl)


async def find(client: LeaseClient, ttl: float = DEFAULT_TTL) -> Holder | None:
    """The current lease of the area, if any (its fields named: :data:`LEASE_FIELDS`)."""
    roles = await client.list_all(LEASE_KIND.collection_path(),
                                  {"filter": f"name:{LEASE_NAME}", "fields": LEASE_FIELDS},
                                  page_index=LEASE_KIND.page_index)
    found = [r for r in roles if r.get("name") == LEASE_NAME]
    return Holder.parse(found[0], ttl) if found else None


async def unlock(client: LeaseClient, run_id: str | None = None) -> Holder | None:
    """Break the lease (only the one of ``run_id`` when given); the holder it had, if any."""
    holder = await find(client)
    if holder is None:
        return None
    if run_id is not None and holder.run_id != run_id:
        raise ApimctlError(f"the lease is held by run {holder.run_id} ({holder.describe()}), "
                           f"not {run_id}: nothing was unlocked")
    with contextlib.suppress(NotFound):
        await client.delete(LEASE_KIND.item_path(holder.role_id))
    return holder


@dataclass(frozen=True)
class Unlocked:
    """What ``apimctl unlock`` found and did: the lease's ``holder`` (``None``: none was held)
    and whether it was ``broken`` (not when the confirmation was declined)."""

    holder: Holder | None
    broken: bool


async def break_lease(connect: Callable[[], AbstractAsyncContextManager[LeaseClient]],
                      run_id: str | None = None, *,
                      confirm: Callable[[Holder], bool] | None = None) -> Unlocked:
    """``apimctl unlock`` as a function: break the lease of ``run_id``, or (without it) the
    one held now, after ``confirm(holder)`` when given."""
    async with connect() as client:
        if run_id is not None:
            holder = await unlock(client, run_id)
            return Unlocked(holder, holder is not None)
        held = await find(client)
        if held is None or (confirm is not None and not confirm(held)):
            return Unlocked(held, False)
        return Unlocked(await unlock(client, held.run_id), True)


class Lease:
    """The area's lease for one apply: ``async with Lease(client): ...``.

    ``clock`` is the wall clock the expiry written in the role is read against; ``ticks``
    the monotonic one that says how long ago this run last confirmed it holds the lease
    (its :class:`~apimctl.applying.fence.Term`): both injectable for tests."""

    def __init__(self, client: LeaseClient, *, timeout: float = 0.0, ttl: float = DEFAULT_TTL,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] = asyncio.sleep,
                 note: Callable[[str], None] | None = None,
                 ticks: Callable[[], float] = elapsed) -> None:
        self.client, self.timeout, self.ttl, self.clock, self.sleep = client, timeout, ttl, clock, sleep
        self.note = note or (lambda line: None)
        self.holder = new_holder(clock, ttl)
        self.term = Term(ttl, ticks)
        self._posted = False  # a create was sent: the lease may exist even without a reply
        self._renewer: asyncio.Task[None] | None = None
        self._confirming = asyncio.Lock()

    @property
    def lost(self) -> bool:
        return self.term.lost is not None

    async def __aenter__(self) -> Lease:
        await self.acquire()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.release()

    async def acquire(self) -> None:
        started = self.clock()
        waiting = False
        while True:
            other = await self._try_create()
            if other is None:
                self._renewer = asyncio.create_task(self._renew_loop())
                return
            if other.expired(self.clock()):
                self.note(f"taking over a stale apply lease ({other.describe()})")
                with contextlib.suppress(NotFound):
                    await self.client.delete(LEASE_KIND.item_path(other.role_id))
                continue
            waited = self.clock() - started
            if waited >= self.timeout:
                raise LeaseHeld(other, waited)
            if not waiting:
                waiting = True
                self.note(f"waiting up to {self.timeout:g}s for the apply lease held by "
                          f"{other.describe()}")
            await self.sleep(min(POLL, self.timeout - waited))

    async def _try_create(self, tries: int = CREATE_TRIES) -> Holder | None:
        """Create the lease; ``None`` when this run holds it, else the holder that does.

        A create whose outcome is unknown (a 5xx, a dropped reply) is looked up: the lease
        found carrying this run's id is this run's."""
        began = self.term.ticks()
        self.holder = replace(self.holder, expires=self.clock() + self.ttl)
        self._posted = True
        try:
            created = await self.client.post(LEASE_KIND.collection_path(),
                                             {"name": LEASE_NAME, "description": self.holder.text()})
        except Invalid as exc:
            if "duplicate" not in str(exc).lower():
                raise
            return await self._found(await find(self.client, self.ttl), tries, exc, began)
        except (ServerError, TransportError) as exc:
            return await self._found(await find(self.client, self.ttl), tries, exc, began)
        self._held(str(created.get("id", "")), began)
        return None

    async def _found(self, other: Holder | None, tries: int, error: ApiError,
                     began: float) -> Holder | None:
        """After a refused or unknown create: this run's lease, another's, or one more try."""
        if other is not None and other.readable and other.run_id == self.holder.run_id:
            self._held(other.role_id, began)
            return None
        if other is not None:
            return other
        if tries <= 1:
            raise error
        return await self._try_create(tries - 1)

    def _held(self, role_id: str, began: float) -> None:
        self.holder = replace(self.holder, role_id=role_id)
        self.term.confirm(began)

    def ours(self, found: Holder) -> bool:
        """``found`` is this run's lease: its run id, or (unreadable) its role id."""
        if found.readable:
            return found.run_id == self.holder.run_id
        return bool(self.holder.role_id) and found.role_id == self.holder.role_id

    async def _renew_loop(self) -> None:
        failed = False
        while not self.lost:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self.renew()
            except ApiError as exc:  # the apply goes on; the next renewal may get through
                if not failed:
                    self.note(f"could not renew the apply lease ({exc}); trying again")
                failed = True
            else:
                failed = False

    async def hold(self) -> None:
        """Return only when the lease is known to be held: confirmed again first when the
        last confirmation is older than a third of its lifetime; raise
        :class:`~apimctl.applying.fence.LeaseLost` when it was lost (the fence of every write)."""
        if self.term.stale() and not self.lost:
            async with self._confirming:
                if self.term.stale() and not self.lost:
                    await self._renew()
        self.term.check()

    async def confirm(self) -> None:
        """Renew now and refuse to go on when the lease was lost (broken by hand, or taken
        over as stale while this run was blocked, e.g. by a confirmation prompt)."""
        await self.renew()
        if self.lost:
            raise ApimctlError("the apply lease was lost before the first write (broken with "
                               "`apimctl unlock`, or taken over after it expired while this run "
                               "waited); nothing was written; run apply again")

    async def renew(self) -> None:
        """Push the expiry forward; notice when the lease was broken, taken, or not renewed
        within its lifetime (then nothing is written to the role: it may be another's now)."""
        async with self._confirming:
            await self._renew()

    async def _renew(self) -> None:
        if self.lost:
            return
        began = self.term.ticks()
        if self.term.over():
            self._lose(f"not renewed within its lifetime of {self.ttl:g} s: this run was paused "
                       "or could not reach the area")
            return
        current = await find(self.client, self.ttl)
        if current is None or not self.ours(current):
            self._lose("broken by someone else: `apimctl unlock`, or taken over by another apply")
            return
        holder = replace(self.holder, expires=self.clock() + self.ttl, role_id=current.role_id)
        body = {"name": LEASE_NAME, "description": holder.text()}
        try:  # the renewal is a write too: not sent once the term is over (paused while reading)
            await self.term.within(lambda: self.client.put(LEASE_KIND.item_path(current.role_id), body))
        except NotFound:
            self._lose("broken by someone else while it was renewed")
            return
        except LeaseLost:
            return
        self.holder = holder
        self.term.confirm(began)

    def _lose(self, reason: str) -> None:
        if self.term.lose(reason):
            self.note(f"the apply lease was lost ({reason}); this apply sends no further write")

    async def release(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._renewer
            self._renewer = None
        if self.lost or not (self.holder.role_id or self._posted):
            return  # a lost lease is another's, or expires by itself: no call after a loss
        try:
            if self.holder.role_id:
                # one call, by the id this run created: a role id is never reused, so this
                # deletes nothing of another's (one that took the lease over made a new role);
                # the last call a run stopped by its daily quota has left (applying.budget)
                await self.client.delete(LEASE_KIND.item_path(self.holder.role_id))
                return
            current = await find(self.client, self.ttl)
            if current is not None and self.ours(current):
                await self.client.delete(LEASE_KIND.item_path(current.role_id))
        except NotFound:
            pass
        except QuotaExhausted:  # the platform refuses the key every call, this one too
            self.note(f"could not release the apply lease: the daily quota is exhausted; it expires "
                      f"by itself within {self.ttl:g}s, and `apimctl apply --resume "
                      f"{self.holder.run_id}` takes it over at once")
        except ApiError as exc:  # never hide the apply's own outcome behind this
            self.note(f"could not release the apply lease ({exc}); it expires by itself within "
                      f"{self.ttl:g}s, or break it with `apimctl unlock {self.holder.run_id}`")
