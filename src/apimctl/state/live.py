"""Read the live configuration of an area and put it into manifest shape.

``planner.make_plan`` (and through it ``plan``, ``apply``, ``drift``) and ``export`` call
:func:`read_live`. Each top-level collection is read with one list call per 1,000 objects
(pages fetched concurrently by :meth:`ApiClient.list_all`), with the ``fields`` projection of
its entry in :mod:`apimctl.kinds`, so services come back with their endpoints (cors, cache,
processor, methods, ...) and error sets (with messages), packages with their plans (with
entitlements and roles): never one GET per object.

:func:`from_raw` is the pure half: it turns the API's objects into :class:`LiveObject` values
in manifest shape (references by name, domains as strings, role permissions as role names),
keeping ids and fingerprints beside them. Secret values that the API returns stay in memory
only; they are hashed by ``normalise`` before anything compares or prints them.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.errors import ServerError
from apimctl.kinds import Kind
from apimctl.kinds.ops import Key, Lookups

PAGE_SIZE = 1000


class Lister(Protocol):
    """The part of :class:`apimctl.api.client.ApiClient` this module uses."""

    async def list_all(self, path: str, params: Any = None, *, page_size: int = ...,
                       page_index: bool = ...) -> list[dict[str, Any]]: ...


@dataclass
class LiveObject:
    """One live object: its key, id, parent, manifest-shaped ``doc`` and fingerprint facts."""

    kind: str
    key: str
    id: str
    doc: dict[str, Any]
    parent_key: str | None = None
    parent_id: str | None = None
    updated: str | None = None
    revision: int | None = None
    name: str = ""
    # the API's object as read, only the fields telling copies apart (id, identity, ``created``,
    # ``status``, the keyed lists and sets with their items' ids and ``created``): duplicates
    # inside keyed lists are found here, before the normal form collapses them; child
    # collections are not kept (they are objects of their own)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = str(self.doc.get(kinds.get(self.kind).identity, ""))


@dataclass
class LiveState:
    """Every live object, per kind, in the order the API listed them."""

    objects: dict[str, list[LiveObject]] = field(default_factory=dict)

    def of(self, kind: str) -> list[LiveObject]:
        return self.objects.get(kind, [])

    def add(self, obj: LiveObject) -> None:
        self.objects.setdefault(obj.kind, []).append(obj)

    def count(self) -> int:
        return sum(len(v) for v in self.objects.values())


async def read_raw(client: Lister) -> dict[str, list[dict[str, Any]]]:
    """The raw lists of every top-level kind, read concurrently."""
    async def one(kind: Kind) -> list[dict[str, Any]]:
        params = [("fields", kind.fields_param()), *kind.list_params]
        items = await client.list_all(kind.path, params, page_size=PAGE_SIZE,
                                      page_index=kind.page_index)
        for item in items:  # a reply that is not a list of these objects plans nonsense
            missing = [f for f in ("id", kind.identity) if item.get(f) in (None, "")]
            if missing:
                fields = ", ".join(sorted(map(str, item))[:10]) or "none"
                raise ServerError(f"GET {kind.path}: unreadable reply: an item without "
                                  f"{' or '.join(missing)} (its fields: {fields})", method="GET")
        return [i for i in items if i.get(kind.identity) not in kind.reserved]

    results = await asyncio.gather(*(one(k) for k in kinds.TOP_LEVEL))
    return {k.name: list(r) for k, r in zip(kinds.TOP_LEVEL, results, strict=True)}


async def read_live(client: Lister) -> LiveState:
    """The live state of the client's area (one list call per 1,000 top-level objects)."""
    return from_raw(await read_raw(client), consume=True)


def read_call_bound(state: LiveState) -> int:
    """The fewest list calls that can read ``state``: Σ ⌈N/1000⌉ over top-level kinds (≥ 1 each)."""
    return sum(max(1, -(-len(state.of(k.name)) // PAGE_SIZE)) for k in kinds.TOP_LEVEL)


# --- translation into manifest shape ----------------------------------------------------------


def _index(lookups: Lookups, kind: Kind, raw: Mapping[str, Any], parent: Key) -> None:
    """Add ``raw`` (with its nested items and child objects) to ``lookups``."""
    key = (*parent, str(raw.get(kind.identity)))
    lookups.add(kind.name, raw.get("id"), key)
    for label, item_id, name in kind.ops.nested(raw):
        lookups.add(label, item_id, (*key, name))
    for child in kinds.children_of(kind):
        for item in as_list(raw.get(child.manifest_key)):
            _index(lookups, child, item, key)


def lookups_of(raw: Mapping[str, list[dict[str, Any]]]) -> Lookups:
    """Id -> key lookups across kinds, for references the API renders by id."""
    lookups = Lookups()
    for kind in kinds.TOP_LEVEL:
        for obj in raw.get(kind.name, []):
            _index(lookups, kind, obj, ())
    return lookups


_KEPT_RAW: dict[str, tuple[Kind, tuple[str, ...]]] = {}


def _kept_raw(kind: Kind) -> tuple[str, ...]:
    """The fields of a raw object that :attr:`LiveObject.raw` keeps (computed once per kind):
    what telling duplicates apart and domains need (id, identity, ``created``, ``status``,
    the keyed lists and sets with their items' ids), not child collections."""
    found = _KEPT_RAW.get(kind.name)
    if found is None or found[0] is not kind:
        names = {"id", "created", "updated", "status", kind.identity}
        names |= {path.split(".")[0] for path in (*kind.keyed, *kind.sets)}
        found = _KEPT_RAW[kind.name] = (kind, tuple(sorted(names)))
    return found[1]


def _read(state: LiveState, kind: Kind, raw: Mapping[str, Any], lookups: Lookups,
          parent_raw: Mapping[str, Any] | None = None, parent: LiveObject | None = None) -> None:
    """Add ``raw`` (in manifest shape, by its kind's ``read``) and its child objects to ``state``."""
    read = kind.ops.read(raw, lookups, parent_raw)
    parent_key = parent.key if parent is not None else None
    kept = _kept_raw(kind)
    obj = LiveObject(kind.name, kind.key_of(str(raw.get(kind.identity)), parent_key),
                     str(raw.get("id")), read.doc, parent_key,
                     parent.id if parent is not None else None, read.updated, read.revision,
                     str(read.doc.get(kind.identity, "")),
                     raw={k: raw[k] for k in kept if k in raw})
    state.add(obj)
    for child in kinds.children_of(kind):
        for item in as_list(raw.get(child.manifest_key)):
            _read(state, child, item, lookups, raw, obj)


def from_raw(raw: Mapping[str, list[dict[str, Any]]], *, consume: bool = False) -> LiveState:
    """Translate the raw lists of :func:`read_raw` (keyed by kind name) into a LiveState.

    ``consume=True`` empties the lists of ``raw`` as their objects are read, so the raw data
    (child collections included) is freed object by object rather than held until the end."""
    with _no_cycle_collection():
        lookups = lookups_of(raw)
        state = LiveState()
        for kind in kinds.TOP_LEVEL:
            items = raw.get(kind.name, [])
            if consume:
                items.reverse()
                while items:
                    _read(state, kind, items.pop(), lookups)
                continue
            for obj in items:
                _read(state, kind, obj, lookups)
    return state


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while the live model is built: it allocates
    hundreds of thousands of acyclic dicts and lists, and each collection would walk every
    object made so far (a third of the reading time at 50,000 endpoints)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
