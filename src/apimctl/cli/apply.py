"""`apimctl apply`: plan (or load a saved plan), confirm, execute, summarise.

The adapter around :func:`apimctl.applying.run.apply_plan`: it parses the options, reads the
manifests and plans (or loads ``--plan FILE``), shows the plan and asks for confirmation on a
terminal (``--auto-approve`` otherwise), draws progress (a rich progress bar on a terminal,
one plain line per step otherwise, both on stderr) and prints the summary in the chosen
format. The exit code is the result's: 0 done, 3 partial, 1 nothing written or refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from apimctl.api.client import ApiClient
from apimctl.applying.run import (
    ApplyOptions,
    ApplyResult,
    apply_plan,
    check_deletes,
    check_saved_plan,
    check_secrets,
)
from apimctl.applying.schedule import ProgressCallback, ProgressEvent
from apimctl.cli.common import connection_options, envvar, manifest_options
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.errors import ApimctlError, PlanError
from apimctl.manifests import Manifest, load_manifests
from apimctl.planning import build_plan, ignore_rules, parse_target
from apimctl.plans.model import Plan
from apimctl.render import json as render_json
from apimctl.render import text as render_text
from apimctl.render.style import Redactor
from apimctl.state import live


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
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    if not auto_approve and not interactive:
        raise ApimctlError("apply needs confirmation and there is no terminal to ask on: "
                           "pass --auto-approve to apply without confirmation")
    err = Console(stderr=True, no_color=no_color, highlight=False, emoji=False)
    run = Run(paths=paths, overlays=overlays, plan_file=plan_file, auto_approve=auto_approve,
              max_deletes=max_deletes, fmt=fmt, prune=prune, targets=targets, ignores=ignores,
              color=not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty(),
              interactive=interactive, err=err,
              settings=connection_settings(ctx))
    return asyncio.run(run.main())


class Run:
    """One invocation of the command: the parsed options and the steps of the run."""

    def __init__(self, *, paths: Sequence[str], overlays: Sequence[str], plan_file: str | None,
                 auto_approve: bool, max_deletes: int | None, fmt: str, prune: bool,
                 targets: Sequence[str], ignores: Sequence[str], color: bool, interactive: bool,
                 err: Console, settings: dict[str, Any]) -> None:
        self.paths, self.overlays, self.plan_file = list(paths), list(overlays), plan_file
        self.auto_approve, self.max_deletes, self.fmt = auto_approve, max_deletes, fmt
        self.prune, self.targets, self.ignores = prune, list(targets), list(ignores)
        self.color, self.interactive, self.err, self.settings = color, interactive, err, settings

    def say(self, line: str) -> None:
        self.err.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)

    async def main(self) -> int:
        # bad input fails before any call, and before the embedded server's files are created
        source = self.read_input()
        async with open_client(**self.settings, announce=self.say) as client:
            plan, raw = await self.get_plan(client, source)
            if not plan.steps:
                return self.finish(ApplyResult(), plan, "No changes. The area matches the configuration.")
            check_deletes(plan, self.max_deletes)  # refusals come before the question
            check_secrets(plan, None)
            if self.plan_file is not None and not self.auto_approve:
                await check_saved_plan(client, plan)
            if not self.confirm(plan):
                self.say("Apply cancelled; nothing was written.")
                return 1
            # a server may echo a value it refused: resolved secrets never reach the terminal
            scrub = Redactor(plan).text
            options = ApplyOptions(parallelism=int(self.settings.get("parallelism") or 8),
                                   saved=self.plan_file is not None, max_deletes=self.max_deletes,
                                   note=(lambda line: self.say(scrub(line))) if self.settings.get("verbose") else None)
            with progress_display(self.err, self.interactive) as progress:
                options.progress = scrubbed(progress, scrub)
                result = await apply_plan(client, plan, options, raw=raw)
            return self.finish(result, plan)

    def read_input(self) -> Plan | Manifest:
        """The saved plan, or the manifests (with the --target and --ignore rules checked)."""
        if self.plan_file is not None:
            return load_saved_plan(self.plan_file)
        manifest = load_manifests(self.paths, self.overlays)
        for warning in manifest.warnings:
            self.say(f"Warning: {warning}")
        for text in self.targets:
            parse_target(text)
        ignore_rules(manifest.doc.get("settings") or {}, self.ignores)
        return manifest

    async def get_plan(self, client: ApiClient, source: Plan | Manifest) -> tuple[Plan, RawState | None]:
        """The plan to apply, and the live state it was made from (``None`` for a saved plan)."""
        here = target_label(self.settings.get("url"))
        if isinstance(source, Plan):
            if source.target and source.target != here:
                raise PlanError(f"the saved plan was made for {source.target}; this run targets {here}")
            return source, None
        manifest = source
        raw = await live.read_raw(client)
        plan = build_plan(manifest, live.from_raw(raw), prune=self.prune, targets=self.targets,
                          ignores=self.ignores)
        plan.target = here
        return plan, raw

    def confirm(self, plan: Plan) -> bool:
        if self.auto_approve:
            return True
        click.echo(render_text.render_plan(plan, color=self.color), err=True, nl=False)
        return click.confirm("Apply these changes?", default=False, err=True)

    def finish(self, result: ApplyResult, plan: Plan, message: str | None = None) -> int:
        if self.fmt == "json":
            click.echo(render_json.render_apply_summary(result, plan=plan), nl=False)
        elif message is not None:
            click.echo(message)
        else:
            click.echo(render_text.render_apply_summary(result, plan=plan, color=self.color), nl=False)
        return result.exit_code


def load_saved_plan(path: str) -> Plan:
    """A plan saved by ``plan --out``; a clear error when it cannot be read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"{path}: cannot read the saved plan: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PlanError(f"{path}: not a saved plan (not UTF-8 text: byte {exc.object[exc.start]:#04x} "
                        f"at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"{path}:{exc.lineno}:{exc.colno}: not a saved plan (invalid JSON: {exc.msg})") from None
    except RecursionError:
        raise PlanError(f"{path}: not a saved plan (JSON nested too deeply)") from None
    if not isinstance(data, dict) or "steps" not in data:
        raise PlanError(f"{path}: not a saved plan (no `steps`)")
    try:
        return Plan.from_json(data)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PlanError(f"{path}: not a valid saved plan ({type(exc).__name__}: {exc})") from None


RawState = dict[str, list[dict[str, Any]]]
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
