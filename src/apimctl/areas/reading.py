"""The sides of a comparison: areas read concurrently, manifests loaded; each as the
documents ``apimctl export`` would write (:func:`apimctl.export.export_documents`), so two
sides are identical exactly when their exports are, which is when ``plan`` of one against the
other finds nothing to change (the same normal forms, the same defaults left out).

An area is read in one list call per 1,000 top-level objects
(:func:`apimctl.state.live.read_live`, named fields); several areas at once, each through its
own client. Manifests (with ``--overlay``) are loaded by the manifest pipeline and exported
from a live model built from them (:func:`manifest_state`), in the dialect of the side they
are compared with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds, workers
from apimctl.errors import ApimctlError
from apimctl.export import export_documents
from apimctl.kinds import Kind
from apimctl.kinds.dialects import SPEC, Dialect, dialect_of
from apimctl.manifests import load_manifests
from apimctl.planning import target_dialect
from apimctl.state.live import Lister, LiveObject, LiveState, read_live
from apimctl.state.objects import PortableState, from_portable, portable

Connect = Callable[[], AbstractAsyncContextManager[Lister]]
# how another process opens a client to the area: a module-level function of apimctl and the
# plain settings it takes (both pickle)
Reopen = tuple[Callable[[dict[str, Any]], AbstractAsyncContextManager[Lister]], dict[str, Any]]
Docs = dict[str, list[Any]]


@dataclass(frozen=True)
class AreaSource:
    """An area to read: its name (``dev``), what names it on the command line (a profile or
    a URL) and how to open a client to it; ``reopen``: how the worker process opens one
    (``None``: only here, as for the embedded server, which lives in this process)."""

    name: str
    target: str
    connect: Connect
    reopen: Reopen | None = None


@dataclass(frozen=True)
class ManifestSource:
    """Manifests to load: the paths and the overlays on them; ``name``: the side's name."""

    name: str
    paths: tuple[str, ...]
    overlays: tuple[str, ...] = ()


Source = AreaSource | ManifestSource


@dataclass
class Read:
    """One side read: its name, the live model (areas) and its dialect."""

    name: str
    label: str
    live: LiveState
    dialect: Dialect = SPEC
    variables: list[str] = field(default_factory=list)
    declared: bool = False  # the live model holds manifests' objects


async def read_area(source: AreaSource, *, digested: bool = False, elsewhere: bool = False) -> Read:
    """The live model of one area and its dialect; an error names the area. ``digested``:
    with the digest of each object's document (:func:`apimctl.state.alike.alike`). Nothing
    is kept for planning (no normal forms, no raw objects): the sides are exported.

    ``elsewhere``: read by the worker process (:mod:`apimctl.workers`) when the area can be
    opened there (:attr:`AreaSource.reopen`), while this process reads another area: reading
    is this process's work (decoding, translating, packing each object), so two areas read on
    two cores take the time of one. The model comes back packed, as it was kept there; when
    the worker cannot be used or fails, the area is read here."""
    if elsewhere and source.reopen is not None:
        opener, settings = source.reopen
        sent = await workers.awaited(workers.submit(read_portable, opener, settings, digested))
        if sent is not None:
            error, data, dialect = sent
            if error is not None or data is None:
                raise ApimctlError(f"area {source.name} ({source.target}): {error}")
            return Read(source.name, source.target, from_portable(data), dialect_of(dialect))
    try:
        async with source.connect() as client:
            live, dialect = await _read(client, digested)
    except ApimctlError as exc:
        raise ApimctlError(f"area {source.name} ({source.target}): {exc}") from None
    return Read(source.name, source.target, live, dialect_of(dialect))


async def _read(client: Lister, digested: bool) -> tuple[LiveState, str]:
    live = await read_live(client, normal_forms=False, raw=False, digested=digested)
    found = await target_dialect(client, None, live)
    return live, found.name


def read_portable(opener: Callable[[dict[str, Any]], AbstractAsyncContextManager[Lister]],
                  settings: dict[str, Any], digested: bool) -> tuple[str | None, PortableState | None, str]:
    """:func:`read_area`'s work in the worker process: ``(error, model, dialect name)``, the
    error's message when the area refused or failed (raised by the caller, named)."""
    async def run() -> tuple[str | None, PortableState | None, str]:
        try:
            async with opener(settings) as client:
                live, dialect = await _read(client, digested)
        except ApimctlError as exc:
            return str(exc), None, ""
        return None, portable(live), dialect

    return asyncio.run(run())


async def read_areas(sources: Sequence[AreaSource]) -> list[Read]:
    """Every area, read concurrently (the last one by the worker process, when it can:
    :func:`read_area`); the first area (in the order given) that failed is the error, once
    every read has ended (none is left half-done)."""
    last = len(sources) - 1  # the worker reads the last area when there are others
    results = await asyncio.gather(*(read_area(s, elsewhere=i == last and last > 0)
                                     for i, s in enumerate(sources)), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [r for r in results if isinstance(r, Read)]


def check_names(names: Sequence[str]) -> None:
    """Refuse an area named twice."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ApimctlError(f"area {name!r} is named twice: give each --area a name of its own")
        seen.add(name)


def read_manifests(source: ManifestSource, env: Mapping[str, str] | None = None) -> Read:
    """The manifests at ``source.paths`` with its overlays, as a live model (see
    :func:`manifest_state`)."""
    manifest = load_manifests(source.paths, source.overlays, env)
    label = " ".join([*source.paths, *(f"--overlay {o}" for o in source.overlays)])
    return Read(source.name, label, manifest_state(manifest.doc), declared=True)


def documents(read: Read, dialect: Dialect | None = None) -> Docs:
    """What an export of ``read`` would write, in ``dialect`` (default: the side's own)."""
    docs, variables, _ = export_documents(read.live, dialect=dialect or read.dialect, declared=read.declared)
    read.variables = variables
    return docs


# Sides of more objects than this are exported on two cores: the last one by the worker
# process (:mod:`apimctl.workers`) while this process exports the others.
PARALLEL_OBJECTS = 5000


def all_documents(reads: Sequence[Read], dialect: Dialect | None = None) -> list[Docs]:
    """:func:`documents` of every side, the last one in the worker when the sides are large
    (the same function, the same result; done here when the worker cannot help)."""
    last = reads[-1] if len(reads) > 1 else None
    future = None
    if last is not None and sum(r.live.count() for r in reads) > PARALLEL_OBJECTS:
        future = workers.submit(_exported, _portable(last.live), (dialect or last.dialect).name, last.declared)
    out = [documents(read, dialect) for read in reads[:-1]] if last is not None else []
    done = workers.result(future)
    if last is not None and done is not None:
        out.append(done[0])
        last.variables = done[1]
    else:
        out.append(documents(reads[-1], dialect))
    return out


Portable = list[tuple[str, str, str, dict[str, Any], str | None, str | None, str]]


def _portable(live: LiveState) -> Portable:
    """The live objects as plain data for the worker (their packed form does not pickle)."""
    return [(o.kind, o.key, o.id, o.doc, o.parent_key, o.parent_id, o.name)
            for objects in live.objects.values() for o in objects]


def _exported(objects: Portable, dialect: str, declared: bool) -> tuple[Docs, list[str]]:
    """The worker's part of :func:`all_documents`."""
    live = LiveState()
    for kind, key, own, doc, parent_key, parent_id, name in objects:
        live.add(LiveObject(kind, key, own, doc, parent_key, parent_id, name=name), doc)
    docs, variables, _ = export_documents(live, dialect=dialect_of(dialect), declared=declared)
    return docs, variables


def manifest_state(doc: Mapping[str, Any]) -> LiveState:
    """A live model holding the objects the manifest document ``doc`` declares (child
    objects apart from their parents, as an area holds them), so that they export as an
    area's would."""
    state = LiveState()
    counter = iter(range(1, 1 << 62))
    for kind in kinds.TOP_LEVEL:
        for item in doc.get(kind.manifest_key) or []:
            if isinstance(item, str):
                item = {kind.identity: item}
            _add(state, kind, item, None, None, counter)
    return state


def _add(state: LiveState, kind: Kind, item: Mapping[str, Any], parent_key: str | None,
         parent_id: str | None, counter: Any) -> None:
    children = {c.manifest_key: c for c in kinds.children_of(kind)}
    name = str(item.get(kind.identity, ""))
    key = kind.key_of(name, parent_key)
    own = f"m{next(counter)}"
    doc = {k: v for k, v in item.items() if k not in children and k != "id"}
    state.add(LiveObject(kind.name, key, own, doc, parent_key, parent_id, name=name))
    for manifest_key, child in children.items():
        for sub in item.get(manifest_key) or []:
            if isinstance(sub, str):
                sub = {child.identity: sub}
            _add(state, child, sub, key, own, counter)
