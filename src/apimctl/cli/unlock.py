"""`apimctl unlock [RUN_ID]`: break the area's apply lease left by a run that is gone.

The adapter around :func:`apimctl.applying.lease.break_lease` (like ``terraform
force-unlock``). With RUN_ID (as the refusal of a second apply names it) it breaks that run's
lease only. Without it, it shows who holds the lease and asks on a terminal, or needs
``--force`` when there is no terminal. Exit codes: 0 broken, or no lease held; 1 error or
declined.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

import click

from apimctl.applying.lease import Holder, Unlocked, break_lease
from apimctl.cli.common import EXIT_ERROR, EXIT_OK, connection_options
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.target import connection_settings, open_client
from apimctl.errors import ApimctlError


@click.command("unlock")
@click.argument("run_id", required=False)
@click.option("--force", is_flag=True,
              help="Break the lease without asking (needed without RUN_ID when there is no terminal).")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, run_id: str | None, force: bool, **_connection: Any) -> int:
    """Break the apply lease on the area (the role apimctl-apply-lease).

    Only when the apply holding it is gone (killed, its machine lost): a running apply whose
    lease is broken warns, and another apply may then run at the same time. RUN_ID is the
    run named by the refused apply; without it the current holder is shown and confirmed.
    """
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    if run_id is None and not force and not interactive:
        raise ApimctlError("unlock without RUN_ID asks for confirmation and there is no terminal "
                           "to ask on: pass the RUN_ID the refused apply named, or --force")
    settings = connection_settings(ctx)

    def say(line: str) -> None:
        click.echo(line, err=True)

    def confirm(holder: Holder) -> bool:
        say(f"The apply lease is held by {holder.describe()}.")
        return click.confirm("Break it?", default=False, err=True)

    ask = None if force or run_id else confirm

    def unlock() -> Coroutine[Any, Any, Unlocked]:
        return break_lease(lambda: open_client(**settings, announce=say), run_id, confirm=ask)

    # the question blocks the loop: signals and --deadline only when nothing is asked
    done = asyncio.run(unlock()) if ask else run_command(unlock, deadline_of(ctx), say,
                                                         done="the lease may or may not be broken")
    if done.holder is None:
        click.echo("No apply lease is held on this area; nothing to unlock.")
        return EXIT_OK
    if not done.broken:
        say("Not unlocked.")
        return EXIT_ERROR
    click.echo(f"Broke the apply lease held by {done.holder.describe()}.")
    return EXIT_OK
