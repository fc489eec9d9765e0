"""The read apply plans from: the read ``plan`` makes, and what apply keeps of it, taken on
the way.

Called by the apply command (:mod:`apimctl.applying.command`), :func:`apimctl.applying.run.apply_plan`
(a saved plan) and the benchmarks. Besides the live model planning compares, apply needs the
live id of everything its writes may name (:class:`~apimctl.applying.bodies.LiveIndex`: methods
too, which the live model does not keep) and the area's
:class:`~apimctl.applying.snapshot.Snapshot` for the check under the lease. The area is read by
:func:`apimctl.state.live.read_live`, as ``plan`` reads it, through :class:`Watched`: the client
as the reader sees it, showing every top-level object it lists to a :class:`Keeper` on its way
to the reader. So apply never holds the area's raw lists beside the live model, nor longer
than ``plan`` does; once the plan is made only the kept ids and digests remain.

A resumed run (``apply --resume``) reads less (:func:`resume_reads`): only the collections
the steps its journal left undone need (their own top-level kinds and those they reference),
and plans only their top-level objects, as ``--target`` would.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.applying.bodies import LiveIndex
from apimctl.applying.snapshot import Snapshot
from apimctl.kinds import Kind
from apimctl.state import live
from apimctl.state.live import DATA_SOURCES, Lister, LiveState


@dataclass
class Keeper:
    """What apply keeps of a read of the area: the live ids and the area's snapshot."""

    index: LiveIndex = field(default_factory=LiveIndex)
    snapshot: Snapshot = field(default_factory=Snapshot)

    def see(self, kind: Kind, item: Mapping[str, Any]) -> None:
        """One top-level object as listed (with its child objects)."""
        if kinds.ROLES.reserved(kind, item.get(kind.identity)):
            return
        self.index.add_tree(kind, item)
        self.snapshot.add(kind, item)

    async def read(self, client: Lister, *, meanwhile: Callable[[], object] | None = None,
                   skip: Collection[str] = DATA_SOURCES) -> LiveState:
        """The live state of the client's area, read as :func:`read` reads it, keeping here
        what apply keeps of it (a reader :func:`apimctl.planning.build.read_and_plan` takes)."""
        return await live.read_live(Watched(client, self), meanwhile=meanwhile, skip=skip)


class Watched:
    """``client`` as :func:`apimctl.state.live.read_live` sees it: the objects of every
    top-level list it reads (``list_all`` or ``pages``) are shown to ``keeper`` as the reader
    takes them."""

    def __init__(self, client: Lister, keeper: Keeper) -> None:
        self._client = client
        self._keeper = keeper
        self._kinds = {k.collection_path(): k for k in kinds.TOP_LEVEL}

    async def list_all(self, path: str, params: Any = None, **options: Any) -> list[dict[str, Any]]:
        items = await self._client.list_all(path, params, **options)
        kind = self._kinds.get(path)
        if kind is not None:
            for item in items:
                self._keeper.see(kind, item)
        return items

    async def pages(self, path: str, params: Any = None, **options: Any
                    ) -> AsyncGenerator[Iterable[dict[str, Any]], None]:
        kind = self._kinds.get(path)
        async for page in self._client.pages(path, params, **options):
            yield page if kind is None else self._shown(kind, page)

    def _shown(self, kind: Kind, page: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for item in page:  # items may be decoded one at a time: never all at once here
            self._keeper.see(kind, item)
            yield item


async def read(client: Lister, meanwhile: Callable[[], object] | None = None,
               skip: Collection[str] = DATA_SOURCES) -> tuple[LiveState, Keeper]:
    """The live state of the client's area (as ``plan`` reads it, ``meanwhile`` and ``skip``
    too: by default no data source, which apply lists only when a step names one of its
    objects, :func:`apimctl.applying.run.add_read_only`), and what apply keeps of it."""
    keeper = Keeper()
    return await keeper.read(client, meanwhile=meanwhile, skip=skip), keeper


@dataclass(frozen=True)
class ResumeReads:
    """What the resume of a run reads and plans: ``skip`` the top-level kinds not read at all,
    ``targets`` the top-level objects of the steps left undone (``KIND:KEY``, as ``--target``)."""

    skip: frozenset[str]
    targets: tuple[str, ...]


def resume_reads(remaining: Collection[tuple[str, str]] | None) -> ResumeReads | None:
    """What resuming a run whose steps ``remaining`` (``(action, address)``) are left undone
    needs of the area: the collections of their top-level objects and, transitively, of every
    kind one of those (or an object inside one) references; the other collections are not
    read. ``None`` (read the whole area) when there is no resume, or when the journal cannot
    tell: no step left, or an address of no known kind."""
    if not remaining:
        return None
    needed: set[str] = set()
    targets: set[str] = set()
    try:
        for _action, addr in remaining:
            name, _, key = addr.partition(":")
            kind = kinds.get(name)
            while kind.parent is not None:
                key = kinds.split_key(kind, key)[0] or ""
                kind = kinds.get(kind.parent)
            if not key:
                return None
            needed.add(kind.name)
            targets.add(f"{kind.name}:{key}")
    except (KeyError, ValueError):
        return None
    todo = list(needed)
    while todo:
        for inner in _within(kinds.get(todo.pop())):
            for ref in inner.references:
                top = _top(kinds.get(ref.kind))
                if top.name not in needed:
                    needed.add(top.name)
                    todo.append(top.name)
    return ResumeReads(frozenset(k.name for k in kinds.TOP_LEVEL if k.name not in needed),
                       tuple(sorted(targets)))


def _within(kind: Kind) -> Iterator[Kind]:
    """``kind`` and every kind nested in it."""
    yield kind
    for child in kinds.children_of(kind):
        yield from _within(child)


def _top(kind: Kind) -> Kind:
    while kind.parent is not None:
        kind = kinds.get(kind.parent)
    return kind
