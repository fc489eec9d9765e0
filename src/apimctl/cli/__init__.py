"""The command line: the only argument-parsing code of apimctl.

click parses, each command module calls one core function, renders its result and returns
an exit code. Errors of the ``ApimctlError`` hierarchy are caught here, in one place, and
mapped to the documented exit codes; anything else is a bug and is reported as such,
without a traceback unless ``-v`` was given.
"""

from __future__ import annotations

import sys

import click

from apimctl import __version__
from apimctl.cli import apply as apply_cmd
from apimctl.cli import drift as drift_cmd
from apimctl.cli import export as export_cmd
from apimctl.cli import lint as lint_cmd
from apimctl.cli import plan as plan_cmd
from apimctl.cli import schema as schema_cmd
from apimctl.cli import serve as serve_cmd
from apimctl.cli import validate as validate_cmd
from apimctl.cli.common import run_guarded


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="apimctl")
def cli() -> None:
    """Configuration as code for the API-management platform.

    Exit codes: 0 success and nothing to change, 1 error, 2 changes pending
    (plan --detailed-exitcode, drift), 3 apply finished partially, 130 interrupted.
    """


for _module in (validate_cmd, lint_cmd, plan_cmd, apply_cmd, drift_cmd, export_cmd, serve_cmd, schema_cmd):
    cli.add_command(_module.command)


def main() -> None:
    """Console-script entry point."""
    sys.exit(run_guarded(cli))
