"""``apimctl show PLANFILE [--format text|markdown|json]``: print a saved plan.

A plan saved with ``plan --out FILE`` is read back as ``apply --plan`` reads it (checked
against the plan format, refused when it is not a plan this apimctl can apply) and rendered
as ``plan`` renders it: for a reviewer, a pull-request comment made later, or a tool. Offline:
nothing is read from an area.
"""

from __future__ import annotations

import click

from apimctl.cli.common import EXIT_CHANGES, EXIT_OK, color_wanted
from apimctl.cli.plan import render
from apimctl.plans.file import load_plan

FORMATS = ("text", "markdown", "json")


@click.command("show")
@click.argument("plan_file", metavar="PLANFILE", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: as plan prints it; markdown: for a pull request; json: the plan format.")
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 2 when the plan has changes (0 when it has none).")
@click.option("--no-color", is_flag=True, help="Plain output.")
def command(plan_file: str, fmt: str, detailed_exitcode: bool, no_color: bool) -> int:
    """Print the plan saved in PLANFILE (by plan --out) without reaching the area.

    The file is checked as apply --plan checks it; a file that is not a saved plan, or one
    of a newer format, is refused with what is wrong.
    """
    plan = load_plan(plan_file)
    click.echo(render(plan, fmt, color=color_wanted(no_color)), nl=False)
    return EXIT_CHANGES if detailed_exitcode and plan.has_changes else EXIT_OK
