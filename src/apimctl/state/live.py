"""Read the live configuration of an area and put it into manifest shape.

``apimctl.planning.build.read_and_plan`` (and through it ``plan``, ``apply``, ``drift``) and
``export`` call :func:`read_live`. Each top-level collection is read with one list call per
1,000 objects, with the ``fields`` projection of its entry in :mod:`apimctl.kinds`, so
services come back with their endpoints (cors, cache, processor, methods, ...) and error sets
(with messages), packages with their plans (with entitlements and roles): never one GET per
object. A data source (a read-only kind: organizations, email template sets) is read only when
asked for: ``plan``, ``apply`` and ``drift`` skip those their manifests do not name
(:func:`unnamed_sources`), and ``export`` and ``lint --live`` go on without one the area
refuses to list.

Pages are translated as they arrive (:meth:`ApiClient.pages`, every collection's first page
requested at once, a few more ahead of the reader), one API object at a time, and dropped:
reading 50,000 endpoints never holds them all as Python objects. A collection is translated
once the collections listed before it in ``KINDS`` are done, so the id -> name lookups of
every kind it names by id are complete (a kind never names objects of its own kind by id).

:func:`from_raw` is the pure half: it turns the API's objects into :class:`LiveObject` values
in manifest shape (references by name, domains as strings, role permissions as role names),
keeping ids and fingerprints beside them. Secret values that the API returns stay in memory
only; they are hashed by ``normalise`` before anything compares or prints them.

A live object keeps what planning needs and little more: its document packed into a few dozen
bytes (:class:`Packer`, decoded on each access of :attr:`LiveObject.doc`), and the digest of
its normal form (:attr:`LiveObject.norm`), so that planning compares an unchanged object by
its digests instead of normalising and diffing both sides.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Mapping
from typing import Any, Protocol

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.errors import ApiError, QuotaExhausted, ServerError, Throttled
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Contextual, NestedIds
from apimctl.kinds.ops import Context, Key, Lookups
from apimctl.speed import collector_paused
from apimctl.state.normal_batches import NormalBatches
from apimctl.state.objects import ABSENT, LiveObject, LiveState, kept_of, repeats
from apimctl.state.packing import Packer, encoded

__all__ = ["DATA_SOURCES", "PAGE_SIZE", "Lister", "LiveObject", "LiveState", "from_raw", "lookups_of",
           "read_call_bound", "read_live", "read_raw", "refusal", "refused_lines", "repeats",
           "unnamed_sources"]

PAGE_SIZE = 1000
# the read-only top-level kinds (organizations, email template sets): data sources, which
# apimctl never writes; an area or a key may be refused their lists
DATA_SOURCES = frozenset(k.name for k in kinds.TOP_LEVEL if k.read_only)
_YIELD_EVERY = 4  # top-level objects read between two turns of the event loop


class Lister(Protocol):
    """The part of :class:`apimctl.api.client.ApiClient` this module uses: a list read whole
    (``list_all``, :func:`read_raw`) or page by page as the pages arrive (``pages``,
    :func:`read_live`)."""

    async def list_all(self, path: str, params: Any = None, *, page_size: int = ...,
                       page_index: bool = ...) -> list[dict[str, Any]]: ...

    def pages(self, path: str, params: Any = None, *, page_size: int = ...,
              page_index: bool = ...) -> AsyncGenerator[Iterable[dict[str, Any]], None]: ...


# --- reading ----------------------------------------------------------------------------------


def _params(kind: Kind) -> list[tuple[str, str]]:
    return [("fields", kind.fields_param())]


def _check(kind: Kind, item: Mapping[str, Any]) -> None:
    """A reply that is not a list of these objects plans nonsense: refuse it."""
    missing = [f for f in ("id", kind.identity) if item.get(f) in (None, "")]
    if missing:
        fields = ", ".join(sorted(map(str, item))[:10]) or "none"
        raise ServerError(f"GET {kind.path}: unreadable reply: an item without "
                          f"{' or '.join(missing)} (its fields: {fields})", method="GET")


def _wanted(kind: Kind, item: Mapping[str, Any]) -> bool:
    """Checked, and not one of the identities apimctl itself uses."""
    _check(kind, item)
    return not kinds.ROLES.reserved(kind, item.get(kind.identity))


async def read_raw(client: Lister) -> dict[str, list[dict[str, Any]]]:
    """The raw lists of every top-level kind, read concurrently."""
    async def one(kind: Kind) -> list[dict[str, Any]]:
        items = await client.list_all(kind.path, _params(kind), page_size=PAGE_SIZE,
                                      page_index=kind.page_index)
        return [i for i in items if _wanted(kind, i)]

    results = await asyncio.gather(*(one(k) for k in kinds.TOP_LEVEL))
    return {k.name: list(r) for k, r in zip(kinds.TOP_LEVEL, results, strict=True)}


async def read_live(client: Lister, *, normal_forms: bool = True, raw: bool = True,
                    digested: bool = False, meanwhile: Callable[[], object] | None = None,
                    skip: Collection[str] = (), optional: Collection[str] = ()) -> LiveState:
    """The live state of the client's area (one list call per 1,000 top-level objects).
    ``normal_forms``: make each object's :attr:`LiveObject.norm` (what planning compares;
    ``export`` and ``lint`` do without); ``raw``: keep what :attr:`LiveObject.raw` holds
    (planning finds duplicates there; what only exports or compares areas does without);
    ``digested``: make each object's :attr:`LiveObject.doc_digest` (the digest of its document
    as read, in the same encoding as it is packed, so it costs a hash). ``meanwhile``: the caller's work that needs no area,
    done once, in the time this process would wait for the area's first pages (a server
    makes a large first page while this process has nothing to read); at the end when it
    never waits. ``skip``: names of top-level kinds not read at all (:func:`unnamed_sources`);
    ``optional``: names of kinds an area may refuse to list (403, 404): such a kind then reads
    as empty, and :attr:`LiveState.refused` says why."""
    reader = _Reader(normal_forms, raw=raw, digested=digested)
    reading = [k for k in kinds.TOP_LEVEL if k.name not in skip]
    reader.state.skipped = frozenset(k.name for k in kinds.TOP_LEVEL if k.name in skip)
    streams: list[AsyncGenerator[Iterable[dict[str, Any]], None]] = [
        client.pages(k.path, _params(k), page_size=PAGE_SIZE, page_index=k.page_index)
        for k in reading]
    firsts = [asyncio.ensure_future(anext(s)) for s in streams]  # every first page at once
    try:
        with collector_paused(promote=True):
            for index, (kind, stream, first) in enumerate(zip(reading, streams, firsts, strict=True)):
                # once a first page has come back, every first request is out: the wait for
                # one not back yet is the server's work alone
                if meanwhile is not None and index and not first.done():
                    work, meanwhile = meanwhile, None
                    work()
                try:
                    page = await first
                except ApiError as exc:
                    if kind.name not in optional or not refusal(exc):
                        raise
                    reader.state.refused[kind.name] = str(exc)
                    continue
                await reader.page(kind, page)
                async for page in stream:
                    await reader.page(kind, page)
            if meanwhile is not None:
                meanwhile()
            reader.finish()
    finally:
        for task in firsts:
            task.cancel()
        await asyncio.gather(*firsts, return_exceptions=True)
        for stream in streams:
            await stream.aclose()
    return reader.state


def read_call_bound(state: LiveState) -> int:
    """The fewest list calls that can read ``state``: Σ ⌈N/1000⌉ over the top-level kinds
    read (≥ 1 each)."""
    return sum(max(1, -(-len(state.of(k.name)) // PAGE_SIZE)) for k in kinds.TOP_LEVEL
               if k.name not in state.skipped)


def refused_lines(state: LiveState) -> list[str]:
    """One line per optional kind the area refused to list (:attr:`LiveState.refused`)."""
    return [f"{kinds.get(name).manifest_key} not read: {why} (taken as none)"
            for name, why in state.refused.items()]


def refusal(exc: ApiError) -> bool:
    """Whether ``exc`` is the area refusing to list a collection (the key or the area may not
    read it: 403, 404), rather than a failure of the call (throttling, quota, server)."""
    return exc.status in (403, 404) and not isinstance(exc, Throttled | QuotaExhausted)


def unnamed_sources(doc: Mapping[str, Any]) -> frozenset[str]:
    """The data sources (read-only top-level kinds: organizations, email template sets) that
    the manifest document ``doc`` neither declares nor names in an object it declares: a plan
    needs nothing of them, so it does not read them (an area or a key may not be allowed to).
    Pruning never touches a data source, so ``--prune`` needs none of them either."""
    named = {k.name for k in kinds.TOP_LEVEL if k.read_only and doc.get(k.manifest_key)}
    for kind in kinds.KINDS:
        for ref in kind.references:
            if ref.kind in named or not kinds.get(ref.kind).read_only:
                continue
            names = [n for n in (ref.field.split(".")[0].removesuffix("[]"), ref.id_field) if n]
            if any(n in obj for obj in _declared(doc, kind) for n in names):  # null names one too
                named.add(ref.kind)
    return frozenset(k.name for k in kinds.TOP_LEVEL if k.read_only and k.name not in named)


def _declared(doc: Mapping[str, Any], kind: Kind) -> Iterable[Mapping[str, Any]]:
    """The objects of ``kind`` that ``doc`` declares (at their place under their parents)."""
    if kind.parent is None:
        holders: Iterable[Mapping[str, Any]] = [doc]
    else:
        holders = _declared(doc, kinds.get(kind.parent))
    for holder in holders:
        for obj in as_list(holder.get(kind.manifest_key)):
            if isinstance(obj, Mapping):
                yield obj


# --- translation into manifest shape ----------------------------------------------------------


def _index(lookups: Lookups, kind: Kind, raw: Mapping[str, Any], parent: Key) -> None:
    """Add ``raw`` (with its nested items and child objects) to ``lookups``."""
    key = (*parent, str(raw.get(kind.identity)))
    lookups.add(kind.name, raw.get("id"), key)
    nested = kinds.capability(kind, NestedIds)
    if nested is not None:
        for label, item_id, name in nested.nested(raw):
            lookups.add(label, item_id, (*key, name))
    for child in kinds.children_of(kind):
        for item in as_list(raw.get(child.manifest_key)):
            _index(lookups, child, item, key)


_NO_CONTEXT = Context()


def lookups_of(raw: Mapping[str, list[dict[str, Any]]]) -> Lookups:
    """Id -> key lookups across kinds, for references the API renders by id."""
    lookups = Lookups()
    for kind in kinds.TOP_LEVEL:
        for obj in raw.get(kind.name, []):
            _index(lookups, kind, obj, ())
    return lookups


class _Reader:
    """Translates raw objects into one :class:`LiveState`, object by object."""

    def __init__(self, normal_forms: bool, *, raw: bool = True, digested: bool = False) -> None:
        self.keep_raw, self.digested = raw, digested
        self.state = LiveState()
        self.lookups = Lookups()
        self.normals = NormalBatches() if normal_forms else None
        self.packers: dict[str, Packer] = {}
        self.strings: dict[str, str] = {}  # see ``shared``
        self.contexts: dict[Context, Context] = {}  # one of each

    def finish(self) -> None:
        """Every object's normal form made (see :class:`~apimctl.state.normal_batches.NormalBatches`)."""
        if self.normals is not None:
            self.normals.finish()

    async def page(self, kind: Kind, items: Iterable[dict[str, Any]]) -> None:
        """Index and translate the wanted objects of one page, one at a time, letting the
        event loop run every few objects: the pages requested ahead keep arriving meanwhile
        (their replies are read off the socket only while the loop runs; otherwise the server
        stalls once the socket's buffer is full)."""
        for count, item in enumerate(items, 1):
            if _wanted(kind, item):
                _index(self.lookups, kind, item, ())
                self.read(kind, item)
            if count % _YIELD_EVERY == 0:
                await asyncio.sleep(0)

    def packer(self, kind: Kind, doc: dict[str, Any]) -> Packer:
        found = self.packers.get(kind.name)
        if found is None:
            found = self.packers[kind.name] = Packer(encoded(doc))
        return found

    def raw(self, kind: Kind, raw: Mapping[str, Any]) -> dict[str, Any] | tuple[Any, ...]:
        """What :attr:`LiveObject.raw` keeps of ``raw``: the values of the kind's kept fields
        (texts shared), or a mapping with the nested lists too when their items repeat."""
        spec = kept_of(kind)
        found = [raw.get(k, ABSENT) for k in spec.scalars]
        for i in spec.repeated:
            found[i] = self.shared(found[i])
        values = tuple(found)
        if not (spec.lists and repeats(kind, raw)):
            return values
        kept = {k: v for k, v in zip(spec.scalars, values, strict=True) if v is not ABSENT}
        kept.update((k, raw[k]) for k in spec.heads if k in raw)
        return dict(sorted(kept.items()))

    def shared(self, value: Any) -> Any:
        """One copy of each text (timestamps and names repeat across objects)."""
        return self.strings.setdefault(value, value) if type(value) is str else value

    def read(self, kind: Kind, raw: Mapping[str, Any], parent_raw: Mapping[str, Any] | None = None,
             parent: LiveObject | None = None, ctx: Context | None = None) -> None:
        """Add ``raw`` (in manifest shape, by its kind's ``read``) and its child objects to the
        state; ``ctx``: what its normal form depends on (its siblings: an endpoint's error sets)."""
        read = kind.ops.read(raw, self.lookups, parent_raw)
        doc = read.doc
        parent_key = parent.key if parent is not None else None
        name = self.shared(str(doc.get(kind.identity, "")))
        ctx = ctx or _NO_CONTEXT
        ctx = self.contexts.setdefault(ctx, ctx)
        obj = LiveObject(kind.name, kind.key_of(str(raw.get(kind.identity)), parent_key),
                         str(raw.get("id")), doc, parent_key,
                         parent.id if parent is not None else None, read.updated, read.revision,
                         name, self.raw(kind, raw) if self.keep_raw else None,
                         packer=self.packer(kind, doc), context=ctx, digested=self.digested)
        if self.normals is not None and not kind.read_only:
            self.normals.add(obj, kind, doc, ctx)
        self.state.add(obj, doc)
        children = kinds.children_of(kind)
        if not children:
            return
        listed = [(child, as_list(raw.get(child.manifest_key))) for child in children]
        siblings = {child.name: [str(i.get(child.identity, "")) for i in items
                                 if isinstance(i, Mapping)] for child, items in listed}
        for child, items in listed:
            contextual = kinds.capability(child, Contextual)
            child_ctx = contextual.context(siblings) if contextual is not None else _NO_CONTEXT
            for item in items:
                self.read(child, item, raw, obj, child_ctx)


def from_raw(raw: Mapping[str, list[dict[str, Any]]], *, consume: bool = False,
             normal_forms: bool = True) -> LiveState:
    """Translate the raw lists of :func:`read_raw` (keyed by kind name) into a LiveState.

    ``consume=True`` empties the lists of ``raw`` as their objects are read, so the raw data
    (child collections included) is freed object by object rather than held until the end.
    ``normal_forms``: as for :func:`read_live`."""
    with collector_paused(promote=True):
        reader = _Reader(normal_forms)
        reader.lookups = lookups_of(raw)
        for kind in kinds.TOP_LEVEL:
            items = raw.get(kind.name, [])
            if consume:
                items.reverse()
                while items:
                    reader.read(kind, items.pop())
                continue
            for obj in items:
                reader.read(kind, obj)
        reader.finish()
    return reader.state
