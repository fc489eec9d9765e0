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
seconds), releases the lease if the area answers in time (within
:data:`~apimctl.applying.command.STOP_WITHIN` seconds of the signal; else it is left to
expire) and prints the summary; a second one exits at once.
Every run is journaled (:mod:`apimctl.applying.journal`; ``--journal PATH``); a run that
stopped is continued with ``--resume RUN_ID``, and against an area the summary ends with the
run's id and the line that continues it. ``--deadline`` stops the run the same way when it passes (before the execution: an error,
nothing written). The exit code is the result's: 0 done, 3 partial, 1 nothing written, refused or cancelled,
130 interrupted.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import click
from rich.console import Console

from apimctl import process
from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.lease import DEFAULT_TTL
from apimctl.cli.apply_terminal import Terminal, summary
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
from apimctl.cli.running import DeadlinePassed, deadline_message, deadline_of, install
from apimctl.cli.runs import daily_quota, quota_option, quota_used, resumed_run, tell_run
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.errors import ApimctlError
from apimctl.plans.result import ApplyResult


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
@click.option("--journal", "journal", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Write the run's journal here (default .apimctl/runs/RUN_ID.jsonl; with "
                   "--resume: the journal of the run to continue); see `apimctl runs` and "
                   "`apimctl rollback`.")
@click.option("--resume", "resume", default=None, metavar="RUN_ID",
              help="Continue a run that stopped (quota, --deadline, a signal, a crash): the "
                   "manifests are planned again and must match what is left of its plan.")
@quota_option
@click.option("--replay", "replay_log", metavar="LOG", type=click.Path(exists=True, allow_dash=True),
              help="Replay this call log against the plan before writing and say what callers would see.")
@click.option("--max-changed-calls", type=click.IntRange(min=0), default=None, metavar="N",
              help="With --replay: refuse an apply that would change the answer of more than N recorded calls.")
@lint_options
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...], plan_file: str | None,
            auto_approve: bool, max_deletes: int | None, fmt: str, prune: bool, targets: tuple[str, ...],
            ignores: tuple[str, ...], lock_timeout: float, no_lock: bool, no_color: bool,
            full: bool = False, lease_lifetime: float = DEFAULT_TTL, repair_duplicates: bool = False,
            rotate_secrets: bool = False, rotate: tuple[str, ...] = (),
            max_affected_keys: int | None = None, impact: str = "auto", journal: str | None = None,
            resume: str | None = None, replay_log: str | None = None, max_changed_calls: int | None = None,
            **_connection: Any) -> int:
    """Apply the manifests in PATH... (or a saved --plan FILE) to the area.

    Shows the plan and asks for confirmation on a terminal; pass --auto-approve in CI.
    Before its first write it takes the area's lease (the role apimctl-apply-lease): a second
    apply waits up to --lock-timeout, then is refused naming the holder (see `apimctl unlock`).
    Every write is sent only while the lease is known to be held; an apply whose lease was
    lost (broken, or taken over while this run was paused) stops at once.
    Exit codes: 0 done (or nothing to do), 3 partial apply (rerun converges),
    1 nothing written or refused, 130 interrupted.
    """
    remaining = None
    if resume is not None:
        if paths or plan_file or overlays:
            raise click.UsageError("--resume plans the run's own manifests again: give no PATH, "
                                   "--overlay or --plan")
        run = resumed_run(resume, journal, target_label(connection_settings(ctx).get("url")))
        paths = tuple(run.sources)
        remaining = frozenset((s.action, s.address) for s in run.plan.steps if s.address not in run.done)
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
    if max_changed_calls is not None and replay_log is None:
        raise click.UsageError("--max-changed-calls needs --replay LOG")
    if replay_log is not None:  # before anything is written: what recorded callers would see
        if plan_file:
            raise click.UsageError("--replay replays the plan of manifest PATH..., not a saved --plan")
        from apimctl.cli.replay import replay_gate

        replay_gate(replay_log, max_changed_calls, paths, overlays, settings,
                    lambda line: click.echo(line, err=True), prune=prune, targets=targets, ignores=ignores)
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
                           max_affected_keys=max_affected_keys, impact=impact,
                           journal=None if resume else journal, resumes=resume,
                           remaining=remaining, resumed_manifests=run.manifests if resume else "",
                           daily_quota=daily_quota(ctx),
                           quota_used=quota_used(ctx, settings), show_budget=bool(settings.get("url")))
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
        if settings.get("url"):  # the embedded server: `apimctl runs` lists them
            tell_run(term, result)
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
