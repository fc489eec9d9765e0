"""A second process for the heavy, pure parts of a large run.

apimctl's work is CPU-bound Python, and Python runs it on one core. Parts of a large run are
pure functions of data that crosses a pipe cheaply; they go to one worker process while this
one goes on: the normal forms of the live objects are made there while this process reads the
rest of the area (:mod:`apimctl.state.live`).

Work whose items can be split anywhere (the manifest files, the matched pairs of a plan) is
shared by :class:`FromBothEnds`: this process from the first item, the worker from the last,
meeting where their speeds say, so that no fixed share has to fit every machine and input.

Callers decide what is big enough to pay for the worker (it is a fresh interpreter: a tenth of
a second to start, on the other core); small runs never start one. The work is also done in
this process, with the same functions and the same results, whenever the worker cannot help:
``APIMCTL_WORKERS=0``, a machine with one core, a worker that cannot be started (a frozen
executable, no process support) or that fails or dies: :func:`submit` then returns ``None``
and :func:`result` ``None``, and the caller does the work itself.

The worker is ``python -m apimctl.workers``, fed pickled calls on its stdin and answering on
its stdout, in order. A plain child process rather than :mod:`multiprocessing`: that starts
its workers by running the caller's ``__main__`` again (``spawn``, ``forkserver``), which
runs a script's whole work twice when it lacks the ``if __name__ == "__main__"`` guard, or by
forking this process with its threads (an embedded server's), which may deadlock.
"""

from __future__ import annotations

import asyncio
import atexit
import bisect
import collections
import contextlib
import importlib
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from apimctl.speed import collector_paused

ENV = "APIMCTL_WORKERS"
_T = TypeVar("_T")
_HEADER = struct.Struct("!Q")
_lock = threading.Lock()
_worker: _Worker | None = None
_unavailable = False


class WorkerError(Exception):
    """The worker could not answer (it failed to start, died, or its answer was lost)."""


class CallFailed(Exception):
    """The function sent to the worker raised (its type and message)."""


def enabled() -> bool:
    """Whether a worker may be used: not turned off (``APIMCTL_WORKERS=0``), more than one
    core, and none has failed in this process yet."""
    if _unavailable or os.environ.get(ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return False
    return (os.cpu_count() or 1) > 1


def submit(fn: Callable[..., _T], *args: Any) -> Future[_T] | None:
    """``fn(*args)`` sent to the worker (started now when not yet running), or ``None`` when no
    worker can take it: the caller then does the work itself. ``fn`` must be a module-level
    function of apimctl; ``args`` must pickle."""
    worker = _get()
    return worker.submit(fn, args) if worker is not None else None


def result(future: Future[_T] | None) -> _T | None:
    """The worker's answer, or ``None`` when it failed for any reason (the worker died, the
    answer could not be read, ``fn`` raised): the caller does the work itself, and raises the
    error itself when the work is at fault."""
    if future is None:
        return None
    try:
        return future.result()
    except WorkerError:
        _give_up()
        return None
    except Exception:  # fn failed: redone by the caller, where a real error is raised again
        return None


async def awaited(future: Future[_T] | None) -> _T | None:
    """:func:`result` for a coroutine: the worker's answer awaited without blocking the event
    loop (this process's own reads go on meanwhile), ``None`` when it failed."""
    if future is None:
        return None
    try:
        return await asyncio.wrap_future(future)
    except WorkerError:
        _give_up()
        return None
    except Exception:  # fn failed: redone by the caller, where a real error is raised again
        return None


def prepare(module: str) -> None:
    """Have a running worker import ``module`` now, before work that needs it arrives (nothing
    is started or waited for)."""
    with _lock:
        worker = _worker if enabled() else None
    if worker is not None:
        worker.submit(_load, (module,))


def _load(module: str) -> None:
    importlib.import_module(module)


def running() -> bool:
    """Whether a worker has been started in this process and can take work now (it has
    started up already, or is starting: nothing is started or waited for)."""
    with _lock:
        worker = _worker
    return worker is not None and not worker.closed and enabled()


def warm_up() -> None:
    """Start the worker now (it starts in the background: nothing is waited for)."""
    _get()


class FromBothEnds(Generic[_T]):
    """Numbered items worked on by both processes, meeting where their speeds say:
    this process goes through them from the first, asking :meth:`get` about each in turn,
    while the worker takes runs of the last ones, run by run toward the first, never more
    than ``ahead`` runs at a time. :meth:`get` gives the worker's result for an item when
    its run is done; otherwise (not sent, not done yet, the worker failed) this process
    works on the item itself. So no fixed share has to fit both machines and inputs, and at
    most ``ahead`` runs are worked on twice.

    ``runs``: where each run starts and ends, the last run first (:func:`runs_from_end`);
    ``call``: the function the worker runs and its arguments for ``(start, end)``, giving one
    result per item. Callers decide which inputs are large enough; when no worker can be
    used, nothing is sent and every item is left to this process.
    ``patient``: wait for a run the worker has been sent rather than work on its items here
    (for tests of what the worker gives)."""

    patient = False

    def __init__(self, runs: Sequence[tuple[int, int]],
                 call: Callable[[int, int], tuple[Callable[..., list[_T]], tuple[Any, ...]]],
                 *, ahead: int = 2) -> None:
        self.runs = list(runs)  # not sent yet, the last first
        self.call = call
        self.ahead = ahead
        self.starts: list[int] = []  # of the runs sent, in increasing order
        self.sent: dict[int, tuple[int, Future[list[_T]]]] = {}  # start -> (end, call)
        self.answers: dict[int, list[_T] | None] = {}  # by start of run, once done
        self.current = (0, 0)  # the run of the last item asked about, if any
        self.stopped = False
        self._send(-1)  # nothing reached yet

    def get(self, index: int) -> tuple[bool, _T | None]:
        """``(True, result)`` when the worker's result for item ``index`` is there; else
        ``(False, None)``: the caller works on it. Asked in increasing order."""
        if self.runs:
            self._send(index)
        start, end = self.current
        if not start <= index < end:
            at = bisect.bisect_right(self.starts, index) - 1
            if at < 0:
                return False, None
            start = self.starts[at]
            end = self.sent[start][0]
            if index >= end:
                return False, None
            self.current = (start, end)
        if start not in self.answers:
            future = self.sent[start][1]
            if not (future.done() or self.patient):
                return False, None
            self.answers[start] = result(future)
        found = self.answers[start]
        if found is None:
            return False, None
        return True, found[index - start]

    def _send(self, index: int) -> None:
        """Send the next runs while fewer than ``ahead`` are waiting and the next lies
        wholly beyond ``index`` (what this process has reached)."""
        while not self.stopped and self.runs and self.runs[0][0] > index:
            waiting = sum(1 for s in self.starts[:self.ahead] if not self.sent[s][1].done())
            if waiting >= self.ahead:
                return
            start, end = self.runs.pop(0)
            fn, args = self.call(start, end)
            future = submit(fn, *args)
            if future is None:  # no worker: this process works on every item
                self.stopped = True
                return
            self.starts.insert(0, start)  # below every run sent before
            self.sent[start] = (end, future)


def runs_from_end(weights: Sequence[int], run_weight: float) -> list[tuple[int, int]]:
    """The items ``0 .. len(weights) - 1`` cut into runs of about ``run_weight`` (the sum of
    their weights, one item at least), the last run first; the first item is in none."""
    out: list[tuple[int, int]] = []
    end, total = len(weights), 0.0
    for index in range(len(weights) - 1, 0, -1):
        total += weights[index]
        if total >= run_weight:
            out.append((index, end))
            end, total = index, 0.0
    if end > 1:
        out.append((1, end))
    return out


def _get() -> _Worker | None:
    global _worker
    with _lock:
        if _worker is None and enabled():
            try:
                _worker = _Worker()
            except OSError:
                _mark_unavailable()
        return _worker if enabled() else None


def _mark_unavailable() -> None:
    global _unavailable
    _unavailable = True


def _give_up() -> None:
    """No more work for the worker in this process (one that failed stays failed)."""
    global _worker
    with _lock:
        worker, _worker = _worker, None
        _mark_unavailable()
    if worker is not None:
        worker.close()


def shutdown() -> None:
    """Stop the worker, if one was started (a new one starts on the next :func:`submit`)."""
    global _worker
    with _lock:
        worker, _worker = _worker, None
    if worker is not None:
        worker.close()


class _Worker:
    """The child process, a thread writing its calls and one reading its answers (so that
    :meth:`submit` never waits for the pipe)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        # the child imports this very apimctl, wherever it was imported from
        root = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        env[ENV] = "0"  # the worker never starts one of its own
        self.process = subprocess.Popen(  # this interpreter, this package
            [sys.executable, "-m", "apimctl.workers"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, close_fds=True)
        self.pending: collections.deque[Future[Any]] = collections.deque()
        self.outbox: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self.closed = False
        threading.Thread(target=self._write, name="apimctl-worker-writer", daemon=True).start()
        threading.Thread(target=self._read, name="apimctl-worker-reader", daemon=True).start()
        atexit.register(self.close)

    def submit(self, fn: Callable[..., _T], args: tuple[Any, ...]) -> Future[_T]:
        future: Future[_T] = Future()
        with _lock:
            if self.closed:
                future.set_exception(WorkerError("the worker was stopped"))
                return future
            self.pending.append(future)
            self.outbox.put((fn, args))
        return future

    def _write(self) -> None:
        pipe = self.process.stdin
        assert pipe is not None
        try:
            while (call := self.outbox.get()) is not None:
                data = pickle.dumps(call, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(_HEADER.pack(len(data)))
                pipe.write(data)
                pipe.flush()
        except (OSError, ValueError, pickle.PicklingError, TypeError, AttributeError):
            self._fail()
        finally:
            with contextlib.suppress(OSError):
                pipe.close()

    def _read(self) -> None:
        pipe = self.process.stdout
        assert pipe is not None
        try:
            while True:
                answer = _receive(pipe)
                if answer is None:
                    break
                ok, value = answer
                with _lock:
                    future = self.pending.popleft() if self.pending else None
                if future is None:
                    break
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(CallFailed(value))
        except (OSError, ValueError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            pass
        self._fail()

    def _fail(self) -> None:
        """Every call still waiting fails (the worker is gone); no more calls are taken."""
        with _lock:
            self.closed = True
            waiting, self.pending = list(self.pending), collections.deque()
        for future in waiting:
            if not future.done():
                future.set_exception(WorkerError("the worker process stopped"))
        self.outbox.put(None)

    def close(self) -> None:
        with _lock:
            self.closed = True
        self.outbox.put(None)  # the writer closes the pipe: the worker ends
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _receive(pipe: IO[bytes]) -> Any:
    """One pickled message from ``pipe``, ``None`` at its end."""
    header = pipe.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = pipe.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)  # our own child process, over our own pipe


def _serve(inbox: IO[bytes], outbox: IO[bytes]) -> None:
    """The worker's loop: each call read from ``inbox`` answered on ``outbox``, in order,
    until ``inbox`` ends. The cyclic garbage collector is paused while a call is unpickled:
    a call of many small containers (documents) would otherwise be scanned again and again
    as it is built (four times the time)."""
    while True:
        with collector_paused():
            call = _receive(inbox)
        if call is None:
            break
        fn, args = call
        try:
            answer: tuple[bool, Any] = (True, fn(*args))
        except Exception as exc:  # sent back: the caller decides
            # text only: the worker runs this module as ``__main__``, whose classes would
            # not unpickle here
            answer = (False, f"{type(exc).__name__}: {exc}")
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an answer that does not pickle: the call failed
            data = pickle.dumps((False, f"{type(exc).__name__}: {exc}"))
        outbox.write(_HEADER.pack(len(data)))
        outbox.write(data)
        outbox.flush()


if __name__ == "__main__":
    _answers = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed may mix with the answers
    _serve(sys.stdin.buffer, _answers)
    _answers.flush()
    os._exit(0)  # at once: nothing of the worker's outlives it, and taking it apart takes time
