"""`apimctl apply`: plan (or load a saved plan), confirm, execute, summarise.

The adapter around :func:`apimctl.applying.command.apply`: it parses the options, hands the
core a way to open the client, the confirmation (the plan shown on a terminal and a question;
``--auto-approve`` otherwise) and the progress display (a rich progress bar on a terminal, one
plain line per step otherwise, both on stderr), and prints the summary in the chosen format
(``--format json``: one JSON object per line, the step events then the summary; see
``docs/apply-format.md``).

Interrupts, like Terraform: Ctrl-C at the question cancels at once (nothing written, no
lease taken). During the run, the first Ctrl-C or SIGTERM (how CI cancels a job) starts no
new step, lets the running calls finish (up to :data:`~apimctl.applying.schedule.GRACE`
seconds), releases the lease and prints the summary; a second one exits at once.
``--deadline`` stops the run the same way when it passes (before the execution: an error,
nothing written). The exit code is the result's: 0 done, 3 partial, 1 nothing written, refused or cancelled,
130 interrupted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
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

from apimctl import process
from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.lease import DEFAULT_TTL
from apimctl.applying.schedule import GRACE, ProgressCallback, ProgressEvent
from apimctl.cli.common import (
    EXIT_INTERRUPTED,
    Number,
    color_wanted,
    connection_options,
    envvar,
    impact_option,
    manifest_options,
    rotation_options,
    rotations,
)
from apimctl.cli.completers import complete_address, complete_field_address
from apimctl.cli.lint import lint_gate, lint_options
from apimctl.cli.pager import show_plan
from apimctl.cli.running import DeadlinePassed, deadline_message, deadline_of, install
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.errors import ApimctlError
from apimctl.plans.model import Plan
from apimctl.plans.result import ApplyResult
from apimctl.render import json as render_json
from apimctl.render import text as render_text
from apimctl.render.style import Redactor


@click.command("apply")
@manifest_options
@click.option("--plan", "plan_file", type=click.Path(dir_okay=False),
              help="Apply a plan saved with `apimctl plan --out FILE` (refused when stale).")
@click.option("--auto-approve", is_flag=True,
              help="Apply without asking (required when there is no terminal).")
@click.option("--max-deletes", type=click.IntRange(min=0), default=None, metavar="N",
              help="Refuse, before writing anything, a plan that deletes more than N objects.")
@click.option("--max-affected-keys", type=click.IntRange(min=0), default=None, metavar="N",
              envvar=envvar("max_affected_keys"),
              help="Refuse, before writing anything, a plan whose changes cut off or tighten "
                   "more than N package keys (naming those changes).")
@impact_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True,
              help="Format of the output: json streams one JSON object per line "
                   "(step events, then the summary; see docs/apply-format.md).")
@click.option("--prune", is_flag=True,
              help="Delete live top-level objects that no manifest declares.")
@click.option("--target", "targets", multiple=True, metavar="KIND:NAME", shell_complete=complete_address,
              help="Limit the apply to these objects (and what they need). Repeatable.")
@click.option("--ignore", "ignores", multiple=True, metavar="KIND:NAME:PATH",
              shell_complete=complete_field_address,
              help="Accept an out-of-band change to this field. Repeatable.")
@click.option("--lock-timeout", type=Number(zero=True), default=0.0, show_default=True,
              metavar="SECONDS",
              help="Wait up to SECONDS for another apply's lease on the area (0: refuse at once).")
@click.option("--lease-lifetime", type=Number(zero=False), default=DEFAULT_TTL, hidden=True,
              metavar="SECONDS",
              help="Seconds the area's lease lives without renewal (for tests of the fencing).")
@click.option("--no-lock", is_flag=True,
              help="Take no lease on the area (for pipelines that serialise applies themselves).")
@click.option("--repair-duplicates", is_flag=True,
              help="Delete the extra live copies of objects and nested items that share one "
                   "identity (keeping the one pinned by id:, else the oldest).")
@rotation_options
@click.option("--no-color", is_flag=True, help="Plain output.")
@click.option("--full", is_flag=True,
              help="Print the whole plan before the question (a long one goes to a pager on a "
                   "terminal) and every step in the summary (long lists are counted per kind).")
@lint_options
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...], plan_file: str | None,
            auto_approve: bool, max_deletes: int | None, fmt: str, prune: bool, targets: tuple[str, ...],
            ignores: tuple[str, ...], lock_timeout: float, no_lock: bool, no_color: bool,
            full: bool = False, lease_lifetime: float = DEFAULT_TTL, repair_duplicates: bool = False,
            rotate_secrets: bool = False, rotate: tuple[str, ...] = (),
            max_affected_keys: int | None = None, impact: str = "auto", **_connection: Any) -> int:
    """Apply the manifests in PATH... (or a saved --plan FILE) to the area.

    Shows the plan and asks for confirmation on a terminal; pass --auto-approve in CI.
    Before its first write it takes the area's lease (the role apimctl-apply-lease): a second
    apply waits up to --lock-timeout, then is refused naming the holder (see `apimctl unlock`).
    Every write is sent only while the lease is known to be held; an apply whose lease was
    lost (broken, or taken over while this run was paused) stops at once.
    Exit codes: 0 done (or nothing to do), 3 partial apply (rerun converges),
    1 nothing written or refused, 130 interrupted.
    """
    if bool(paths) == bool(plan_file):
        raise click.UsageError("give manifest PATH... or --plan FILE (not both)")
    if plan_file and (prune or targets or ignores or overlays or rotate_secrets or rotate
                      or repair_duplicates):
        raise click.UsageError("--prune, --target, --ignore, --overlay, --rotate(-secrets) and "
                               "--repair-duplicates shape a new plan; they cannot change a saved "
                               "--plan (make the plan with them: apimctl plan ... --out FILE)")
    lint_gate(ctx, paths, overlays)  # --lint: the policy rules first, refusing on failures
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    if not auto_approve and not interactive:
        raise ApimctlError("apply needs confirmation and there is no terminal to ask on: "
                           "pass --auto-approve to apply without confirmation")
    settings = connection_settings(ctx)
    term = Terminal(Console(stderr=True, no_color=not color_wanted(no_color, sys.stderr),
                            highlight=False, emoji=False),
                    interactive=interactive, color=color_wanted(no_color),
                    events=emit_line if fmt == "json" else None, full=full,
                    auto_approve=auto_approve, remote=bool(settings.get("url")))
    request = ApplyRequest(paths=paths, overlays=overlays, plan_file=plan_file, prune=prune,
                           targets=targets, ignores=ignores, max_deletes=max_deletes,
                           target=target_label(settings.get("url")),
                           parallelism=int(settings.get("parallelism") or 8),
                           repair_duplicates=repair_duplicates,
                           lock=not no_lock, lock_timeout=lock_timeout, lease_ttl=lease_lifetime,
                           rotate=rotations(rotate_secrets, rotate),
                           max_affected_keys=max_affected_keys, impact=impact)
    result = run_interruptible(
        lambda interrupt: apply(request, lambda: open_client(**settings, announce=term.note),
                                confirm=None if auto_approve else term.confirm,
                                progress=term.progress, notice=term.say,
                                note=term.note if settings.get("verbose") else None,
                                interrupt=interrupt, keep=process.keep),
        term, deadline_of(ctx))
    if term.prompt_interrupted:
        result.interrupted = True
    if result.cancelled:
        term.say("Apply cancelled; nothing was written.")
    else:
        click.echo(summary(result, fmt, color=term.color, full=full), nl=False)
    return result.exit_code


def emit_line(line: str) -> None:
    """One line of the ``--format json`` stream on stdout, flushed at once (a pipeline reads
    it as it comes)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def run_interruptible(make: Callable[[asyncio.Event], Coroutine[Any, Any, ApplyResult]],
                      term: Terminal, deadline: float | None = None) -> ApplyResult:
    """Run the apply coroutine ``make(interrupt)`` with SIGINT and SIGTERM handled. Before the
    execution (reading, planning, waiting for the lease) the first signal cancels at once:
    nothing was written, the lease (if taken) is released on the way out. During it, the first
    signal sets ``interrupt`` (the core starts no new step and lets the running ones finish);
    the second exits at once with 130. ``deadline`` seconds after the start the run stops as
    on a first signal; before the execution that is an error (exit 1: nothing was written)."""
    passed: list[bool] = []

    async def main() -> ApplyResult:
        loop = asyncio.get_running_loop()
        interrupt = asyncio.Event()
        task = asyncio.current_task()

        def on_deadline() -> None:
            passed.append(True)
            if interrupt.is_set():
                return
            interrupt.set()
            if not term.executing and task is not None:
                task.cancel()
                return
            term.interrupted("deadline", f"the deadline of {deadline:g} s passed")

        def on_signal(signum: int) -> None:
            name = signal.Signals(signum).name
            if not term.executing and not interrupt.is_set() and task is not None:
                interrupt.set()  # still reading or planning: nothing written, cancel at once
                task.cancel()
                return
            if interrupt.is_set():
                term.say(f"{name} again: exiting at once; the steps still running may or may not "
                         "have been written, and the area's lease is left to expire.")
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(EXIT_INTERRUPTED)
            interrupt.set()
            term.interrupted(name)

        installed = install(loop, on_signal)
        timer = loop.call_later(deadline, on_deadline) if deadline else None
        try:
            return await make(interrupt)
        except asyncio.CancelledError:
            if not interrupt.is_set():
                raise
            if passed:
                raise DeadlinePassed(deadline_message(deadline or 0, "nothing was written")) from None
            return ApplyResult(cancelled=True, interrupted=True)
        finally:
            if timer is not None:
                timer.cancel()
            for sig in installed:
                loop.remove_signal_handler(sig)

    return asyncio.run(main())


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
