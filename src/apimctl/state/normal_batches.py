"""The normal forms of a large area's live objects, made on two cores.

:class:`apimctl.state.live._Reader` hands each live object to :class:`NormalBatches`, which
makes the digests of its normal form (:attr:`~apimctl.state.objects.LiveObject.norm`) in batches:
in the worker process (:mod:`apimctl.workers`) once the area has shown enough objects to pay for
it, here otherwise.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from apimctl import kinds, workers
from apimctl.kinds import Kind
from apimctl.kinds.dialects import without_unmanaged
from apimctl.kinds.ops import Context
from apimctl.speed import collector_paused
from apimctl.state.digests import Digests, digests
from apimctl.state.normalise import normalise
from apimctl.state.objects import LiveObject
from apimctl.state.packing import Packer

# Objects whose normal forms are made together: in the worker process (:mod:`apimctl.workers`)
# while the reading goes on, once the area has proved large enough to pay for starting it
# (started after WARM_UP objects, used after OFFLOAD_AFTER; from the first batch when it is
# running already, started for the manifests).
NORMAL_BATCH = 1000
WARM_UP = 2_000
OFFLOAD_AFTER = 4_000
_AHEAD = 4  # batches the worker may have waiting


class NormalBatches:
    """The digests of the live objects' normal forms (:attr:`LiveObject.norm`), made in
    batches of :data:`NORMAL_BATCH` objects: in a large area, each full batch goes to the
    worker process, which makes them while this process reads on (half the time of reading
    the area); the last batch, and every batch when there is no worker, is made here. The
    worker gets each document as packed (a few dozen bytes, with its kind's preset
    dictionary) and gives the same result as :func:`normal_digests` here; a batch it could
    not make is made here from the objects."""

    def __init__(self) -> None:
        self.seen = 0
        self.batch: list[tuple[str, bytes, bytes | None, Context]] = []
        self.objects: list[LiveObject] = []
        self.sent: list[tuple[Future[list[Digests | None]] | None, list[LiveObject]]] = []

    def add(self, obj: LiveObject, kind: Kind, doc: dict[str, Any], ctx: Context) -> None:
        packed = obj.packed
        if packed is None:  # no encoding to send: made here, now
            obj.norm = live_digests(kind, normalise(kind, doc, ctx))
            return
        self.batch.append((kind.name, *packed, ctx))
        self.objects.append(obj)
        self.seen += 1
        if self.seen == WARM_UP:
            workers.warm_up()
        if len(self.batch) >= NORMAL_BATCH:
            # a small area, or the worker busy with four batches already: this one here (the
            # two processes share the work as fast as each goes, no batch waits long in memory)
            waiting = sum(1 for sent, _ in self.sent[-_AHEAD:] if sent is not None and not sent.done())
            offload = (self.seen >= OFFLOAD_AFTER or workers.running()) and waiting < _AHEAD
            future = workers.submit(normal_digests, self.batch) if offload else None
            if future is None:
                _fill(self.objects, normal_digests(self.batch))
            else:
                self.sent.append((future, self.objects))
            self.batch, self.objects = [], []

    def finish(self) -> None:
        """The last batch made here (while the worker finishes its own), then the worker's
        answers."""
        _fill(self.objects, normal_digests(self.batch))
        self.batch, self.objects = [], []
        for future, objects in self.sent:
            found = workers.result(future)
            if found is None:
                found = [live_digests(kinds.get(o.kind), normalise(kinds.get(o.kind), o.doc, o.context))
                         for o in objects]
            _fill(objects, found)
        self.sent = []


def _fill(objects: list[LiveObject], norms: list[Digests | None]) -> None:
    for obj, norm in zip(objects, norms, strict=True):
        obj.norm = norm


def normal_digests(batch: list[tuple[str, bytes, bytes | None, Context]]) -> list[Digests | None]:
    """The digests of the normal forms of packed live documents, each ``(kind name, packed
    bytes, the preset dictionary they were deflated against, context)`` (in the worker
    process, or here)."""
    with collector_paused():  # acyclic: the normal forms are freed as they are digested
        out: list[Digests | None] = []
        memo: dict[Any, Any] = {}  # the batch's objects share the normal forms of their nested values
        packers: dict[bytes | None, Packer] = {}
        for name, packed, zdict, ctx in batch:
            kind = kinds.get(name)
            packer = packers.get(zdict) or packers.setdefault(zdict, Packer(zdict))
            out.append(live_digests(kind, normalise(kind, packer.unpack(packed), ctx, memo=memo)))
        return out


def live_digests(kind: Kind, normal: dict[str, Any]) -> Digests | None:
    """The digests of a live object's normal form (``normal``, taken apart), without the
    fields of real deployments apimctl does not manage (SUPPLEMENT §10.8,
    :func:`~apimctl.kinds.dialects.without_unmanaged`): a comparison leaves them out unless
    the manifest names one, whose desired form then differs from these digests (and is
    diffed)."""
    without_unmanaged(kind, normal)
    return digests(kind, normal)
