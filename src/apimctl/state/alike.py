"""The top-level objects two live models hold alike, told by digests.

Two areas read with the digests of their documents (:func:`apimctl.state.live.read_live`,
``digested``: :attr:`LiveObject.doc_digest`) or of their normal forms (``normal_forms``:
:attr:`LiveObject.norm`) keep them per object. A top-level object is held alike when both
models hold it under one key, and it and every object under it (the same keys on both sides)
have equal digests in equal contexts: everything made of an object (its normal form, an
export, a plan) is made of its document and its context alone, so it is then the same on both
sides, and ``apimctl diff`` exports and compares only the others (:func:`without`). Equal
documents are the stronger test: objects alike in their normal forms only (a default written
out on one side, keys in another order) are not held alike by their documents, and are
compared in full, with the same outcome. An object without digests (a data source, a document
without an encoding) is never held alike.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.state.objects import LiveObject, LiveState

Subtrees = dict[str, dict[str, list[LiveObject]]]  # top-level kind -> key -> the objects under it


def alike(ours: LiveState, theirs: LiveState, top_level: Collection[str]) -> Subtrees:
    """Per top-level kind of ``top_level`` (names), the objects ``ours`` and ``theirs`` hold
    alike: key -> the objects of ``ours`` under it (itself not included)."""
    mine, yours = _subtrees(ours, top_level), _subtrees(theirs, top_level)
    out: Subtrees = {}
    for top, (obj, below) in mine.items():
        other = yours.get(top)
        if other is None or not _same(obj, other[0]) or len(below) != len(other[1]):
            continue
        pairs = zip(sorted(below, key=_order), sorted(other[1], key=_order), strict=True)
        if all(_order(a) == _order(b) and _same(a, b) for a, b in pairs):
            out.setdefault(top[0], {})[top[1]] = below
    return out


def without(live: LiveState, held: Mapping[str, Mapping[str, Any]]) -> LiveState:
    """``live`` without the top-level objects ``held`` names (kind -> keys) and every object
    under them (a new model; the objects are shared)."""
    gone: set[tuple[str, str]] = {(kind, key) for kind, keys in held.items() for key in keys}
    out = LiveState(spelled=live.spelled, skipped=live.skipped, refused=live.refused)
    for kind in _descending():
        parent = kind.parent
        for obj in live.of(kind.name):
            if (kind.name, obj.key) in gone or (parent is not None and (parent, obj.parent_key) in gone):
                gone.add((kind.name, obj.key))
                continue
            out.objects.setdefault(kind.name, []).append(obj)
    return out


def _subtrees(live: LiveState, top_level: Collection[str]) -> dict[tuple[str, str], tuple[LiveObject, list[LiveObject]]]:
    """(kind, key) of each top-level object of ``top_level`` -> it and the objects under it."""
    out: dict[tuple[str, str], tuple[LiveObject, list[LiveObject]]] = {}
    top_of: dict[tuple[str, str], tuple[str, str]] = {}
    for kind in _descending():
        parent = kind.parent
        for obj in live.of(kind.name):
            if parent is None:
                if kind.name in top_level:
                    top_of[(kind.name, obj.key)] = (kind.name, obj.key)
                    out[(kind.name, obj.key)] = (obj, [])
                continue
            top = top_of.get((parent, obj.parent_key or ""))
            if top is not None:
                top_of[(kind.name, obj.key)] = top
                out[top][1].append(obj)
    return out


def _descending() -> Iterator[Kind]:
    """Every kind, each after its parent."""
    level = list(kinds.TOP_LEVEL)
    while level:
        yield from level
        level = [child for kind in level for child in kinds.children_of(kind)]


def _order(obj: LiveObject) -> tuple[str, str]:
    return obj.kind, obj.key


def _same(a: LiveObject, b: LiveObject) -> bool:
    if a.doc_digest is not None and b.doc_digest is not None:
        same = a.doc_digest == b.doc_digest
    else:
        same = a.norm is not None and a.norm == b.norm
    return same and a.context == b.context and a.name == b.name and a.key == b.key
