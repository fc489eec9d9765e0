"""`apimctl drift`: report what was changed in the area outside git; exit 2 when anything was.

The adapter around :func:`apimctl.drift.drift`: it parses the options, hands the core a way to
open the client (:func:`apimctl.cli.target.open_client`), and prints the report
(:func:`apimctl.render.drift.render_drift`) as text, JSON or Markdown. Meant for a scheduled
pipeline job.

Exit codes: 0 the area matches the manifests, 2 drift (some object differs), 1 error.
Unmanaged objects alone are not drift.

``--adopt`` (:func:`apimctl.adopt.adopt`) writes the live values into the manifests instead
and prints what it wrote (:func:`apimctl.render.adopt.render_adoption`): exit 0 every change
adopted, 2 some left for a person, 1 error (nothing written).
"""

from __future__ import annotations

from typing import Any

import click

from apimctl import process
from apimctl.adopt import AdoptRequest
from apimctl.adopt import adopt as run_adoption
from apimctl.cli.common import (
    EXIT_CHANGES,
    EXIT_OK,
    color_wanted,
    connection_options,
    impact_option,
    manifest_options,
)
from apimctl.cli.completers import complete_address, complete_field_address
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.drift import DriftRequest, drift
from apimctl.render.adopt import render_adoption
from apimctl.render.drift import render_drift


@click.command("drift")
@manifest_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Output format.")
@click.option("--ignore", "ignores", multiple=True, metavar="KIND:NAME:PATH",
              shell_complete=complete_field_address,
              help="Accept out-of-band changes to this field (like settings.ignore). Repeatable.")
@click.option("--target", "targets", multiple=True, metavar="KIND:NAME", shell_complete=complete_address,
              help="Only check these objects and what they contain. Repeatable.")
@click.option("--prune", is_flag=True,
              help="Count live top-level objects that no manifest declares as drift "
                   "(use it when apply runs with --prune).")
@click.option("--adopt", is_flag=True,
              help="Write each live value that differs into the manifest file and line that "
                   "defines it (the base, or the overlay that sets it), and report what was "
                   "written; values from ${VAR} and secrets are reported, never written.")
@click.option("--adopt-deletes", is_flag=True,
              help="With --adopt: remove from the manifests the objects deleted in the area.")
@click.option("--replay", "replay_log", metavar="LOG", type=click.Path(exists=True, allow_dash=True),
              help="Replay this call log against the manifests' configuration and the area as it is, and "
                   "report the calls whose answer the drift changes.")
@impact_option
@click.option("--no-color", is_flag=True,
              help="Plain output (also with NO_COLOR set, TERM=dumb, or when not a terminal).")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...], fmt: str,
            ignores: tuple[str, ...], targets: tuple[str, ...], prune: bool, no_color: bool,
            impact: str = "auto", adopt: bool = False, adopt_deletes: bool = False,
            replay_log: str | None = None, **_connection: Any) -> int:
    """Compare the area with the manifests in PATH... and report what changed outside git.

    For each difference: what changed and, where the platform records it, who and when.
    Exit codes: 0 no drift, 2 drift, 1 error. With --adopt: 0 every change adopted (or none to
    adopt), 2 some left for a person, 1 error (nothing written).
    """
    if not paths:
        raise click.UsageError("give at least one manifest PATH (a file or a directory)")
    settings = connection_settings(ctx)
    request = DriftRequest(paths=paths, overlays=overlays, ignores=ignores, targets=targets,
                           prune=prune, target=target_label(settings.get("url")), impact=impact)
    if adopt_deletes and not adopt:
        raise click.UsageError("--adopt-deletes goes with --adopt")
    if adopt:
        return _adopt(ctx, AdoptRequest(request, deletes=adopt_deletes), settings, fmt)
    report = run_command(lambda: drift(request, lambda: open_client(**settings, announce=_say), notice=_say,
                                       keep=process.keep),
                         deadline_of(ctx), _say)
    if replay_log is not None:  # the drift's steps, read backwards: what callers get now
        from apimctl.cli.replay import replay_plan

        report.plan.replay = run_command(lambda: replay_plan(replay_log, report.plan,
                                                             lambda: open_client(**settings, announce=_say),
                                                             reverse=True),
                                         deadline_of(ctx), _say)
    color = fmt == "text" and color_wanted(no_color)
    click.echo(render_drift(report, fmt, color=color), nl=False)
    return EXIT_CHANGES if report.drifted else EXIT_OK


def _say(line: str) -> None:
    click.echo(line, err=True)


def _adopt(ctx: click.Context, request: AdoptRequest, settings: dict[str, Any], fmt: str) -> int:
    adoption = run_command(lambda: run_adoption(request, lambda: open_client(
        **settings, announce=_say), notice=_say, keep=process.keep), deadline_of(ctx), _say)
    click.echo(render_adoption(adoption, fmt), nl=False)
    return EXIT_CHANGES if adoption.left else EXIT_OK
