"""``apimctl schema``: print the manifest JSON Schema, for editors and other tools.

Point an editor at it with a modeline on the first line of a manifest::

    # yaml-language-server: $schema=https://raw.githubusercontent.com/apimctl/apimctl/main/schemas/manifest.schema.json
"""

from __future__ import annotations

import click

from apimctl.cli.common import EXIT_OK
from apimctl.manifests import schema_text


@click.command("schema")
def command() -> int:
    """Print the manifest JSON Schema (Draft 2020-12) on stdout."""
    click.echo(schema_text(), nl=False)
    return EXIT_OK
