"""``apimctl diff SOURCE TARGET``: what differs between two areas, or between an area and
manifests, or two sets of manifests (a base with two overlays).

Both sides are read at once (areas concurrently, each in one list call per 1,000 top-level
objects; manifests loaded meanwhile in a thread), exported in one dialect (the source's if it
is an area, else the target's, else ``spec``), rewritten by the ``--rewrite`` rules (a rules
file may name more areas than the two compared) and compared object by object
(:mod:`apimctl.areas.compare`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from apimctl.areas.compare import Comparison, Side, compare
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
from apimctl.areas.rules import load_rules
from apimctl.kinds.dialects import SPEC


@dataclass(frozen=True)
class DiffRequest:
    """The two sides and the rewrite file."""

    source: Source
    target: Source
    rewrite: str | None = None


async def read_side(source: Source) -> Read:
    """One side: an area read, or manifests loaded in a thread (the other side's calls go on)."""
    if isinstance(source, AreaSource):
        return await read_area(source)
    return await asyncio.to_thread(read_manifests, source)


async def diff(request: DiffRequest) -> Comparison:
    """The comparison of the request's two sides."""
    names = [request.source.name, request.target.name]
    if isinstance(request.source, AreaSource) and isinstance(request.target, AreaSource):
        check_names(names)  # an area and its manifests may share the area's name (and rules)
    rules = load_rules(request.rewrite, list(dict.fromkeys(names)), subset=True)
    ours, theirs = await asyncio.gather(read_side(request.source), read_side(request.target),
                                        return_exceptions=True)
    for result in (ours, theirs):
        if isinstance(result, BaseException):
            raise result
    assert isinstance(ours, Read) and isinstance(theirs, Read)
    dialect = (ours.dialect if isinstance(request.source, AreaSource)
               else theirs.dialect if isinstance(request.target, AreaSource) else SPEC)
    mine, yours = all_documents([ours, theirs], dialect)
    sides = [(ours.name, mine), (theirs.name, yours)]
    rules.rewrite(sides)
    rules.compare_references(sides)
    return compare(mine, yours, _side(ours, request.source, dialect.name),
                   _side(theirs, request.target, dialect.name))


def _side(read: Read, source: Source, dialect: str) -> Side:
    own = read.dialect.name if isinstance(source, AreaSource) else "manifests"
    return Side(read.name, read.label, own if own != dialect else dialect)


__all__ = ["DiffRequest", "ManifestSource", "diff", "read_side"]
