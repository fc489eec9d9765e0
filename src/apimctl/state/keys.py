"""Read the area's package keys for a plan's caller impact (:mod:`apimctl.planning.impact`).

Only the fields the impact needs are asked for, each named at every level (SUPPLEMENT
10.10.8: no nested wildcard, no reliance on what a table marks Imp). Keys are read from
``/packageKeys``; when the impact counts applications or members, they are read instead
through ``/applications`` with each application's keys nested, which gives the owner of
every key in the same number of calls (a key does not name its application). Both lists
page by page index (SUPPLEMENT §1), 1,000 items a call, a few calls in flight; each page is
reduced to small :class:`KeyFacts` as it arrives, and only the keys of the plans asked for
are kept. The number of items read is checked against ``X-Total-Count``: a list that
changed while it was read is an error, never a silent short count.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import msgspec

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.errors import ServerError

PAGE_SIZE = 1000
IN_FLIGHT = 4  # pages requested at once
KEYS_PATH = "/packageKeys"
APPLICATIONS_PATH = "/applications"
# the kind keys are issued for (``ROLES.keys_for``): a key names its object and that
# object's parent, each by its kind's name
ISSUING = kinds.ROLES.keys_for
KEY_FIELDS: tuple[str, ...] = (
    "id", "rateLimitCeiling", "rateLimitExempt", "qpsLimitCeiling", "qpsLimitExempt",
    f"{ISSUING.name}.id", f"{ISSUING.parent}.id",  # the key's plan and package, by id
)
APPLICATION_FIELDS: tuple[str, ...] = ("id", "username", *(f"packageKeys.{f}" for f in KEY_FIELDS))


@runtime_checkable
class PageReader(Protocol):
    """The part of :class:`apimctl.api.client.ApiClient` this module uses."""

    async def list_page(self, path: str, params: Any = None, *, size: int = ...,
                        offset: int = ...) -> tuple[list[dict[str, Any]], int | None]: ...


class _Ref(msgspec.Struct, gc=False):
    """A key's plan or package: its id."""

    id: str | None = None


class KeyFacts(msgspec.Struct, gc=False):
    """What the impact needs of one key, converted from its API object in one pass: never its
    ``apikey`` or ``secret``. ``application`` and ``member`` (the owner's username) are known
    when applications were read."""

    id: str = ""
    rate_ceiling: int | None = msgspec.field(default=None, name="rateLimitCeiling")
    rate_exempt: bool | None = msgspec.field(default=False, name="rateLimitExempt")
    qps_ceiling: int | None = msgspec.field(default=None, name="qpsLimitCeiling")
    qps_exempt: bool | None = msgspec.field(default=False, name="qpsLimitExempt")
    plan: _Ref | None = None
    application: str | None = None
    member: str | None = None

    @property
    def plan_id(self) -> str:
        return str(self.plan.id or "") if self.plan is not None else ""

    def ceiling(self, what: str) -> int | None:
        """The key's own ``rateLimit``/``qpsLimit`` ceiling (``None``: it follows its plan)."""
        return self.rate_ceiling if what == "rateLimit" else self.qps_ceiling

    def exempt(self, what: str) -> bool:
        return bool(self.rate_exempt if what == "rateLimit" else self.qps_exempt)


class _Application(msgspec.Struct, gc=False):
    id: str = ""
    username: str | None = None
    packageKeys: list[KeyFacts] | None = None  # the API's name


@dataclass
class KeyRead:
    """The keys of the plans asked for, by plan id, and what reading them cost."""

    by_plan: dict[str, list[KeyFacts]] = field(default_factory=dict)
    calls: int = 0
    items: int = 0  # keys (or applications) read in the area
    applications: bool = False  # owners known (read through /applications)

    def of(self, plan_id: str | None) -> list[KeyFacts]:
        return self.by_plan.get(plan_id or "", [])


def _one(item: Mapping[str, Any], kind: type[KeyFacts] | type[_Application]) -> Any:
    """One item that did not convert with its page: its fields that do, the rest left out."""
    try:
        return msgspec.convert(item, kind, strict=False)
    except msgspec.ValidationError:
        plan = item.get(ISSUING.name)
        ref = _Ref(str(plan.get("id"))) if isinstance(plan, Mapping) else None
        return KeyFacts(str(item.get("id") or ""), plan=ref) if kind is KeyFacts else \
            _Application(str(item.get("id") or ""), None, [_one(k, KeyFacts) for k in
                                                          as_list(item.get("packageKeys"))
                                                          if isinstance(k, Mapping)])


def converted(page: list[dict[str, Any]], applications: bool) -> list[Any]:
    """A page's items as :class:`KeyFacts` (or applications holding them), in one pass."""
    kind = _Application if applications else KeyFacts
    try:
        return msgspec.convert(page, list[kind], strict=False)  # type: ignore[valid-type]
    except msgspec.ValidationError:
        return [_one(item, kind) for item in page if isinstance(item, Mapping)]


def _keep(keys: Iterable[KeyFacts], wanted: set[str], by_plan: dict[str, list[KeyFacts]]) -> None:
    """The keys of the ``wanted`` plans, listed under their plan (a kept key lets go of its
    plan reference: 100,000 keys hold a few megabytes less)."""
    for key in keys:
        plan = key.plan_id
        if plan in wanted:
            by_plan.setdefault(plan, []).append(key)
            key.plan = None


async def read_keys(client: PageReader, plan_ids: Collection[str], *,
                    applications: bool = False) -> KeyRead:
    """The keys of ``plan_ids`` (every key is read once; the others are dropped as their page
    is read). ``applications``: read through ``/applications`` so that owners are known."""
    path = APPLICATIONS_PATH if applications else KEYS_PATH
    fields = APPLICATION_FIELDS if applications else KEY_FIELDS
    params = [("fields", ",".join(fields))]
    out = KeyRead(applications=applications)
    seen: set[str] = set()
    wanted = set(plan_ids)

    def take(page: list[dict[str, Any]]) -> int:
        before = len(seen)
        items = []
        for item in converted(page, applications):
            if item.id and item.id not in seen:
                seen.add(item.id)
                items.append(item)
        if not applications:
            _keep(items, wanted, out.by_plan)
            return len(seen) - before
        for app in items:
            keys = app.packageKeys or ()
            for key in keys:
                key.application, key.member = app.id, app.username or None
            _keep(keys, wanted, out.by_plan)
        return len(seen) - before

    first, total = await client.list_page(path, params, size=PAGE_SIZE, offset=0)
    out.calls = 1
    take(first)
    if total is None:
        await _until_short(client, path, params, first, take, out)
    else:
        pages = math.ceil(total / PAGE_SIZE)
        for start in range(1, pages, IN_FLIGHT):
            batch = range(start, min(pages, start + IN_FLIGHT))
            for page, _ in await asyncio.gather(*(client.list_page(path, params, size=PAGE_SIZE, offset=i)
                                                  for i in batch)):
                take(page)
            out.calls += len(batch)
        if len(seen) != total:
            raise ServerError(f"GET {path}: the list changed while it was read (X-Total-Count "
                              f"{total}, {len(seen)} read)", method="GET")
    out.items = len(seen)
    return out


async def _until_short(client: PageReader, path: str, params: list[tuple[str, str]],
                       first: list[dict[str, Any]], take: Callable[[list[dict[str, Any]]], int],
                       out: KeyRead) -> None:
    """Without ``X-Total-Count``: page after page until one comes back short (or holds no key
    not read already: a server that ignores ``offset``)."""
    last, index = len(first), 1
    while last >= PAGE_SIZE:
        page, _ = await client.list_page(path, params, size=PAGE_SIZE, offset=index)
        out.calls += 1
        if not take(page):
            return
        last, index = len(page), index + 1
