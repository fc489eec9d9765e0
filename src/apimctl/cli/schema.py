"""``apimctl schema``: print the manifest JSON Schema, for editors and other tools;
``apimctl schema --plan``: the plan JSON Schema (``plan --format json`` and saved plans).

Point an editor at it with a modeline on the first line of a manifest::

    # yaml-language-server: $schema=https://raw.githubusercontent.com/apimctl/apimctl/main/schemas/manifest.schema.json
"""

from __future__ import annotations

import click

from apimctl.cli.common import EXIT_OK
from apimctl.manifests import schema_text
from apimctl.plans.file import plan_schema_text


@click.command("schema")
@click.option("--plan", "plan", is_flag=True,
              help="Print the plan JSON Schema (plan --format json, plan --out) instead.")
def command(plan: bool) -> int:
    """Print the manifest JSON Schema (Draft 2020-12) on stdout; with --plan, the plan's."""
    click.echo(plan_schema_text() if plan else schema_text(), nl=False)
    return EXIT_OK
