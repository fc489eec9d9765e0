"""`apimctl plan`: read the live state, print the plan; writes nothing to the area.

The adapter around :func:`apimctl.planning.build.make_plan`: it loads the manifests (before any call,
so invalid input fails fast), opens the client (:func:`apimctl.cli.target.open_client`, which
announces the embedded server in one line on stderr), renders the plan as text, JSON or
Markdown on stdout and optionally saves it with ``--out`` (JSON, secrets as references only).

Exit codes: 0 (no changes, or changes without ``--detailed-exitcode``), 2 (changes pending
with ``--detailed-exitcode``; unmanaged objects alone are not changes), 1 error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from apimctl.cli.common import (
    EXIT_CHANGES,
    EXIT_OK,
    connection_options,
    envvar,
    manifest_options,
)
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.errors import ApimctlError
from apimctl.plans.model import Plan


@click.command("plan")
@manifest_options
@click.option("--out", "out_file", type=click.Path(dir_okay=False),
              help="Save the plan (JSON, secrets as references only) for `apply --plan FILE`.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, envvar=envvar("format"),
              help="text (like terraform plan), json (versioned; docs/plan-format.md) or "
                   "markdown (for pull-request comments).")
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 2 when there are changes (0 none, 1 error).")
@click.option("--target", "targets", multiple=True, metavar="KIND:NAME",
              help="Only these objects, what they contain and what they need. Repeatable.")
@click.option("--prune", is_flag=True, envvar=envvar("prune"),
              help="Delete live top-level objects that no manifest declares.")
@click.option("--max-deletes", type=click.IntRange(min=0), default=None,
              envvar=envvar("max_deletes"), help="Refuse a plan that deletes more than N objects.")
@click.option("--ignore", "ignores", multiple=True, metavar="KIND:NAME:PATH",
              help="Accept an out-of-band change to this field. Repeatable.")
@click.option("--no-color", is_flag=True, envvar=envvar("no_color"), help="Plain output.")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...],
            out_file: str | None, fmt: str, detailed_exitcode: bool, targets: tuple[str, ...],
            prune: bool, max_deletes: int | None, ignores: tuple[str, ...], no_color: bool,
            **_connection: Any) -> int:
    """Show what apply would change to make the area match the manifests in PATH...

    Reads the live configuration and writes nothing. Without --url it plans against the
    embedded reference server in .apimctl/local.db. Exit codes: 0 no changes (or changes
    without --detailed-exitcode), 2 changes pending with --detailed-exitcode, 1 error.
    """
    if not paths:
        raise click.UsageError("give at least one manifest PATH (a file or a directory)")
    if out_file:
        _check_out(out_file)  # before any call: a plan that cannot be saved is not made
    plan = asyncio.run(_plan(paths, overlays, targets, prune, max_deletes, ignores,
                             connection_settings(ctx)))
    if out_file:
        _save(plan, out_file)
    click.echo(render(plan, fmt, color=not no_color and sys.stdout.isatty()), nl=False)
    return EXIT_CHANGES if detailed_exitcode and plan.has_changes else EXIT_OK


async def _plan(paths: tuple[str, ...], overlays: tuple[str, ...], targets: tuple[str, ...],
                prune: bool, max_deletes: int | None, ignores: tuple[str, ...],
                settings: dict[str, Any]) -> Plan:
    from apimctl.manifests import load_manifests
    from apimctl.planning import ignore_rules, make_plan, parse_target

    manifest = load_manifests(list(paths), list(overlays))
    for warning in manifest.warnings:
        _say(f"Warning: {warning}")
    for text in targets:  # bad options fail before any call
        parse_target(text)
    ignore_rules(manifest.doc.get("settings") or {}, ignores)
    async with open_client(**settings, announce=_say) as client:
        plan = await make_plan(client, manifest, prune=prune, targets=list(targets),
                               ignores=list(ignores), max_deletes=max_deletes)
    plan.target = target_label(settings.get("url"))
    return plan


def render(plan: Plan, fmt: str, *, color: bool) -> str:
    """The plan in the chosen format, ending with a newline."""
    if fmt == "json":
        from apimctl.render.json import render_plan as render_json

        text = render_json(plan)
    elif fmt == "markdown":
        from apimctl.render.markdown import render_plan as render_markdown

        text = render_markdown(plan)
    else:
        from apimctl.render.text import render_plan as render_text

        text = render_text(plan, color=color)
    return text if text.endswith("\n") else text + "\n"


def _check_out(out_file: str) -> None:
    """Refuse an ``--out`` the plan could not be saved to: a directory, or a file in a
    directory that does not exist or cannot be written."""
    path = Path(out_file)
    if out_file.endswith(("/", "\\")) or path.is_dir():
        raise ApimctlError(f"cannot save the plan to {out_file}: give a file name, not a directory")
    folder = path.parent
    if not folder.is_dir():
        raise ApimctlError(f"cannot save the plan to {out_file}: directory {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ApimctlError(f"cannot save the plan to {out_file}: directory {folder} is not writable")


def _save(plan: Plan, out_file: str) -> None:
    """Write the plan to ``out_file`` in one piece: a temporary file in the same directory,
    renamed over the target, so a failed or interrupted save never leaves half a plan."""
    from apimctl.planning import literal_secrets

    _check_out(out_file)
    literals = literal_secrets(plan)
    if literals:
        raise ApimctlError(
            "cannot save the plan: a saved plan never holds secret values, and these secrets "
            "are written as literal values rather than ${ENV_VAR} references, so `apply --plan` "
            "could not write them: " + ", ".join(literals))
    path = Path(out_file)
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(plan.dumps())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temp, 0o666 & ~mask)  # the mode a plain write would give, not mkstemp's 0600
        os.replace(temp, path)
        temp = None
    except OSError as exc:
        raise ApimctlError(f"cannot save the plan to {out_file}: {exc.strerror or exc}") from None
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
    _say(f"Saved the plan to {out_file}; apply it with: apimctl apply --plan {out_file}")


def _say(line: str) -> None:
    click.echo(line, err=True)
