"""Whether each matched pair is unchanged: the one question the builder asks, however it is
answered.

Planning a large area spends most of its time telling the unchanged objects apart. The
:class:`~apimctl.planning.steps.Builder` asks a :class:`Comparer` of each pair
(:meth:`Comparer.unchanged`) and, for a changed one, takes the forms the diff compares
(:meth:`Comparer.diff_forms`); it never learns how the answer was found, which is one of:

- the worker's verdict: pure work on small data, so for a large plan batches of the last
  comparisons go to the worker process (:mod:`apimctl.workers`) while the builder goes
  through the pairs from the first, until the two meet (:class:`~apimctl.workers.FromBothEnds`);
  the worker answers ``True`` (unchanged) or nothing (a changed object, or no answer yet);
- the digests: the desired object's normal form in the target's dialect
  (:func:`apimctl.state.normalise.desired_form`) compared by digest with the live object's,
  made as the area was read (:func:`apimctl.state.digests.unchanged`);
- neither (the live form read in another context, or references renamed first): the pair is
  left to the diff, which finds no change when there is none.

Every way gives the same plan; a faster one only spares work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apimctl import kinds, workers
from apimctl.kinds.dialects import Dialect, comparable, dialect_of
from apimctl.planning.contexts import Contexts, Pair
from apimctl.planning.desired import Desired
from apimctl.state.digests import Digests, unchanged
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import Context, desired_form, normalise

# Pairs that pay for the worker (fewer are all told here), pairs per call, and calls sent
# ahead (enough to keep the worker busy while the builder checks the routes).
APART_FROM = 10_000
BATCH = 1000
AHEAD = 6

_Item = tuple[str, dict[str, Any], Context, str, Digests]


def prepare() -> None:
    """Have a running worker ready for the comparisons of a large plan (nothing is started
    or waited for)."""
    workers.prepare(__name__)


class Comparer:
    """Tells the builder whether each of ``pairs`` (matched in ``live``, ``live_of``) is
    unchanged in the target's ``dialect``. ``renamed``: the manifests rename objects, so the
    live references are renamed before comparing (no live form read can tell the pair)."""

    def __init__(self, pairs: Sequence[Pair], live: LiveState,
                 live_of: Mapping[str, LiveObject | None], dialect: Dialect, *,
                 renamed: bool = False) -> None:
        self.pairs = pairs
        self.dialect = dialect
        self.renamed = renamed
        self.contexts = Contexts(pairs, live, live_of)
        self.shared: workers.FromBothEnds[bool] | None = None
        self.started = False
        # the desired form and live context of the pair last compared, for its diff
        self._last: tuple[Desired, dict[str, Any], Context] | None = None

    def start(self) -> None:
        """Start telling the pairs apart now, when not yet: the worker takes the last pairs
        of a large plan while the builder does other work."""
        if self.started:
            return
        self.started = True
        if len(self.pairs) >= APART_FROM and not self.renamed:
            pairs, contexts, dialect = self.pairs, self.contexts, self.dialect.name
            self.shared = workers.FromBothEnds(
                workers.runs_from_end([1] * len(pairs), BATCH),
                lambda start, end: (told, (_items(pairs[start:end], contexts, dialect),)),
                ahead=AHEAD)

    def unchanged(self, index: int, obj: Desired, live: LiveObject) -> bool:
        """Whether pair ``index`` (``obj``, ``live``) is unchanged: nothing to diff. ``False``
        may also mean not known this way (:meth:`diff_forms` then)."""
        self.start()
        if self.shared is not None:
            found, verdict = self.shared.get(index)
            if found and verdict:
                return True
        want, live_ctx = self._forms(obj, live)
        # ``want`` is in the target's dialect; a live form equal to it is too, and holds no
        # field of real deployments the manifest leaves out
        return (live.norm is not None and live.context == live_ctx and not self.renamed
                and unchanged(kinds.get(live.kind), live.norm, want))

    def desired_form(self, obj: Desired) -> dict[str, Any]:
        """The normal form of a desired object with no live object: what a create writes."""
        return self._forms(obj, None)[0]

    def diff_forms(self, obj: Desired, live: LiveObject, live_doc: Mapping[str, Any]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The live and desired normal forms of a pair to diff, ``live_doc`` being the live
        document as the diff sees it (its references renamed)."""
        want, live_ctx = self._forms(obj, live)
        have = normalise(obj.kind, live_doc, live_ctx)
        comparable(obj.kind, have, want, obj.doc, self.dialect)
        return have, want

    def _forms(self, obj: Desired, live: LiveObject | None) -> tuple[dict[str, Any], Context]:
        """The desired form of ``obj`` and the live side's context, made once per pair."""
        last = self._last
        if last is not None and last[0] is obj:
            return last[1], last[2]
        desired_ctx, live_ctx = self.contexts.of(obj, live)
        want = desired_form(obj.kind, obj.doc, desired_ctx, self.dialect)
        self._last = (obj, want, live_ctx)
        return want, live_ctx


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
