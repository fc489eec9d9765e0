"""``apimctl validate PATH... [--overlay DIR]... [--format text|json|github]``.

Offline: reads the manifests, checks them against the schema and the rules beyond it, prints
every problem and a one-line summary on stderr. Exit 0 when valid (warnings allowed), 1 when
not. The work is :func:`apimctl.manifests.command.validate`; this module only parses and renders.
"""

from __future__ import annotations

from typing import Any

import click

from apimctl import process
from apimctl.cli.common import EXIT_ERROR, EXIT_OK, manifest_options
from apimctl.manifests.command import ValidateRequest, validate
from apimctl.render.problems import FORMATS, render, summary


@click.command("validate")
@manifest_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: file:line:col: path: message; json: for tools; github: Actions annotations.")
@click.option("--allow-missing-vars", is_flag=True,
              help="An unset ${VAR} is a warning, not an error (for pre-commit and machines "
                   "without the secrets); plan and apply still need every value.")
def command(paths: tuple[str, ...], overlays: tuple[str, ...], fmt: str,
            allow_missing_vars: bool, **_policy: Any) -> int:
    """Check manifests offline: YAML, schema, references. No network is used.

    PATH is a manifest file or a directory (every *.yaml/*.yml directly inside it).
    """
    if not paths:
        raise click.UsageError("give at least one PATH (a manifest file or a directory)")
    result = validate(ValidateRequest(paths, overlays, allow_missing_vars))
    process.keep(result)  # the manifests are not taken apart before the command ends
    output = render(result.problems, fmt, files=len(result.files), objects=result.objects)
    if output:
        click.echo(output, nl=False)
    click.echo(summary(result.problems, files=len(result.files), objects=result.objects), err=True)
    return EXIT_OK if result.valid else EXIT_ERROR
