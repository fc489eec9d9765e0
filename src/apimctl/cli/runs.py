"""`apimctl runs`: the applies journaled in ``.apimctl/runs/``, and what apply says of its run.

Each line is one run: when it started, its id, the area, its counts (done, failed, skipped)
and whether it finished; a run that did not (stopped by the quota, a signal, a crash) can be
continued with ``apimctl apply --resume RUN_ID`` or undone with ``apimctl rollback RUN_ID``.
A damaged journal is listed with what is wrong with it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click

from apimctl.applying import journal
from apimctl.applying.journal import Run
from apimctl.cli.apply_terminal import Terminal
from apimctl.cli.common import EXIT_OK
from apimctl.plans.result import ApplyResult


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
