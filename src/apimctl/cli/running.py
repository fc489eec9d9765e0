"""Running a command's coroutine within its deadline, ended by SIGINT or SIGTERM.

``plan``, ``drift``, ``export``, ``lint --live`` and ``unlock`` (when it asks nothing) run
their core function with :func:`run_command`: Ctrl-C or SIGTERM (how CI cancels a job) cancels
it at once (its calls are abandoned, the client closed; these commands write nothing, except
``unlock``'s single delete) and the process exits 130; a second signal exits at once. ``--deadline SECONDS``
bounds the whole command: when it passes, the command stops the same way and fails (exit 1)
saying so. ``apply`` has its own handling (:func:`apimctl.cli.apply.run_interruptible`),
which lets running writes finish and releases the lease; it takes the deadline from
:func:`deadline_of`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import click

from apimctl.cli.common import EXIT_INTERRUPTED, envvar
from apimctl.errors import ApimctlError

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class DeadlinePassed(ApimctlError):
    """The command did not finish within ``--deadline`` (exit 1)."""


def deadline_of(ctx: click.Context) -> float | None:
    """The command's ``--deadline`` in seconds; ``None`` when none was given (or 0)."""
    value = ctx.params.get("deadline")
    return float(value) if value else None


def deadline_message(deadline: float, what: str) -> str:
    return (f"the command did not finish within its deadline of {deadline:g} s (--deadline, "
            f"{envvar('deadline')}); {what}")


def run_command(make: Callable[[], Coroutine[Any, Any, T]], deadline: float | None,
                say: Callable[[str], None], *, done: str = "nothing was written") -> T:
    """``asyncio.run(make())`` ended by the first SIGINT or SIGTERM (``KeyboardInterrupt``
    is raised: exit 130), or by ``deadline`` seconds passing (:class:`DeadlinePassed`, whose
    message ends with ``done``: what was done)."""
    signalled: list[str] = []

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_signal(signum: int) -> None:
            name = signal.Signals(signum).name
            if signalled:
                say(f"{name} again: exiting at once.")
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(EXIT_INTERRUPTED)
            signalled.append(name)
            say(f"{name} received: stopping.")
            if task is not None:
                task.cancel()

        installed = install(loop, on_signal)
        timer = asyncio.timeout(deadline)
        try:
            async with timer:
                return await make()
        except TimeoutError:
            if timer.expired():
                raise DeadlinePassed(deadline_message(deadline or 0, done)) from None
            raise
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if signalled:
            raise KeyboardInterrupt from None
        raise


def install(loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]) -> list[signal.Signals]:
    """``handler(signum)`` for SIGINT and SIGTERM in ``loop``; the signals it could take (none
    outside the main thread or on Windows)."""
    installed = []
    for sig in SIGNALS:
        try:
            loop.add_signal_handler(sig, handler, int(sig))
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return installed
