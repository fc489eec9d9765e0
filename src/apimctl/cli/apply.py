"""`apimctl apply`: plan (or load a saved plan), confirm, execute, summarise.

The adapter around :func:`apimctl.applying.command.apply`: it parses the options, hands the
core a way to open the client, the confirmation (the plan shown on a terminal and a question;
``--auto-approve`` otherwise) and the progress display (a rich progress bar on a terminal, one
plain line per step otherwise, both on stderr), and prints the summary in the chosen format.
The exit code is the result's: 0 done, 3 partial, 1 nothing written, refused or cancelled.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.schedule import ProgressCallback, ProgressEvent
from apimctl.cli.common import connection_options, envvar, manifest_options
from apimctl.cli.lint import lint_gate, lint_options
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
@click.option("--auto-approve", is_flag=True, envvar=envvar("auto_approve"),
              help="Apply without asking (required when there is no terminal).")
@click.option("--max-deletes", type=click.IntRange(min=0), default=None, envvar=envvar("max_deletes"),
              help="Refuse, before writing anything, a plan that deletes more than N objects.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, envvar=envvar("format"), help="Format of the summary.")
@click.option("--prune", is_flag=True, envvar=envvar("prune"),
              help="Delete live top-level objects that no manifest declares.")
@click.option("--target", "targets", multiple=True, metavar="KIND:NAME",
              help="Limit the apply to these objects (and what they need). Repeatable.")
@click.option("--ignore", "ignores", multiple=True, metavar="KIND:NAME:PATH",
              help="Accept an out-of-band change to this field. Repeatable.")
@click.option("--no-color", is_flag=True, envvar=envvar("no_color"), help="Plain output.")
@lint_options
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...], plan_file: str | None,
            auto_approve: bool, max_deletes: int | None, fmt: str, prune: bool, targets: tuple[str, ...],
            ignores: tuple[str, ...], no_color: bool, **_connection: Any) -> int:
    """Apply the manifests in PATH... (or a saved --plan FILE) to the area.

    Shows the plan and asks for confirmation on a terminal; pass --auto-approve in CI.
    Exit codes: 0 done (or nothing to do), 3 partial apply (rerun converges),
    1 nothing written or refused, 130 interrupted.
    """
    if bool(paths) == bool(plan_file):
        raise click.UsageError("give manifest PATH... or --plan FILE (not both)")
    if plan_file and (prune or targets or ignores or overlays):
        raise click.UsageError("--prune, --target, --ignore and --overlay shape a new plan; "
                               "they cannot change a saved --plan")
    lint_gate(ctx, paths, overlays)  # --lint: the policy rules first, refusing on failures
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    if not auto_approve and not interactive:
        raise ApimctlError("apply needs confirmation and there is no terminal to ask on: "
                           "pass --auto-approve to apply without confirmation")
    settings = connection_settings(ctx)
    term = Terminal(Console(stderr=True, no_color=no_color, highlight=False, emoji=False),
                    interactive=interactive,
                    color=not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty())
    request = ApplyRequest(paths=paths, overlays=overlays, plan_file=plan_file, prune=prune,
                           targets=targets, ignores=ignores, max_deletes=max_deletes,
                           target=target_label(settings.get("url")),
                           parallelism=int(settings.get("parallelism") or 8))
    result = asyncio.run(apply(request, lambda: open_client(**settings, announce=term.say),
                               confirm=None if auto_approve else term.confirm,
                               progress=term.progress, notice=term.say,
                               note=term.note if settings.get("verbose") else None))
    if result.cancelled:
        term.say("Apply cancelled; nothing was written.")
    else:
        click.echo(summary(result, fmt, color=term.color), nl=False)
    return result.exit_code


class Terminal:
    """Where the run talks to the user: stderr, the question, the progress display. A server
    may echo a value it refused: progress and log lines are scrubbed of the plan's resolved
    secrets, so they never reach the terminal."""

    def __init__(self, err: Console, *, interactive: bool, color: bool) -> None:
        self.err, self.interactive, self.color = err, interactive, color
        self.scrub: Callable[[str], str] = str

    def say(self, line: str) -> None:
        self.err.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

    def note(self, line: str) -> None:
        self.say(self.scrub(line))

    def confirm(self, plan: Plan) -> bool:
        click.echo(render_text.render_plan(plan, color=self.color), err=True, nl=False)
        return click.confirm("Apply these changes?", default=False, err=True)

    @contextmanager
    def progress(self, plan: Plan) -> Iterator[ProgressCallback]:
        self.scrub = Redactor(plan).text
        with progress_display(self.err, self.interactive) as update:
            yield scrubbed(update, self.scrub)


def summary(result: ApplyResult, fmt: str, *, color: bool) -> str:
    """The closing report in the chosen format."""
    if fmt == "json":
        return render_json.render_apply_summary(result, plan=result.plan)
    if result.plan is not None and not result.plan.steps:
        return "No changes. The area matches the configuration.\n"
    return render_text.render_apply_summary(result, plan=result.plan, color=color)


SYMBOL = {"done": "ok", "failed": "FAILED", "skipped": "skipped"}


@contextmanager
def progress_display(console: Console, interactive: bool) -> Iterator[ProgressCallback]:
    """A progress callback: a rich bar on a terminal, one plain line per step otherwise."""
    if not interactive:
        yield plain_progress(console.print)
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=False)
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
