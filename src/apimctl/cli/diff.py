"""`apimctl diff SOURCE TARGET`: what differs between two areas, an area and manifests, or
two sets of manifests, object by object; writes nothing.

Each side is ``[NAME=]TARGET``: a path (manifests, with ``--overlay`` for either side or
``--source-overlay``/``--target-overlay`` for one), a profile of ``apimctl.toml``, or a URL
(then NAME is needed). The adapter around :func:`apimctl.areas.diffing.diff`; the output
(text, JSON or Markdown) is :mod:`apimctl.render.areas`.

Exit codes: 0 (identical, or differences without ``--detailed-exitcode``), 2 (differences
with ``--detailed-exitcode``), 1 error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from apimctl.cli.common import EXIT_CHANGES, EXIT_OK, connection_options
from apimctl.cli.running import deadline_of, run_command


@click.command("diff")
@click.argument("source")
@click.argument("target")
@click.option("--overlay", "overlays", multiple=True, type=click.Path(exists=True, file_okay=False),
              metavar="DIR", help="Overlay for each side that is manifests (repeatable).")
@click.option("--source-overlay", "source_overlays", multiple=True, type=click.Path(exists=True, file_okay=False),
              metavar="DIR", help="Overlay for the source side only (repeatable).")
@click.option("--target-overlay", "target_overlays", multiple=True, type=click.Path(exists=True, file_okay=False),
              metavar="DIR", help="Overlay for the target side only (repeatable).")
@click.option("--rewrite", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="Values that differ by a rule (hosts, name prefixes; as for export --into): "
                   "compared as equal when each side holds its own value.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="text, json (docs/diff-format.md) or markdown (for pull requests).")
@click.option("--detailed-exitcode", is_flag=True, help="Exit 2 when the sides differ (0 identical, 1 error).")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, source: str, target: str, overlays: tuple[str, ...],
            source_overlays: tuple[str, ...], target_overlays: tuple[str, ...], rewrite: str | None,
            fmt: str, detailed_exitcode: bool, **_connection: Any) -> int:
    """Compare SOURCE and TARGET object by object: identical, different (each field with
    both values; secrets as (sensitive)) or present on one side only.

    Each side is [NAME=]TARGET: manifests (a path; --overlay DIR), a profile, or NAME=URL.
    Areas are read concurrently, in one list call per 1,000 top-level objects.
    """
    from apimctl.areas.diffing import DiffRequest, diff
    from apimctl.render.areas import render_diff

    request = DiffRequest(side(ctx, source, (*overlays, *source_overlays)),
                          side(ctx, target, (*overlays, *target_overlays)), rewrite)
    comparison = run_command(lambda: diff(request), deadline_of(ctx), _say)
    click.echo(render_diff(comparison, fmt), nl=False)
    return EXIT_CHANGES if detailed_exitcode and comparison.differs else EXIT_OK


def side(ctx: click.Context, value: str, overlays: tuple[str, ...]) -> Any:
    """The side ``value`` names: manifests (an existing path), or an area."""
    from apimctl.areas.reading import ManifestSource
    from apimctl.cli.areas import area_source, is_url, split_area

    name, sep, rest = value.partition("=")
    named = bool(sep) and bool(name) and "/" not in name and not is_url(name)
    path = rest if named else value
    if Path(path).exists():
        default = Path(overlays[-1] if overlays else path).resolve().name
        return ManifestSource(name if named else default, (path,), overlays)
    if not named and not is_url(value) and ("/" in value or value.endswith((".yaml", ".yml"))):
        raise click.UsageError(f"{value}: no such file or directory (nor a profile name)")
    return area_source(ctx, *split_area(value, "side"), _say)


def _say(line: str) -> None:
    click.echo(line, err=True)
