"""`apimctl consumer USERNAME --plan PACKAGE/PLAN`: a member, an application and a package key
on a plan, so that calls have someone to be made as.

The adapter around :func:`apimctl.applying.consumer.add_consumer`, against the area the
connection options name (the embedded one by default, the area `apimctl call` uses). It
prints what it created and the ids, never the key's value: `apimctl call --key USERNAME`
finds the member's key by the username. Exit 0, or 1 on an error (an unknown package or
plan, a refusal of the area).
"""

from __future__ import annotations

from typing import Any

import click

from apimctl.cli.common import EXIT_OK, connection_options
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.target import connection_settings, open_client
from apimctl.errors import ApimctlError


@click.command("consumer")
@click.argument("member", metavar="USERNAME")
@click.option("--plan", "plan", default=None, metavar="PACKAGE/PLAN",
              help="The plan the key is on, by its key (Weather Partners/Gold); required.")
@click.option("--application", default=None, help="The application's name (default: the username).")
@click.option("--email", default=None, help="The member's email (default: USERNAME@example.com).")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, member: str, plan: str | None, application: str | None, email: str | None,
            **_connection: Any) -> int:
    """Create a consumer: a member, their application and a key on a plan.

    What exists already is kept (the member of that username, the application of that name,
    its key on the plan), so running it again creates nothing. Calls made with
    `apimctl call --key USERNAME` then use that member's key.
    """
    from apimctl.applying.consumer import Consumer, add_consumer

    if not plan:
        raise ApimctlError("--plan PACKAGE/PLAN is required: the plan the key is on "
                           "(for example --plan 'Weather Partners/Gold')")
    settings = connection_settings(ctx)

    def say(line: str) -> None:
        click.echo(line, err=True)

    async def add() -> Consumer:
        async with open_client(**settings, announce=say) as client:
            return await add_consumer(client, member, str(plan), application=application, email=email)

    done = run_command(add, deadline_of(ctx), say, done="the consumer may be partly created")
    made = ", ".join(done.created) if done.created else "nothing (all of it existed)"
    click.echo(f"Consumer {done.username}: member {done.member_id}, application {done.application!r} "
               f"({done.application_id}), key {done.key_id} on plan {done.plan}; created {made}.")
    click.echo(f"Call as them with: apimctl call METHOD URL --key {done.username}")
    return EXIT_OK
