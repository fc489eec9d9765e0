"""`apimctl drift`: report what was changed in the area outside git; exit 2 when anything was.

The adapter around :func:`apimctl.drift.detect_drift`: it loads the manifests (before any
call, so invalid input fails fast), opens the client (:func:`apimctl.cli.target.open_client`),
and prints the report (:func:`apimctl.render.drift.render_drift`) as text, JSON or Markdown.
Meant for a scheduled pipeline job.

Exit codes: 0 the area matches the manifests, 2 drift (some object differs), 1 error.
Unmanaged objects alone are not drift.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click

from apimctl.cli.common import EXIT_CHANGES, EXIT_OK, connection_options, envvar, manifest_options
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.drift import DriftReport


@click.command("drift")
@manifest_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, envvar=envvar("format"), help="Output format.")
@click.option("--ignore", "ignores", multiple=True, metavar="KIND:NAME:PATH",
              help="Accept out-of-band changes to this field (like settings.ignore). Repeatable.")
@click.option("--target", "targets", multiple=True, metavar="KIND:NAME",
              help="Only check these objects and what they contain. Repeatable.")
@click.option("--prune", is_flag=True, envvar=envvar("prune"),
              help="Count live top-level objects that no manifest declares as drift "
                   "(use it when apply runs with --prune).")
@click.option("--no-color", is_flag=True, envvar=envvar("no_color"), help="Plain output.")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...], fmt: str,
            ignores: tuple[str, ...], targets: tuple[str, ...], prune: bool, no_color: bool,
            **_connection: Any) -> int:
    """Compare the area with the manifests in PATH... and report what changed outside git.

    For each difference: what changed and, where the platform records it, who and when.
    Exit codes: 0 no drift, 2 drift, 1 error.
    """
    if not paths:
        raise click.UsageError("give at least one manifest PATH (a file or a directory)")
    report = asyncio.run(_drift(paths, overlays, ignores, targets, prune, connection_settings(ctx)))
    from apimctl.render.drift import render_drift

    color = fmt == "text" and not no_color and sys.stdout.isatty()
    click.echo(render_drift(report, fmt, color=color), nl=False)
    return EXIT_CHANGES if report.drifted else EXIT_OK


async def _drift(paths: tuple[str, ...], overlays: tuple[str, ...], ignores: tuple[str, ...],
                 targets: tuple[str, ...], prune: bool, settings: dict[str, Any]) -> DriftReport:
    from apimctl.drift import detect_drift
    from apimctl.manifests import load_manifests
    from apimctl.planning import ignore_rules, parse_target

    manifest = load_manifests(list(paths), list(overlays))
    for warning in manifest.warnings:
        _say(f"Warning: {warning}")
    for text in targets:
        parse_target(text)
    ignore_rules(manifest.doc.get("settings") or {}, ignores)  # bad rules fail before any call
    async with open_client(**settings, announce=_say) as client:
        return await detect_drift(client, manifest, ignores=list(ignores), targets=list(targets),
                                  target=target_label(settings.get("url")), prune=prune)


def _say(line: str) -> None:
    click.echo(line, err=True)
