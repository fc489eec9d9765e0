"""The worker process (``apimctl.workers``): calls answered in order, and every way it can fail
ends with the caller doing the work itself."""

from __future__ import annotations

import importlib
import os
import shutil
import signal
from collections.abc import Iterator

import pytest

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


def test_a_held_answer_stays_in_the_worker_until_taken_once(fresh: None) -> None:
    first, second = workers.hold(divmod, 9, 2), workers.hold(os.getpid)
    assert first is not None and second is not None and first != second
    assert workers.take(second) != os.getpid()  # made there, in any order of taking
    assert workers.take(first) == (4, 1)
    assert workers.take(first) is None  # given once: forgotten there
    failed = workers.hold(int, "not a number")
    assert failed is not None and workers.take(failed) is None  # it failed there: nothing held
    assert workers.result(workers.submit(divmod, 9, 2)) == (4, 1)  # the worker goes on


def test_nothing_is_held_without_a_worker(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.ENV, "0")
    assert workers.hold(divmod, 9, 2) is None
    assert workers.take(0) is None


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
