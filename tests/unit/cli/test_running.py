"""A command's deadline and its signals: the runner of plan, drift, export and lint --live,
and apply's own (which stops starting steps rather than cancelling)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from apimctl.cli.apply import run_interruptible
from apimctl.cli.running import DeadlinePassed, run_command
from apimctl.plans.result import ApplyResult


async def forever() -> None:
    await asyncio.sleep(3600)


def test_the_deadline_ends_a_command() -> None:
    lines: list[str] = []
    with pytest.raises(DeadlinePassed, match=r"within its deadline of 0\.05 s.*nothing was written"):
        run_command(forever, 0.05, lines.append)


def test_no_deadline_lets_a_command_finish() -> None:
    async def quick() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_command(quick, None, print) == 7


def test_sigterm_cancels_a_command() -> None:
    async def signalled() -> None:
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
        await forever()

    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_command(signalled, None, lines.append)
    assert lines == ["SIGTERM received: stopping."]


class Term:
    """What :func:`run_interruptible` needs of the terminal."""

    def __init__(self, executing: bool) -> None:
        self.executing = executing
        self.stopped: list[tuple[str, str]] = []

    def interrupted(self, name: str, why: str = "") -> None:
        self.stopped.append((name, why))

    def say(self, line: str) -> None:
        pass


def test_the_deadline_stops_a_running_apply_like_an_interrupt() -> None:
    async def steps(interrupt: asyncio.Event) -> ApplyResult:
        await interrupt.wait()  # the scheduler: no new step, the running ones finish
        return ApplyResult(interrupted=True)

    term = Term(executing=True)
    result = run_interruptible(steps, term, 0.05)  # type: ignore[arg-type]
    assert result.interrupted and term.stopped == [("deadline", "the deadline of 0.05 s passed")]


def test_the_deadline_before_the_first_write_is_an_error() -> None:
    async def reading(interrupt: Any) -> ApplyResult:
        await forever()
        return ApplyResult()

    with pytest.raises(DeadlinePassed, match="nothing was written"):
        run_interruptible(reading, Term(executing=False), 0.05)  # type: ignore[arg-type]
