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
from typing import TYPE_CHECKING, Any

from apimctl import kinds, workers
from apimctl.kinds import ENDPOINT, ERROR_SET, SERVICE, Kind
from apimctl.kinds.dialects import Dialect, comparable, dialect_of, translated_heads
from apimctl.kinds.error_set import PLATFORM_ERROR_SET
from apimctl.manifests.pipeline import Made
from apimctl.planning.desired import desired_objects
from apimctl.state.digests import Digests, unchanged, unchanged_by, wanted_digests
from apimctl.state.live import LiveObject
from apimctl.state.normalise import Context, normalise

if TYPE_CHECKING:
    from apimctl.planning.desired import Desired
    from apimctl.planning.steps import Builder

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


# What the worker makes of a service it read (:func:`made_of_items`): the dialect, and per
# list of its objects (``""``: the service itself; ``"endpoints"``, ``"errorSets"``) the
# context assumed for each (``None``: not made) and their desired digests one after the other
# (held while the area is read: a few bytes an object)
Ahead = tuple[str, dict[str, tuple[tuple[Context | None, ...], bytes]]]


# the services of large manifests are handed to made_of_items in the worker process
AHEAD_KINDS = frozenset({SERVICE.manifest_key})


def made_of_items(items: Sequence[Made], dialect: str) -> dict[tuple[str, str, int], Ahead]:
    """In the worker process, once large manifests are read (while they are checked here):
    the desired side's digests (:func:`wanted_digests`) of the objects of each service
    (``(file, kind, index, value)``), in ``dialect``, ahead of planning. An endpoint is assumed
    to be compared with the first error set its service declares, or, when it declares none,
    with the one the platform gives a service created without any (SUPPLEMENT §3); planning
    takes the digests only when that, and the dialect, prove true. Objects the dialect's
    translation may change are left out (they are translated first), and so is every object
    of other kinds (the shorthands of the manifests are expanded across files)."""
    table = dialect_of(dialect)
    out: dict[tuple[str, str, int], Ahead] = {}
    contexts: dict[Context, Context] = {}  # one of each: the answer crosses the pipe small
    for file, kind, index, value in items:
        if kind != SERVICE.manifest_key or not isinstance(value, dict):
            continue
        found = desired_objects({kind: [value]})
        sets = [obj.name for obj in found.get(ERROR_SET.name, ())]
        lists: dict[str, list[tuple[Context, Digests] | None]] = {}
        for objs in found.values():
            for obj in objs:
                rel = obj.path[2:]
                if len(rel) not in (0, 2):
                    continue
                name, at = (str(rel[0]), int(rel[1])) if rel else ("", 0)
                made = lists.setdefault(name, [])
                made.extend([None] * (at + 1 - len(made)))
                if obj.kind.read_only or not translated_heads(obj.kind.name).isdisjoint(obj.doc):
                    continue
                ctx = Context(sets[0] if sets else PLATFORM_ERROR_SET) if obj.kind is ENDPOINT else Context()
                ctx = contexts.setdefault(ctx, ctx)
                wanted = wanted_digests(obj.kind, desired_form(obj.kind, obj.doc, ctx, table))
                if wanted is not None:
                    made[at] = (ctx, wanted)
        out[(file, kind, index)] = (dialect, {n: _joined(m) for n, m in lists.items()})
    return out


def _joined(made: list[tuple[Context, Digests] | None]) -> tuple[tuple[Context | None, ...], bytes]:
    size = max((len(m[1]) for m in made if m is not None), default=0)  # one kind: one size
    return (tuple(m[0] if m is not None and len(m[1]) == size else None for m in made),
            b"".join(m[1] if m is not None and len(m[1]) == size else bytes(size) for m in made))


def _ahead(made: Ahead | None, rel: tuple[str | int, ...], dialect: str) -> tuple[Context, Digests] | None:
    """The context assumed and the desired digests :func:`made_of_items` made of the object at
    ``rel`` in its service, in ``dialect``; ``None`` when it made none."""
    if made is None or made[0] != dialect or len(rel) not in (0, 2):
        return None
    found = made[1].get(str(rel[0]) if rel else "")
    at = rel[1] if rel else 0
    if found is None or not isinstance(at, int) or not 0 <= at < len(found[0]):
        return None
    ctx, joined = found
    size = len(joined) // len(ctx)
    assumed = ctx[at]
    return (assumed, joined[at * size:(at + 1) * size]) if assumed is not None else None


class Verdicts:
    """The worker's verdicts on the second half of ``pairs`` that can be told by digest (a
    live object with digests read in the context the builder would compare it in, and no
    rename among the manifests), asked for at once; :meth:`get` answers by index."""

    def __init__(self, builder: Builder, pairs: Sequence[tuple[Desired, LiveObject | None]]) -> None:
        self.at: dict[int, tuple[int, int]] = {}  # pair index -> (batch, position)
        self.batches: list[Future[list[bool]]] = []
        self.answers: dict[int, list[bool] | None] = {}
        self.known: dict[int, bool] = {}  # told by the digests the worker made ahead
        if len(pairs) < APART_FROM or builder.renames:
            return
        # what the worker made of the services it read (a manifest loaded in parts)
        made: Mapping[tuple[str | int, ...], Ahead] = getattr(builder.manifest, "made_apart", dict)()
        left: list[int] = []  # the pairs the digests made ahead do not tell
        for index, (obj, live) in enumerate(pairs):
            if live is None or live.norm is None or obj.kind.read_only:
                continue
            found = _ahead(made.get(obj.path[:2]), obj.path[2:], builder.dialect.name) if made else None
            if found is not None:
                desired_ctx, live_ctx = builder.contexts.of(obj, live)
                if found[0] == desired_ctx and live.context == live_ctx:
                    self.known[index] = unchanged_by(obj.kind, live.norm, found[1])
                    continue
            left.append(index)
        items: list[tuple[int, _Item]] = []
        for index in left[int(len(left) * (1 - WORKER_SHARE)):]:
            obj, live = pairs[index]
            desired_ctx, live_ctx = builder.contexts.of(obj, live)
            if live is not None and live.norm is not None and live.context == live_ctx:
                items.append((index, (obj.kind.name, obj.doc, desired_ctx, builder.dialect.name,
                                      live.norm)))
        for start in range(0, len(items), BATCH):
            batch = items[start:start + BATCH]
            future = workers.submit(told, [item for _, item in batch])
            if future is None:
                return  # no worker: the builder tells them all
            self.at.update((index, (len(self.batches), n)) for n, (index, _) in enumerate(batch))
            self.batches.append(future)

    def get(self, index: int) -> bool:
        """Whether pair ``index`` is known to be unchanged (``False``: not known)."""
        if index in self.known:
            return self.known[index]
        found = self.at.get(index)
        if found is None:
            return False
        batch, position = found
        if batch not in self.answers:
            self.answers[batch] = workers.result(self.batches[batch])
        answers = self.answers[batch]
        return answers is not None and answers[position]
