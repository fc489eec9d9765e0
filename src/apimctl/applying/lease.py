"""The apply lease: one apply at a time per area, with nothing but the management API.

Two pipelines applying to one area at once create duplicates (both see an object missing and
both create it). ``apply`` therefore takes an area-wide lease before its first write and
releases it at the end, like Terraform's state lock.

The lease is a **role** named :data:`LEASE_NAME`: role names are unique in an area, so its
creation is atomic on the platform (a second create is refused as a duplicate). Its
``description`` holds who holds it and until when (JSON: user, host, start time, the run's id,
expiry). The holder renews the expiry while the apply runs; a lease whose expiry has passed is
stale and the next apply takes it over (deleting it by id, so two takers cannot both win).
``apimctl unlock`` deletes it by hand (like ``terraform force-unlock``). The role is visible in
the platform's administration pages and under ``GET /roles``; planning never shows or prunes it
(:data:`apimctl.kinds.role.RESERVED_NAMES`).

Called by the apply command (:mod:`apimctl.applying.command`) and by ``apimctl unlock``
(:func:`break_lease`, the core of ``apimctl.cli.unlock``).
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from apimctl.errors import ApiError, ApimctlError, Invalid, NotFound, ServerError, TransportError
from apimctl.kinds.role import LEASE_NAME, ROLE

DEFAULT_TTL = 120.0  # seconds a lease lives without renewal
POLL = 2.0  # seconds between tries while waiting for a held lease
CREATE_TRIES = 5  # POSTs of the lease when one's outcome is unknown or it vanished meanwhile
_PREFIX = "apimctl apply lease "


class LeaseClient(Protocol):
    """The part of ``apimctl.api.client.ApiClient`` the lease uses."""

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]: ...
    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]: ...
    async def put(self, path: str, body: Any, params: Any = None) -> Any: ...
    async def delete(self, path: str) -> None: ...


@dataclass(frozen=True)
class Holder:
    """Who holds the lease (as written in the role's description)."""

    user: str
    host: str
    started: str
    run_id: str
    expires: float  # seconds since the epoch
    role_id: str = ""

    def describe(self) -> str:
        return f"{self.user}@{self.host}, run {self.run_id}, started {self.started}"

    def expired(self, now: float) -> bool:
        return self.expires <= now

    def text(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if k != "role_id"}
        return _PREFIX + json.dumps(fields, sort_keys=True)

    @classmethod
    def parse(cls, role: dict[str, Any]) -> Holder:
        """The holder a lease role describes; an unreadable description counts as expired."""
        text = str(role.get("description") or "")
        try:
            data = json.loads(text.removeprefix(_PREFIX))
            return cls(str(data["user"]), str(data["host"]), str(data["started"]),
                       str(data["run_id"]), float(data["expires"]), str(role.get("id", "")))
        except (ValueError, KeyError, TypeError):
            return cls("?", "?", "?", "?", 0.0, str(role.get("id", "")))


class LeaseHeld(ApimctlError):
    """Another apply holds the area's lease."""

    def __init__(self, holder: Holder, waited: float) -> None:
        self.holder = holder
        wait = f" (waited {waited:.0f}s)" if waited >= 1 else ""
        until = datetime.fromtimestamp(holder.expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        super().__init__(
            f"another apply holds this area's lease{wait}: {holder.describe()}, "
            f"held until {until} unless renewed. Wait for it (--lock-timeout SECONDS), or, if "
            f"that run is gone, break the lease with `apimctl unlock {holder.run_id}` "
            f"(the lease is the role {LEASE_NAME!r})")


def _now_text(clock: Callable[[], float]) -> str:
    return datetime.fromtimestamp(clock(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_holder(clock: Callable[[], float] = time.time, ttl: float = DEFAULT_TTL) -> Holder:
    """A holder for this process: the user, the host, the time and a fresh run id."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER", "unknown")
    return Holder(user, socket.gethostname(), _now_text(clock), uuid.uuid4().hex[:12], clock() + ttl)


async def find(client: LeaseClient) -> Holder | None:
    """The current lease of the area, if any."""
    roles = await client.list_all(ROLE.collection_path(), {"filter": f"name:{LEASE_NAME}"},
                                  page_index=ROLE.page_index)
    found = [r for r in roles if r.get("name") == LEASE_NAME]
    return Holder.parse(found[0]) if found else None


async def unlock(client: LeaseClient, run_id: str | None = None) -> Holder | None:
    """Break the lease (only the one of ``run_id`` when given); the holder it had, if any."""
    holder = await find(client)
    if holder is None:
        return None
    if run_id is not None and holder.run_id != run_id:
        raise ApimctlError(f"the lease is held by run {holder.run_id} ({holder.describe()}), "
                           f"not {run_id}: nothing was unlocked")
    with contextlib.suppress(NotFound):
        await client.delete(ROLE.item_path(holder.role_id))
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
    """The area's lease for one apply: ``async with Lease(client): ...``."""

    def __init__(self, client: LeaseClient, *, timeout: float = 0.0, ttl: float = DEFAULT_TTL,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Any] = asyncio.sleep,
                 note: Callable[[str], None] | None = None) -> None:
        self.client, self.timeout, self.ttl, self.clock, self.sleep = client, timeout, ttl, clock, sleep
        self.note = note or (lambda line: None)
        self.holder = new_holder(clock, ttl)
        self.lost = False
        self._posted = False  # a create was sent: the lease may exist even without a reply
        self._renewer: asyncio.Task[None] | None = None

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
                    await self.client.delete(ROLE.item_path(other.role_id))
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
        self.holder = Holder(self.holder.user, self.holder.host, self.holder.started,
                             self.holder.run_id, self.clock() + self.ttl)
        self._posted = True
        try:
            created = await self.client.post(ROLE.collection_path(),
                                             {"name": LEASE_NAME, "description": self.holder.text()})
        except Invalid as exc:
            if "duplicate" not in str(exc).lower():
                raise
            other = await find(self.client)
            return await self._found(other, tries, exc)
        except (ServerError, TransportError) as exc:
            return await self._found(await find(self.client), tries, exc)
        self._held(str(created.get("id", "")))
        return None

    async def _found(self, other: Holder | None, tries: int, error: ApiError) -> Holder | None:
        """After a refused or unknown create: this run's lease, another's, or one more try."""
        if other is not None and other.run_id == self.holder.run_id:
            self._held(other.role_id)
            return None
        if other is not None:
            return other
        if tries <= 1:
            raise error
        return await self._try_create(tries - 1)

    def _held(self, role_id: str) -> None:
        self.holder = Holder(self.holder.user, self.holder.host, self.holder.started,
                             self.holder.run_id, self.holder.expires, role_id)

    async def _renew_loop(self) -> None:
        failed = False
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self.renew()
            except ApiError as exc:  # the apply goes on; the next renewal may get through
                if not failed:
                    self.note(f"could not renew the apply lease ({exc}); trying again")
                failed = True
            else:
                failed = False

    async def confirm(self) -> None:
        """Renew now and refuse to go on when the lease was lost (broken by hand, or taken
        over as stale while this run was blocked, e.g. by a confirmation prompt)."""
        await self.renew()
        if self.lost:
            raise ApimctlError("the apply lease was lost before the first write (broken with "
                               "`apimctl unlock`, or taken over after it expired while this run "
                               "waited); nothing was written; run apply again")

    async def renew(self) -> None:
        """Push the expiry forward; notice when the lease was broken or taken."""
        current = await find(self.client)
        if current is None or current.run_id != self.holder.run_id:
            if not self.lost:
                self.note("the apply lease was broken by someone else (apimctl unlock?); "
                          "another apply may now run at the same time")
            self.lost = True
            return
        self.holder = Holder(self.holder.user, self.holder.host, self.holder.started,
                             self.holder.run_id, self.clock() + self.ttl, current.role_id)
        await self.client.put(ROLE.item_path(current.role_id),
                              {"name": LEASE_NAME, "description": self.holder.text()})

    async def release(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._renewer
            self._renewer = None
        if self.lost or not (self.holder.role_id or self._posted):
            return
        try:
            current = await find(self.client)
            if current is not None and current.run_id == self.holder.run_id:
                await self.client.delete(ROLE.item_path(current.role_id))
        except NotFound:
            pass
        except ApiError as exc:  # never hide the apply's own outcome behind this
            self.note(f"could not release the apply lease ({exc}); it expires by itself within "
                      f"{self.ttl:g}s, or break it with `apimctl unlock {self.holder.run_id}`")
