"""Which matched objects are unchanged, many of them told in the worker process.

Planning a large area spends most of its time telling the unchanged objects apart: each
desired object's normal form in the target's dialect (:func:`desired_form`), compared by
digest with its live object's (:func:`apimctl.state.digests.unchanged`). That is pure work
on small data, so :class:`Verdicts` sends batches of the last comparisons to the worker
process (:mod:`apimctl.workers`) while the :class:`~apimctl.planning.steps.Builder` goes
through the pairs from the first, until the two meet; the builder takes the worker's answers
for the pairs it reaches: ``True`` (unchanged: nothing to normalise or diff here) or unknown
(a changed object, or no answer yet), which the builder then compares itself, as it does
every pair of a small plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apimctl import kinds, workers
from apimctl.kinds import Kind
from apimctl.kinds.dialects import Dialect, comparable, dialect_of
from apimctl.planning.contexts import Contexts, Pair
from apimctl.state.digests import Digests, unchanged
from apimctl.state.normalise import Context, normalise

# Pairs that pay for the worker (fewer are all told by the builder), pairs per call, and
# calls sent ahead (enough to keep the worker busy while the builder checks the routes).
APART_FROM = 10_000
BATCH = 1000
AHEAD = 6

_Item = tuple[str, dict[str, Any], Context, str, Digests]


def desired_form(kind: Kind, doc: Mapping[str, Any], ctx: Context, dialect: Dialect) -> dict[str, Any]:
    """The normal form a desired object is compared in: normalised in ``ctx``, in the
    target's dialect."""
    want = normalise(kind, doc, ctx)
    comparable(kind, None, want, doc, dialect)
    return want


def told(items: Sequence[_Item | None]) -> list[bool]:
    """For each ``(kind name, desired document, its context, dialect name, live digests)``,
    whether the live object is unchanged (in the worker process); ``False`` for ``None``."""
    out = []
    for item in items:
        if item is None:
            out.append(False)
            continue
        name, doc, ctx, dialect, norm = item
        kind = kinds.get(name)
        out.append(unchanged(kind, norm, desired_form(kind, doc, ctx, dialect_of(dialect))))
    return out


class Verdicts:
    """The worker's verdicts on the last of ``pairs`` that can be told by digest (a live
    object with digests read in the context it is compared in, ``contexts``), in the
    target's ``dialect`` (its name): the builder goes through the pairs from the first, the
    worker takes batches of the last ones until they meet
    (:class:`~apimctl.workers.FromBothEnds`). None when the manifests rename objects
    (``renamed``: live references are renamed before comparing). :meth:`get` answers by
    index, asked in increasing order."""

    def __init__(self, pairs: Sequence[Pair], contexts: Contexts, dialect: str, *,
                 renamed: bool = False) -> None:
        self.shared: workers.FromBothEnds[bool] | None = None
        if len(pairs) >= APART_FROM and not renamed:
            self.shared = workers.FromBothEnds(
                workers.runs_from_end([1] * len(pairs), BATCH),
                lambda start, end: (told, (_items(pairs[start:end], contexts, dialect),)),
                ahead=AHEAD)

    def get(self, index: int) -> bool:
        """Whether pair ``index`` is known to be unchanged (``False``: not known)."""
        if self.shared is None:
            return False
        found, unchanged_ = self.shared.get(index)
        return found and bool(unchanged_)


def _items(pairs: Sequence[Pair], contexts: Contexts, dialect: str) -> list[_Item | None]:
    """What the worker needs to tell each pair (``None``: a pair it cannot tell)."""
    out: list[_Item | None] = []
    for obj, live in pairs:
        item = None
        if live is not None and live.norm is not None and not obj.kind.read_only:
            desired_ctx, live_ctx = contexts.of(obj, live)
            if live.context == live_ctx:
                item = (obj.kind.name, obj.doc, desired_ctx, dialect, live.norm)
        out.append(item)
    return out
