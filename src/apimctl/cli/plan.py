"""`apimctl plan`: read the live state, print the plan; writes nothing to the area.

The adapter around :func:`apimctl.planning.command.plan`: it parses the options, hands the
core a way to open the client (:func:`apimctl.cli.target.open_client`, which announces the
embedded server in one line on stderr), renders the plan as text, JSON or Markdown on stdout
and says on stderr where ``--out`` saved it.

Exit codes: 0 (no changes, or changes without ``--detailed-exitcode``), 2 (changes pending
with ``--detailed-exitcode``: steps, or duplicates in the area that ``--repair-duplicates``
would delete; unmanaged objects alone are not changes), 1 error.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from apimctl import process
from apimctl.cli.common import (
    EXIT_CHANGES,
    EXIT_ERROR,
    EXIT_OK,
    color_wanted,
    connection_options,
    impact_option,
    manifest_options,
    rotation_options,
    rotations,
)
from apimctl.cli.completers import complete_address, complete_field_address
from apimctl.cli.lint import lint_gate, lint_options
from apimctl.cli.pager import show_plan
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.runs import daily_quota, quota_option, tell_budget
from apimctl.cli.target import Paced, connection_settings, target_label
from apimctl.planning.command import PlanRequest, plan
from apimctl.planning.duplicates import pending
from apimctl.plans.model import Plan


@click.command("plan")
@manifest_options
@click.option("--out", "out_file", type=click.Path(dir_okay=False),
              help="Save the plan (JSON, secrets as references only) for `apply --plan FILE`.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True,
              help="text (like terraform plan), json (versioned; docs/plan-format.md) or "
                   "markdown (for pull-request comments).")
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 2 when there are changes, duplicates in the area included (0 none, 1 error).")
@click.option("--target", "targets", multiple=True, metavar="KIND:NAME", shell_complete=complete_address,
              help="Only these objects, what they contain and what they need. Repeatable.")
@click.option("--prune", is_flag=True,
              help="Delete live top-level objects that no manifest declares.")
@click.option("--max-deletes", type=click.IntRange(min=0), default=None, metavar="N",
              help="Refuse a plan that deletes more than N objects.")
@click.option("--ignore", "ignores", multiple=True, metavar="KIND:NAME:PATH",
              shell_complete=complete_field_address,
              help="Accept an out-of-band change to this field. Repeatable.")
@click.option("--repair-duplicates", is_flag=True,
              help="Plan deletes of the extra live copies of objects and nested items that "
                   "share one identity (keeping the one pinned by id:, else the oldest).")
@click.option("--tests", "tests", multiple=True, type=click.Path(exists=True), metavar="PATH",
              help="Also run these call tests (apimctl test) on a throw-away area with the manifests "
                   "applied, and append their results; a failed check exits 1. Repeatable.")
@click.option("--replay", "replay_log", metavar="LOG", type=click.Path(exists=True, allow_dash=True),
              help="Replay this call log (a file, a folder or -: call-log records, gzip accepted) against "
                   "the area as it is and as the plan would leave it, and report the calls whose answer "
                   "would change, by plan change. Nothing is sent anywhere.")
@rotation_options
@impact_option
@click.option("--no-color", is_flag=True,
              help="Plain output (also with NO_COLOR set, TERM=dumb, or when not a terminal).")
@click.option("--full", is_flag=True,
              help="Print the whole plan on a terminal too (a plan longer than the screen "
                   "otherwise starts with its totals and goes to a pager).")
@quota_option
@lint_options
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...],
            out_file: str | None, fmt: str, detailed_exitcode: bool, targets: tuple[str, ...],
            prune: bool, max_deletes: int | None, ignores: tuple[str, ...], no_color: bool,
            full: bool = False, repair_duplicates: bool = False, rotate_secrets: bool = False,
            rotate: tuple[str, ...] = (), impact: str = "auto", tests: tuple[str, ...] = (),
            replay_log: str | None = None, **_connection: Any) -> int:
    """Show what apply would change to make the area match the manifests in PATH...

    Reads the live configuration and writes nothing. Without --url it plans against the
    embedded reference server in .apimctl/local.db. Exit codes: 0 no changes (or changes
    without --detailed-exitcode), 2 changes pending with --detailed-exitcode (duplicates in
    the area included: --repair-duplicates deletes them), 1 error.
    """
    if not paths:
        raise click.UsageError("give at least one manifest PATH (a file or a directory)")
    lint_gate(ctx, paths, overlays)  # --lint: the policy rules first, refusing on failures
    settings = connection_settings(ctx)
    request = PlanRequest(paths=paths, overlays=overlays, prune=prune, targets=targets,
                          ignores=ignores, max_deletes=max_deletes, out=out_file,
                          target=target_label(settings.get("url")),
                          repair_duplicates=repair_duplicates,
                          rotate=rotations(rotate_secrets, rotate), impact=impact)
    paced = Paced(settings, _say)
    made = run_command(lambda: plan(request, paced.connect, notice=_say, keep=process.keep),
                       deadline_of(ctx), _say)
    tell_budget(_say, made, paced.client, daily_quota(ctx))  # every target: the plan shows it
    note = paced.note()
    if note:
        _say(note)
    if settings.get("url"):  # the embedded server approves new domains at once
        from apimctl.planning.domains import new_domain_warnings

        for warning in new_domain_warnings(made):
            _say(f"Warning: {warning}.")
    if out_file:
        _say(f"Saved the plan to {out_file}; apply it with: apimctl apply --plan {out_file}")
    if replay_log is not None:
        from apimctl.cli.replay import replay_plan

        made.replay = run_command(lambda: replay_plan(replay_log, made, paced.connect),
                                  deadline_of(ctx), _say)
    color = color_wanted(no_color)
    if fmt == "text":  # a long plan on a terminal: its totals, then a pager
        from apimctl.render.text import render_totals

        show_plan(render(made, fmt, color=color, saved=out_file), render_totals(made, color=color),
                  full=full, interactive=sys.stdout.isatty(), err=False)
    else:
        click.echo(render(made, fmt, color=color, saved=out_file), nl=False)
    if tests and not _call_checks(tests, paths, overlays, fmt):
        return EXIT_ERROR
    due = made.has_changes or bool(pending(made))  # duplicates left alone are changes too
    return EXIT_CHANGES if detailed_exitcode and due else EXIT_OK


def _call_checks(tests: tuple[str, ...], paths: tuple[str, ...], overlays: tuple[str, ...], fmt: str) -> bool:
    """Run the call tests; their Markdown section follows a Markdown plan, their text report a
    text plan (a JSON plan stays alone on stdout). True when every check passed."""
    from apimctl.calltests.report import headline, markdown, text
    from apimctl.cli.test import call_checks

    results = call_checks(tests, paths, overlays)
    if fmt == "markdown":
        click.echo("\n" + markdown(results), nl=False)
    elif fmt == "text":
        click.echo("\n" + text(results), nl=False)
    else:
        _say(headline(results))
    return all(r.passed for r in results)


def render(plan: Plan, fmt: str, *, color: bool, saved: str | None = None) -> str:
    """The plan in the chosen format, ending with a newline (``saved``: where ``--out`` put
    the whole plan, which a Markdown comment cut for length points to)."""
    if fmt == "json":
        from apimctl.render.json import render_plan as render_json

        text = render_json(plan)
    elif fmt == "markdown":
        from apimctl.render.markdown import render_plan as render_markdown

        text = render_markdown(plan, saved=saved)
    else:
        from apimctl.render.text import render_plan as render_text

        text = render_text(plan, color=color)
    return text if text.endswith("\n") else text + "\n"


def _say(line: str) -> None:
    click.echo(line, err=True)
