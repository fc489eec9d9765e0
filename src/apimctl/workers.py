"""A second process for the heavy, pure parts of a large run.

apimctl's work is CPU-bound Python, and Python runs it on one core. Parts of a large run are
pure functions of data that crosses a pipe cheaply; they go to one worker process while this
one goes on: the normal forms of the live objects are made there while this process reads the
rest of the area (:mod:`apimctl.state.live`).

Callers decide what is big enough to pay for the worker (it is a fresh interpreter: a tenth of
a second to start, on the other core); small runs never start one. The work is also done in
this process, with the same functions and the same results, whenever the worker cannot help:
``APIMCTL_WORKERS=0``, a machine with one core, a worker that cannot be started (a frozen
executable, no process support) or that fails or dies: :func:`submit` then returns ``None``
and :func:`result` ``None``, and the caller does the work itself.

The worker is ``python -m apimctl.workers``, fed pickled calls on its stdin and answering on
its stdout, in order; an answer may also stay in the worker until asked for (:func:`hold`,
:func:`take`). A plain child process rather than :mod:`multiprocessing`: that starts
its workers by running the caller's ``__main__`` again (``spawn``, ``forkserver``), which
runs a script's whole work twice when it lacks the ``if __name__ == "__main__"`` guard, or by
forking this process with its threads (an embedded server's), which may deadlock.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import importlib
import itertools
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, TypeVar

from apimctl.speed import collector_paused

ENV = "APIMCTL_WORKERS"
_T = TypeVar("_T")
_HEADER = struct.Struct("!Q")
_lock = threading.Lock()
_worker: _Worker | None = None
_unavailable = False
_tickets = itertools.count()  # of the answers held in the worker (:func:`hold`)
_held: dict[int, Any] = {}  # in the worker: those answers, by ticket


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


def hold(fn: Callable[..., Any], *args: Any) -> int | None:
    """``fn(*args)`` sent to the worker, its answer kept there, not sent back, until
    :func:`take` asks for it (a large answer is not held by this process meanwhile): the
    ticket to take it by, or ``None`` when no worker can take the call."""
    ticket = next(_tickets)
    return ticket if submit(_hold, ticket, fn, args) is not None else None


def take(ticket: int) -> Any:
    """The answer :func:`hold` kept under ``ticket`` (then forgotten there); ``None`` when the
    worker failed, or the call did."""
    return result(submit(_take, ticket))


def _hold(ticket: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    _held[ticket] = fn(*args)


def _take(ticket: int) -> Any:
    return _held.pop(ticket, None)


def prepare(module: str) -> None:
    """Have a running worker import ``module`` now, before work that needs it arrives (nothing
    is started or waited for)."""
    with _lock:
        worker = _worker if enabled() else None
    if worker is not None:
        worker.submit(_load, (module,))


def _load(module: str) -> None:
    importlib.import_module(module)


def warm_up() -> None:
    """Start the worker now (it starts in the background: nothing is waited for)."""
    _get()


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
