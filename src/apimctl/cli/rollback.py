"""`apimctl rollback RUN_ID`: plan the undoing of a journaled apply; writes nothing.

The adapter around :func:`apimctl.applying.rollback.plan_rollback`: it reads the run's journal
(``.apimctl/runs/RUN_ID.jsonl``, or ``--journal PATH``), reads the area, makes the inverse
plan with its caller impact, prints it like ``apimctl plan`` (text, JSON or Markdown) and
saves it with ``--out FILE``, to apply with ``apimctl apply --plan FILE`` (reviewed and
refused when stale like any saved plan). What cannot come back identical is said on stderr.

Exit codes: 0 a plan (or nothing to undo), 1 error: an unknown run id, a damaged journal or
one of another area, an object changed after the run (without ``--force``).
"""

from __future__ import annotations

from typing import Any

import click

from apimctl.applying import journal
from apimctl.applying.rollback import Rollback, plan_rollback
from apimctl.applying.run import read_state
from apimctl.cli.common import EXIT_OK, color_wanted, connection_options
from apimctl.cli.plan import render
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.target import Paced, connection_settings, target_label
from apimctl.planning.impact import attach_impact
from apimctl.plans.file import check_destination, save_plan


@click.command("rollback")
@click.argument("run_id")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False), default=None,
              metavar="PATH", help="The run's journal (default .apimctl/runs/RUN_ID.jsonl).")
@click.option("--force", is_flag=True,
              help="Plan the rollback even when objects were changed after the run.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Save the plan, to apply with: apimctl apply --plan FILE.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Format of the plan.")
@click.option("--no-color", is_flag=True, help="Plain output.")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, run_id: str, journal_path: str | None, force: bool,
            out_file: str | None, fmt: str, no_color: bool, **_connection: Any) -> int:
    """Plan the inverse of the apply RUN_ID (see `apimctl runs`): delete what it created,
    set back the fields it changed. Refused, naming each object, when an object was changed
    after the run, unless --force. Writes nothing: apply the plan with --out FILE and
    `apimctl apply --plan FILE`."""
    settings = connection_settings(ctx)
    area = target_label(settings.get("url"))
    run = journal.load(journal.locate(run_id, journal_path), run_id=run_id, area=area)
    if out_file:
        check_destination(out_file)
    paced = Paced(settings, _say)

    async def make() -> Rollback:
        async with paced.connect() as client:
            made = await plan_rollback(client, run, force=force)
            if made.plan.steps:  # who the undoing affects: the area's keys, read for it
                await attach_impact(client, made.plan, (await read_state(client))[1])
            return made

    made = run_command(make, deadline_of(ctx), _say)
    if not run.complete:
        _say(f"Run {run_id} did not finish: the rollback undoes what it wrote before it stopped.")
    for line in made.lost:
        _say(f"Warning: {line}")
    if out_file and made.plan.steps:
        save_plan(made.plan, out_file)
        _say(f"Saved the rollback plan to {out_file}; apply it with: apimctl apply --plan {out_file}")
    click.echo(render(made.plan, fmt, color=color_wanted(no_color), saved=out_file), nl=False)
    return EXIT_OK


def _say(line: str) -> None:
    click.echo(line, err=True)
