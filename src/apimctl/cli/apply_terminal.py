"""Where ``apimctl apply`` talks to the user: the question, the progress display, the summary.

:class:`Terminal` shows the plan and asks (Ctrl-C or SIGTERM at the question cancels at once),
opens the progress display (a rich bar on a terminal, one plain line per step otherwise, both
on stderr; with ``--format json`` the step events too, one JSON object per line) and says what
an interrupt does. Every progress and log line is scrubbed of the plan's resolved secrets.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from apimctl.applying.schedule import GRACE
from apimctl.cli.pager import show_plan
from apimctl.plans.model import Plan
from apimctl.plans.progress import ProgressCallback, ProgressEvent
from apimctl.plans.result import ApplyResult
from apimctl.render import json as render_json
from apimctl.render import text as render_text
from apimctl.render.style import Redactor


class Terminal:
    """Where the run talks to the user: stderr, the question, the progress display. A server
    may echo a value it refused: progress and log lines are scrubbed of the plan's resolved
    secrets, so they never reach the terminal."""

    def __init__(self, err: Console, *, interactive: bool, color: bool,
                 events: Callable[[str], None] | None = None, full: bool = False,
                 auto_approve: bool = False, remote: bool = False) -> None:
        self.err, self.interactive, self.color = err, interactive, color
        self.full = full  # the whole plan and every step in the summary, however long
        self.auto_approve = auto_approve  # no question: the plan's totals are still shown
        self.remote = remote  # not the embedded server, which approves new domains at once
        self.warned = False
        self.scrub: Callable[[str], str] = str
        self.events = events  # --format json: where the step events go, one line each
        self.prompt_interrupted = False
        self.executing = False  # the steps are being run (the progress display is open)

    def say(self, line: str) -> None:
        self.err.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

    def note(self, line: str) -> None:
        self.say(self.scrub(line))

    def interrupted(self, name: str, why: str = "") -> None:
        """The first Ctrl-C or SIGTERM of a run (or its deadline: ``why`` says so)."""
        if self.events is not None:
            self.events(render_json.render_apply_interrupt(name))
        self.say(f"{why or name + ' received'}: starting no new step; the running calls get up to "
                 f"{GRACE:.0f} s to finish, then the summary. Interrupt again to exit at once.")

    def confirm(self, plan: Plan) -> bool:
        """Show the plan and ask. Ctrl-C (or SIGTERM) at the question cancels at once: the
        event loop is blocked while it waits, so for its duration either signal raises
        KeyboardInterrupt here (and does not reach the loop's handlers)."""
        self.warn_about(plan)
        show_plan(render_text.render_plan(plan, color=self.color),
                  render_text.render_totals(plan, color=self.color), full=self.full,
                  interactive=self.interactive, err=True)
        with _prompt_signals():
            try:
                return click.confirm("Apply these changes?", default=False, err=True)
            except click.exceptions.Abort:
                click.echo(err=True)  # the question's line ends with the echoed ^C
                self.prompt_interrupted = True
                return False

    def warn_about(self, plan: Plan) -> None:
        """Once per run: the new domains the plan's endpoints need (the area holds them for
        approval, so those endpoints will fail)."""
        if self.warned or not self.remote:
            return
        self.warned = True
        from apimctl.planning.domains import new_domain_warnings

        for warning in new_domain_warnings(plan):
            self.say(f"Warning: {warning}.")

    @contextmanager
    def progress(self, plan: Plan) -> Iterator[ProgressCallback]:
        self.scrub = Redactor(plan).text
        self.executing = True
        if self.auto_approve and self.events is None:
            self.say(render_text.render_totals(plan))
        self.warn_about(plan)
        with progress_display(self.err, self.interactive) as update:
            if self.events is not None:
                update = both(update, json_events(self.events, plan))
            yield scrubbed(update, self.scrub)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def _prompt_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt while a blocking question waits in the event
    loop's thread; the loop's wake-up descriptor is detached meanwhile, so the loop does not
    see the signal a second time afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wakeup = signal.set_wakeup_fd(-1)
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(wakeup)


def both(first: ProgressCallback, second: ProgressCallback) -> ProgressCallback:
    def update(event: ProgressEvent) -> None:
        first(event)
        second(event)

    return update


def json_events(write: Callable[[str], None], plan: Plan) -> ProgressCallback:
    """The ``--format json`` step events: one JSON object per line through ``write``."""
    redactor = Redactor(plan)

    def update(event: ProgressEvent) -> None:
        line = render_json.render_apply_event(event, redactor)
        if line is not None:
            write(line)

    return update


def summary(result: ApplyResult, fmt: str, *, color: bool, full: bool = False) -> str:
    """The closing report in the chosen format."""
    if fmt == "json":
        return render_json.render_apply_summary(result, plan=result.plan)
    if result.plan is not None and not result.plan.steps:
        return "No changes. The area matches the configuration.\n"
    return render_text.render_apply_summary(result, plan=result.plan, color=color, full=full)


SYMBOL = {"done": "ok", "failed": "FAILED", "skipped": "skipped"}


@contextmanager
def progress_display(console: Console, interactive: bool) -> Iterator[ProgressCallback]:
    """A progress callback: a rich bar on a terminal, one plain line per step otherwise."""
    if not interactive:
        yield plain_progress(console.print)
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   RateColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                   console=console, transient=False)
    task = bar.add_task("Applying", total=None)

    def update(event: ProgressEvent) -> None:
        bar.update(task, total=event.total, completed=event.completed)
        if event.kind == "start":
            bar.update(task, description=f"{event.action} {event.address}")
        elif event.kind in ("failed", "skipped"):
            bar.console.print(f"{event.action} {event.address}: {SYMBOL[event.kind]}: {event.message}",
                              markup=False, highlight=False, emoji=False)

    with bar:
        yield update
        bar.update(task, description="Applied")


class RateColumn(ProgressColumn):
    """Steps per second, once there is a rate to show."""

    def render(self, task: Task) -> Text:
        speed = task.speed
        return Text(f"{speed:.1f} steps/s" if speed else "", style="progress.data.speed")


def scrubbed(progress: ProgressCallback, scrub: Callable[[str], str]) -> ProgressCallback:
    """``progress`` with every event's message passed through ``scrub`` first."""

    def update(event: ProgressEvent) -> None:
        progress(dataclasses.replace(event, message=scrub(event.message)) if event.message else event)

    return update


def plain_progress(write: Callable[..., Any]) -> ProgressCallback:
    def update(event: ProgressEvent) -> None:
        if event.kind in SYMBOL:
            reason = f": {event.message}" if event.message else ""
            write(f"[{event.completed}/{event.total}] {event.action} {event.address}: {SYMBOL[event.kind]}{reason}",
                  markup=False, highlight=False, emoji=False, soft_wrap=True)

    return update
