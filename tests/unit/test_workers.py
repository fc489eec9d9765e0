"""The worker process (``apimctl.workers``): calls answered in order, and every way it can fail
ends with the caller doing the work itself."""

from __future__ import annotations

import importlib
import os
import shutil
import signal
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apimctl import workers


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A worker of this test's own (none running before, none left after)."""
    workers.shutdown()
    monkeypatch.setattr(workers, "_unavailable", False)
    monkeypatch.delenv(workers.ENV, raising=False)
    yield
    workers.shutdown()


def test_calls_are_answered_in_order_by_another_process(fresh: None) -> None:
    futures = [workers.submit(divmod, n, 7) for n in range(20)]
    assert all(f is not None for f in futures)
    assert [workers.result(f) for f in futures] == [divmod(n, 7) for n in range(20)]
    assert workers.result(workers.submit(os.getpid)) != os.getpid()


def test_a_call_that_raises_is_redone_by_the_caller(fresh: None) -> None:
    assert workers.result(workers.submit(int, "not a number")) is None
    assert workers.result(workers.submit(int, "12")) == 12  # the worker goes on


def test_an_argument_that_does_not_pickle_fails_only_that_call(fresh: None) -> None:
    assert workers.result(workers.submit(len, lambda: None)) is None
    assert workers.submit(len, "abc") is None  # the writer stopped: no more calls ...
    assert not workers.enabled()  # ... and none in this process


def test_a_worker_that_dies_fails_its_calls_and_no_more_go_to_it(fresh: None) -> None:
    pid = workers.result(workers.submit(os.getpid))
    assert isinstance(pid, int)
    os.kill(pid, signal.SIGKILL)
    assert workers.result(workers.submit(divmod, 9, 2)) is None
    assert workers.submit(divmod, 9, 2) is None
    assert not workers.enabled()


@pytest.mark.parametrize("value", ["0", "off", "no", "false"])
def test_turned_off(fresh: None, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(workers.ENV, value)
    assert workers.submit(divmod, 9, 2) is None
    assert workers.result(None) is None


def test_one_core_means_no_worker(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert workers.submit(divmod, 9, 2) is None


def test_a_worker_that_cannot_start_means_the_work_is_done_here(
        fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers.sys, "executable", "/nonexistent/python")
    assert workers.submit(divmod, 9, 2) is None
    assert not workers.enabled()


def test_an_answer_that_does_not_pickle_fails_only_that_call(fresh: None) -> None:
    assert workers.result(workers.submit(importlib.import_module, "json")) is None  # a module
    assert workers.result(workers.submit(divmod, 9, 2)) == (4, 1)


def test_prepare_imports_in_a_running_worker_only(fresh: None) -> None:
    workers.prepare("json")  # no worker yet: nothing is started
    assert workers._worker is None
    workers.warm_up()
    workers.prepare("apimctl.state.live")
    assert workers.result(workers.submit(divmod, 9, 2)) == (4, 1)


def test_a_worker_that_exits_at_once_fails_its_calls(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """It started (a process ran) but never answered: an interpreter that cannot import
    apimctl ends like this."""
    false = shutil.which("false")
    if false is None:
        pytest.skip("no `false` command here")
    monkeypatch.setattr(workers.sys, "executable", false)
    future = workers.submit(divmod, 9, 2)
    assert future is not None
    assert workers.result(future) is None
    assert workers.submit(divmod, 9, 2) is None and not workers.enabled()


def test_the_worker_never_starts_a_worker_of_its_own(fresh: None) -> None:
    assert workers.result(workers.submit(workers.enabled)) is False


def test_running_tells_a_started_worker_only(fresh: None) -> None:
    assert not workers.running()
    workers.warm_up()
    assert workers.running()
    workers.shutdown()
    assert not workers.running()


@given(st.lists(st.integers(0, 50), min_size=0, max_size=60), st.floats(0.5, 200))
def test_runs_from_the_end_cover_every_item_but_the_first_once(weights: list[int], weight: float) -> None:
    runs = workers.runs_from_end(weights, weight)
    covered = [i for start, end in reversed(runs) for i in range(start, end)]
    assert covered == list(range(1, len(weights)))  # in order, once each, the first in none
    assert all(start < end for start, end in runs)
    assert [start for start, _ in runs] == sorted((start for start, _ in runs), reverse=True)
    for start, end in runs[:-1]:  # each run but the one nearest the first weighs enough
        assert sum(weights[start:end]) >= weight


class _Fake:
    """A stand-in for the worker: the calls it was sent, answered when the test says."""

    def __init__(self) -> None:
        self.sent: list[tuple[tuple[int, int], Future[list[int]]]] = []

    def submit(self, fn: Any, start: int, end: int) -> Future[list[int]]:
        future: Future[list[int]] = Future()
        self.sent.append(((start, end), future))
        return future

    def answer(self, n: int) -> None:
        (start, end), future = self.sent[n]
        future.set_result([-i for i in range(start, end)])


def _shared(fake: _Fake, count: int, run: int, ahead: int = 2) -> workers.FromBothEnds[int]:
    return workers.FromBothEnds(workers.runs_from_end([1] * count, run),
                                lambda start, end: (abs, (start, end)), ahead=ahead)


def test_from_both_ends_sends_runs_from_the_last_never_more_than_ahead_waiting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Fake()
    monkeypatch.setattr(workers, "submit", fake.submit)
    shared = _shared(fake, 10, 3)  # runs (7, 10), (4, 7), (1, 4)
    assert [r for r, _ in fake.sent] == [(7, 10), (4, 7)]
    assert shared.get(0) == (False, None)  # the first item is always worked on here
    fake.answer(0)
    assert shared.get(1) == (False, None)  # (1, 4) would start where this process is: not sent
    assert [r for r, _ in fake.sent] == [(7, 10), (4, 7)]
    assert shared.get(4) == (False, None)  # sent, not answered yet: worked on here
    fake.answer(1)
    assert shared.get(5) == (True, -5)  # answered meanwhile: taken for the rest of the run
    assert [shared.get(i) for i in range(7, 10)] == [(True, -7), (True, -8), (True, -9)]


def test_from_both_ends_sends_the_next_run_once_one_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Fake()
    monkeypatch.setattr(workers, "submit", fake.submit)
    shared = _shared(fake, 100, 10, ahead=1)
    assert [r for r, _ in fake.sent] == [(90, 100)]
    fake.answer(0)
    shared.get(0)
    assert [r for r, _ in fake.sent] == [(90, 100), (80, 90)]
    fake.answer(1)
    shared.get(75)  # (70, 80) holds this process's item: left to it
    assert [r for r, _ in fake.sent] == [(90, 100), (80, 90)]


@given(st.integers(2, 120), st.integers(1, 30), st.integers(1, 3), st.data())
def test_from_both_ends_gives_each_item_once_whenever_answers_come(
        count: int, run: int, ahead: int, data: st.DataObject) -> None:
    """Whatever the worker has answered when this process asks, every item is given by the
    worker (its result) or left to this process, never both, and never a wrong result."""
    fake = _Fake()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers, "submit", fake.submit)
        shared = _shared(fake, count, run, ahead)
        got = []
        for index in range(count):
            for n, (_, future) in enumerate(fake.sent):
                if not future.done() and data.draw(st.booleans()):
                    fake.answer(n)
            found, value = shared.get(index)
            got.append(value if found else -index)
            assert not found or value == -index
    assert got == [-i for i in range(count)]


def test_from_both_ends_without_a_worker_leaves_every_item_here(fresh: None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.ENV, "0")
    shared = workers.FromBothEnds(workers.runs_from_end([1] * 50, 5), lambda s, e: (abs, (s,)))
    assert [shared.get(i) for i in range(50)] == [(False, None)] * 50


def test_from_both_ends_with_the_worker(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers.FromBothEnds, "patient", True)
    shared = workers.FromBothEnds(workers.runs_from_end([1] * 40, 4),
                                  lambda s, e: (sorted, (range(s, e),)))
    found = [shared.get(i) for i in range(40)]
    assert any(f for f, _ in found)  # the worker's runs, waited for
    assert all(value == i for i, (f, value) in enumerate(found) if f)
