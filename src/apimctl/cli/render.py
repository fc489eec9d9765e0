"""``apimctl render PATH... [--overlay DIR]... [--mock-env] [--format yaml|json]``.

Offline: prints the effective manifests (base and overlays merged, ``${VAR}`` substituted,
shorthands expanded) on stdout, secrets masked (their ``${VAR}`` reference, or
``(sensitive)``), so a reviewer sees what an overlay produced. The work is
:func:`apimctl.manifests.render.render_manifests`. Exit 0 rendered, 1 invalid manifests.
"""

from __future__ import annotations

import json
from typing import Any

import click
import yaml

from apimctl.cli.common import EXIT_OK, manifest_options
from apimctl.manifests.environment import MOCK_PREFIX
from apimctl.manifests.render import render_manifests


@click.command("render")
@manifest_options
@click.option("--mock-env", is_flag=True,
              help=f"Fill variables that are not set with placeholders ({MOCK_PREFIX}NAME), "
                   "for CI jobs without the secrets.")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="Output format.")
def command(paths: tuple[str, ...], overlays: tuple[str, ...], mock_env: bool, fmt: str,
            **_policy: Any) -> int:
    """Print the effective manifests of PATH... after overlays and variables, secrets masked.

    No network is used. Secret fields show their ${VAR} reference, never a value.
    """
    if not paths:
        raise click.UsageError("give at least one manifest PATH (a file or a directory)")
    rendered = render_manifests(paths, overlays, mock_env=mock_env)
    for warning in rendered.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if rendered.mocked:
        click.echo("Placeholders for variables that are not set: " + ", ".join(rendered.mocked),
                   err=True)
    if fmt == "json":
        click.echo(json.dumps(rendered.doc, indent=2, ensure_ascii=False))
    else:
        header = (f"# apimctl render {' '.join(paths)}"
                  + "".join(f" --overlay {o}" for o in overlays)
                  + "\n# effective manifests: overlays merged, variables substituted, secrets masked\n")
        click.echo(header + yaml.safe_dump(rendered.doc, sort_keys=False, allow_unicode=True,
                                           width=100), nl=False)
    return EXIT_OK
