"""A long plan on a terminal: its totals first, then the plan in a pager.

A plan that fits the screen is printed as it is. On a terminal, a longer one starts with its
totals line, goes to the pager (``$PAGER``, else ``less``), and the totals are repeated after
it, next to the question that follows; ``--full`` prints it all instead. Output that is not a
terminal (a pipe, a CI log) always gets the whole plan.
"""

from __future__ import annotations

import os
import sys

import click

MARGIN = 3  # lines kept for the totals and the question


def screen_lines(err: bool) -> int:
    """The height of the terminal the plan goes to; 0 when it does not say (a terminal with
    no size set: nothing is paged then)."""
    stream = sys.stderr if err else sys.stdout
    try:
        return os.get_terminal_size(stream.fileno()).lines
    except (AttributeError, OSError, ValueError):
        return 0


def show_plan(text: str, totals: str, *, full: bool, interactive: bool, err: bool,
              height: int | None = None) -> None:
    """Print ``text`` (a rendered plan ending in ``totals``), paged when it is long."""
    lines = text.count("\n")
    screen = height if height is not None else screen_lines(err)
    if full or not interactive or screen <= 0 or lines <= screen - MARGIN:
        click.echo(text, err=err, nl=False)
        return
    click.echo(f"{totals}\n(the plan is {lines} lines: shown in a pager; --full prints it here)",
               err=err)
    # less: quit at once when it fits after all, keep colours, leave the text on the screen
    os.environ.setdefault("LESS", "FRX")
    click.echo_via_pager(text)
    click.echo(totals, err=err)
