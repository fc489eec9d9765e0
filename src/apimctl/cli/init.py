"""``apimctl init [DIR]``: a repository skeleton for keeping an area in git.

The adapter around :func:`apimctl.export.scaffold.write_skeleton`: the manifests directory
(``apimctl/``: a starting manifest, or with ``--from-area`` the area's own configuration as
``apimctl export`` writes it), the gitops workflows, the pre-commit config and ``.gitignore``.
Existing files are kept unless ``--force``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from apimctl.cli.common import EXIT_OK, connection_options
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.export import LAYOUTS
from apimctl.export.command import ExportRequest, export
from apimctl.export.scaffold import MANIFESTS_DIR, write_skeleton


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--from-area", is_flag=True,
              help="Write the manifests from the area the connection options name (as export "
                   "does) instead of a starting template.")
@click.option("--layout", type=click.Choice(LAYOUTS), default="single", show_default=True,
              help="With --from-area: one apimctl.yaml, or one file per service plus one per kind.")
@click.option("--force", is_flag=True, help="Overwrite the skeleton's files where they exist.")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, directory: str, from_area: bool, layout: str, force: bool,
            **_connection: Any) -> int:
    """Start a repository that keeps an area in git, in DIRECTORY (default: here).

    Writes apimctl/ (a starting manifest, or the area's configuration with --from-area),
    .github/workflows/apimctl-{plan,apply,drift}.yml, .pre-commit-config.yaml and the lines
    .gitignore needs. Existing files are kept unless --force. The connection options are
    used only with --from-area.
    """
    root = Path(directory)
    if from_area:
        settings = connection_settings(ctx)
        out = root / MANIFESTS_DIR
        request = ExportRequest(layout="per-service" if layout == "per-service" else "single",
                                out=str(out), target=target_label(settings.get("url")))
        done = asyncio.run(export(request, lambda: open_client(**settings, announce=_say), notice=_say))
        for path in done.written:
            click.echo(f"wrote    {path}")
        if done.export.variables:
            _say("Secrets are written as references; set these environment variables (and "
                 "the repository's secrets) before plan/apply: " + ", ".join(done.export.variables))
    scaffold = write_skeleton(root, with_manifest=not from_area, force=force)
    for path in scaffold.written:
        click.echo(f"wrote    {root / path}")
    for path in scaffold.extended:
        click.echo(f"extended {root / path}")
    for path in scaffold.kept:
        click.echo(f"kept     {root / path} (exists; --force overwrites it)")
    _say(f"Next: apimctl validate {root / MANIFESTS_DIR}; set the secrets APIMCTL_URL and "
         "APIMCTL_TOKEN in the repository (the workflows' comments say which), then "
         "apimctl doctor to check the connection.")
    return EXIT_OK


def _say(line: str) -> None:
    click.echo(line, err=True)
