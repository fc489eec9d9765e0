"""``apimctl diff SOURCE TARGET``: what differs between two areas, or between an area and
manifests, or two sets of manifests (a base with two overlays).

Both sides are read at once (areas concurrently, each in one list call per 1,000 top-level
objects; manifests loaded meanwhile in a thread), exported in one dialect (the source's if it
is an area, else the target's, else ``spec``), rewritten by the ``--rewrite`` rules (a rules
file may name more areas than the two compared) and compared object by object
(:mod:`apimctl.areas.compare`).

Two areas of one dialect are read with the digests of their objects' documents: a
top-level object both hold alike, it and everything under it (:func:`apimctl.state.alike.alike`),
is identical without being exported, when the rules rewrite both sides alike (no rule gives
the two areas different values) and nothing under it names a data source (whose export
follows the references to it). Only the other objects are exported and compared.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from apimctl import kinds
from apimctl.areas.compare import compare
from apimctl.areas.reading import (
    AreaSource,
    ManifestSource,
    Read,
    Source,
    all_documents,
    check_names,
    read_area,
    read_manifests,
)
from apimctl.areas.rules import Rules, load_rules
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import CatalogItems
from apimctl.kinds.dialects import SPEC
from apimctl.plans.comparison import Comparison, Side
from apimctl.state.alike import Subtrees, alike, without


@dataclass(frozen=True)
class DiffRequest:
    """The two sides and the rewrite file."""

    source: Source
    target: Source
    rewrite: str | None = None


async def read_side(source: Source, *, digested: bool = False, elsewhere: bool = False) -> Read:
    """One side: an area read (``digested``: with the digests of its objects' documents;
    ``elsewhere``: by the worker process when it can, :func:`read_area`), or manifests loaded
    in a thread (the other side's calls go on)."""
    if isinstance(source, AreaSource):
        return await read_area(source, digested=digested, elsewhere=elsewhere)
    return await asyncio.to_thread(read_manifests, source)


async def diff(request: DiffRequest) -> Comparison:
    """The comparison of the request's two sides."""
    names = [request.source.name, request.target.name]
    if isinstance(request.source, AreaSource) and isinstance(request.target, AreaSource):
        check_names(names)  # an area and its manifests may share the area's name (and rules)
    rules = load_rules(request.rewrite, list(dict.fromkeys(names)), subset=True)
    areas = isinstance(request.source, AreaSource) and isinstance(request.target, AreaSource)
    digests = areas and _alike_rewritten(rules, names)
    ours, theirs = await asyncio.gather(read_side(request.source, digested=digests),
                                        read_side(request.target, digested=digests,
                                                  elsewhere=areas),
                                        return_exceptions=True)
    for result in (ours, theirs):
        if isinstance(result, BaseException):
            raise result
    assert isinstance(ours, Read) and isinstance(theirs, Read)
    dialect = (ours.dialect if isinstance(request.source, AreaSource)
               else theirs.dialect if isinstance(request.target, AreaSource) else SPEC)
    held: Subtrees = {}
    if digests and ours.dialect == theirs.dialect:
        held = alike(ours.live, theirs.live, _comparable_by_digests())
        ours.live, theirs.live = without(ours.live, held), without(theirs.live, held)
    mine, yours = all_documents([ours, theirs], dialect)
    sides = [(ours.name, mine), (theirs.name, yours)]
    rules.rewrite(sides)
    rules.compare_references(sides)
    out = compare(mine, yours, _side(ours, request.source, dialect.name),
                  _side(theirs, request.target, dialect.name))
    out.identical += _identical(held)
    return out


def _alike_rewritten(rules: Rules, names: list[str]) -> bool:
    """Whether the rules rewrite both sides alike: no rule gives the two different values."""
    return all(len({rule.values[n] for n in names}) == 1 for rule in rules.rules)


def _comparable_by_digests() -> frozenset[str]:
    """The top-level kinds whose objects, and those under them, name no data source: an
    export of one is the same whatever else the area holds."""
    def clean(kind: Kind) -> bool:
        return (not kind.read_only and all(not kinds.get(r.kind).read_only for r in kind.references)
                and all(clean(c) for c in kinds.children_of(kind)))

    return frozenset(k.name for k in kinds.TOP_LEVEL if clean(k))


def _identical(held: Subtrees) -> int:
    """The objects :func:`compare` would count identical in the subtrees held alike: each
    top-level one, and those under it that an export writes (an error set alone and at the
    platform's defaults is not written)."""
    count = 0
    for subtrees in held.values():
        for below in subtrees.values():
            count += 1
            lists: dict[tuple[str, str | None], list[str]] = {}
            for obj in below:
                lists.setdefault((obj.kind, obj.parent_key), []).append(obj.name)
            for (kind_name, _), found in lists.items():
                kind = kinds.get(kind_name)
                catalog = kinds.capability(kind, CatalogItems)
                if catalog is None or catalog.written([{kind.identity: n} for n in found]):
                    count += len(found)
    return count


def _side(read: Read, source: Source, dialect: str) -> Side:
    own = read.dialect.name if isinstance(source, AreaSource) else "manifests"
    return Side(read.name, read.label, own if own != dialect else dialect)


__all__ = ["DiffRequest", "ManifestSource", "diff", "read_side"]
