"""Which matched objects are unchanged, half of them told in the worker process.

Planning a large area spends most of its time telling the unchanged objects apart: each
desired object's normal form in the target's dialect (:func:`desired_form`), compared by
digest with its live object's (:func:`apimctl.state.digests.unchanged`). That is pure work
on small data, so :class:`Verdicts` sends the second half of those comparisons to the worker
process (:mod:`apimctl.workers`) while the :class:`~apimctl.planning.steps.Builder` goes
through the first half, then takes the worker's answers: ``True`` (unchanged: nothing to
normalise or diff here) or unknown (a changed object, or no answer), which the builder then
compares itself, as it does every pair of a small plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from apimctl import kinds, workers
from apimctl.kinds import Kind
from apimctl.kinds.dialects import Dialect, comparable, dialect_of
from apimctl.planning.contexts import Contexts, Pair
from apimctl.state.digests import Digests, unchanged
from apimctl.state.normalise import Context, normalise

# Pairs that pay for the worker (fewer are all told by the builder), and pairs per call.
APART_FROM = 10_000
BATCH = 1000
WORKER_SHARE = 0.5  # the last pairs, told there

_Item = tuple[str, dict[str, Any], Context, str, Digests]


def desired_form(kind: Kind, doc: Mapping[str, Any], ctx: Context, dialect: Dialect) -> dict[str, Any]:
    """The normal form a desired object is compared in: normalised in ``ctx``, in the
    target's dialect."""
    want = normalise(kind, doc, ctx)
    comparable(kind.name, None, want, doc, dialect)
    return want


def told(items: Sequence[_Item]) -> list[bool]:
    """For each ``(kind name, desired document, its context, dialect name, live digests)``,
    whether the live object is unchanged (in the worker process)."""
    out = []
    for name, doc, ctx, dialect, norm in items:
        kind = kinds.get(name)
        out.append(unchanged(kind, norm, desired_form(kind, doc, ctx, dialect_of(dialect))))
    return out


class Verdicts:
    """The worker's verdicts on the second half of ``pairs`` that can be told by digest (a
    live object with digests read in the context it is compared in, ``contexts``), asked for
    at once, in the target's ``dialect`` (its name); none when the manifests rename objects
    (``renamed``: live references are renamed before comparing). :meth:`get` answers by
    index."""

    def __init__(self, pairs: Sequence[Pair], contexts: Contexts, dialect: str, *,
                 renamed: bool = False) -> None:
        self.at: dict[int, tuple[int, int]] = {}  # pair index -> (batch, position)
        self.batches: list[Future[list[bool]]] = []
        self.answers: dict[int, list[bool] | None] = {}
        if len(pairs) < APART_FROM or renamed:
            return
        left = [index for index, (obj, live) in enumerate(pairs)
                if live is not None and live.norm is not None and not obj.kind.read_only]
        items: list[tuple[int, _Item]] = []
        for index in left[int(len(left) * (1 - WORKER_SHARE)):]:
            obj, live = pairs[index]
            desired_ctx, live_ctx = contexts.of(obj, live)
            if live is not None and live.norm is not None and live.context == live_ctx:
                items.append((index, (obj.kind.name, obj.doc, desired_ctx, dialect, live.norm)))
        for start in range(0, len(items), BATCH):
            batch = items[start:start + BATCH]
            future = workers.submit(told, [item for _, item in batch])
            if future is None:
                return  # no worker: the builder tells them all
            self.at.update((index, (len(self.batches), n)) for n, (index, _) in enumerate(batch))
            self.batches.append(future)

    def get(self, index: int) -> bool:
        """Whether pair ``index`` is known to be unchanged (``False``: not known)."""
        found = self.at.get(index)
        if found is None:
            return False
        batch, position = found
        if batch not in self.answers:
            self.answers[batch] = workers.result(self.batches[batch])
        answers = self.answers[batch]
        return answers is not None and answers[position]
