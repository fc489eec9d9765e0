"""`apimctl runs`: the applies journaled in ``.apimctl/runs/``, and what apply says of its run.

Each line is one run: when it started, its id, the area, its counts (done, failed, skipped)
and whether it finished; a run that did not (stopped by the quota, a signal, a crash) can be
continued with ``apimctl apply --resume RUN_ID`` or undone with ``apimctl rollback RUN_ID``.
A damaged journal is listed with what is wrong with it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from apimctl.applying import budget, journal
from apimctl.applying.journal import Run
from apimctl.cli.apply_terminal import Terminal
from apimctl.cli.common import EXIT_OK, envvar
from apimctl.cli.profiles import load_profile
from apimctl.cli.target import target_label
from apimctl.errors import PlanError
from apimctl.plans.model import Plan
from apimctl.plans.result import ApplyResult

F = TypeVar("F", bound=Callable[..., Any])


@click.command("runs")
@click.option("--dir", "folder", type=click.Path(file_okay=False), default=str(journal.RUNS_DIR),
              show_default=True, help="The folder of the journals.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Format of the list.")
def command(folder: str, fmt: str) -> int:
    """List the applies journaled here: time, run id, area, counts, complete or not."""
    found = journal.listing(Path(folder))
    if fmt == "json":
        click.echo(json.dumps([_json(r) for r in found], indent=2))
        return EXIT_OK
    if not found:
        click.echo(f"No runs journaled in {folder}.")
        return EXIT_OK
    for run in found:
        click.echo(_line(run))
    return EXIT_OK


def _counts(run: Run) -> dict[str, int]:
    steps = len(run.plan.steps)
    return {"steps": steps, "done": len(run.done), "failed": len(run.failed),
            "not_done": steps - len(run.done) - len(run.failed)}


def _line(run: Run | journal.JournalError) -> str:
    if isinstance(run, journal.JournalError):
        return f"(damaged) {run}"
    counts = _counts(run)
    state = "complete" if run.complete else "INCOMPLETE"
    return (f"{run.started}  {run.run_id}  {run.area or '-'}  {counts['done']}/{counts['steps']} done, "
            f"{counts['failed']} failed, {counts['not_done']} not done  {state}")


def _json(run: Run | journal.JournalError) -> dict[str, Any]:
    if isinstance(run, journal.JournalError):
        return {"error": str(run)}
    return {"run_id": run.run_id, "started": run.started, "area": run.area, "complete": run.complete,
            "journal": str(run.path), **_counts(run)}


# --------------------------------------------------------------------------- apply's side


def resumed_run(run_id: str, journal_path: str | None, area: str) -> Run:
    """The run ``apply --resume RUN_ID`` continues, refused when unknown, damaged, of another
    area or finished with nothing left."""
    run = journal.load(journal.locate(run_id, journal_path), run_id=run_id, area=area)
    left = [s for s in run.plan.steps if s.address not in run.done]
    if run.complete and not left:
        raise journal.JournalError(f"run {run_id} finished with every step done: nothing to resume")
    if not run.sources:
        raise journal.JournalError(f"run {run_id} applied a saved plan: apply it again with "
                                   "--plan FILE instead of --resume")
    return run


def tell_run(term: Terminal, result: ApplyResult) -> None:
    """Where the run's journal is and, for a run that stopped, the line that continues it."""
    if not result.run_id:
        return
    term.say(f"Run {result.run_id}: journal {result.journal}")
    if result.stopped or result.interrupted or result.skipped:
        term.say(f"Continue it with: apimctl apply --resume {shlex.quote(result.run_id)} --auto-approve"
                 + (f" --journal {shlex.quote(result.journal)}"
                    if Path(result.journal) != journal.default_path(result.run_id) else ""))


# --------------------------------------------------------------------------- the budget


def quota_option(func: F) -> F:
    """``--daily-quota N``: the calls the token may make per UTC day (else the profile's
    ``daily_quota``)."""
    return click.option(
        "--daily-quota", "daily_quota", type=click.IntRange(min=0), default=None, metavar="N",
        envvar=envvar("daily_quota"),
        help="Calls the token may make per UTC day (default: the profile's daily_quota): an apply "
             "whose calls do not fit in what is left is refused before writing, saying when it "
             "would fit.")(func)


def daily_quota(ctx: click.Context) -> int | None:
    """``--daily-quota`` (command line or environment), else the profile's ``daily_quota``."""
    given = ctx.params.get("daily_quota")
    if given is not None:
        return int(given)
    found = load_profile(ctx.params.get("profile")).get("daily_quota")
    return int(found) if found is not None else None


def quota_used(ctx: click.Context, settings: Mapping[str, Any]) -> int:
    """The calls today's runs journaled here made on the area (only with a daily quota)."""
    if daily_quota(ctx) is None:
        return 0
    return journal.calls_today(target_label(settings.get("url")))


def tell_budget(say: Callable[[str], None], plan: Plan, client: Any, quota: int | None) -> None:
    """The plan's budget (``plan``: shown with the plan, in every format that has it), and on
    stderr whether it fits in the daily quota (``--daily-quota``, or the quota headers)."""
    if not plan.steps:
        return
    stats = getattr(client, "stats", None)
    reads = int(stats.reads()) if stats is not None else 0
    plan.budget = budget.estimate(plan, reads, qps=getattr(getattr(client, "limiter", None), "qps", None))
    try:
        budget.check_quota(plan.budget, quota, 0, told=getattr(stats, "quota", None))
    except PlanError as exc:
        say(f"Warning: {str(exc).removesuffix('; nothing was written')}")
