"""The command line: the only argument-parsing code of apimctl.

click parses, each command module calls one core function, renders its result and returns
an exit code. Errors of the ``ApimctlError`` hierarchy are caught here, in one place, and
mapped to the documented exit codes; anything else is a bug and is reported as such,
without a traceback unless ``-v`` was given. Every option of every command also comes from
its environment variable (:func:`apimctl.cli.group.option_envvar`).
"""

from __future__ import annotations

import click

from apimctl import __version__, process
from apimctl.cli.common import exit_process, run_guarded
from apimctl.cli.group import Group, LazyCommands
from apimctl.render.lint import FORMATS as LINT_FORMATS
from apimctl.render.problems import FORMATS as PROBLEM_FORMATS
from apimctl.server.dialects import NAMES as DIALECT_NAMES

PLAN_FORMATS = ("text", "json", "markdown")
VERSION = (
    f"apimctl {__version__}\n"
    f"dialects: {', '.join(DIALECT_NAMES)} (--dialect auto detects the target's)\n"
    f"formats: plan/drift {', '.join(PLAN_FORMATS)}; validate {', '.join(PROBLEM_FORMATS)}; "
    f"lint {', '.join(LINT_FORMATS)}"
)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="apimctl", message=VERSION)
def cli() -> None:
    """Configuration as code for the API-management platform.

    Options go after the command (apimctl plan --url ... PATH); each also comes from
    the environment variable shown in the command's --help: APIMCTL_<NAME> for the
    connection settings (APIMCTL_URL, APIMCTL_TOKEN, ...), APIMCTL_<COMMAND>_<NAME> for
    the others (APIMCTL_PLAN_FORMAT).

    Exit codes: 0 success and nothing to change, 1 error, 2 changes pending
    (plan --detailed-exitcode, drift), 3 apply finished partially, 130 interrupted.
    """


# each command's module (``apimctl.cli.<name>``, defining ``command``) is imported when the
# command is first asked for
cli.commands = LazyCommands({name: f"apimctl.cli.{name}" for name in (
    "validate", "lint", "render", "plan", "apply", "drift", "export", "serve", "schema",
    "unlock", "completion", "call", "test", "show", "doctor", "init", "consumer", "matrix", "diff",
    "promote", "runs", "rollback")})
cli.commands.modules["import"] = "apimctl.cli.imports"  # `import` is a keyword: another module name


def main() -> None:
    """Console-script entry point."""
    process.ending_with_command()
    exit_process(run_guarded(cli))
