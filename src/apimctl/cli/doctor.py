"""``apimctl doctor``: check the connection to an area without planning anything.

The adapter around :func:`apimctl.applying.doctor.diagnose`: the connection options as for
``plan``, then one line per check (the URL, the token or the token exchange, the dialect, the
quota headers, the apply lease), each saying what is wrong and what to do. Exit 0 when nothing
failed (warnings allowed), 1 when a check failed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import click
import httpx

from apimctl.applying.doctor import Check, Target, diagnose
from apimctl.cli.common import EXIT_ERROR, EXIT_OK, color_wanted, connection_options
from apimctl.cli.target import connection_settings, open_client, qps_in_effect, target_label

_MARKS = {"ok": ("ok", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "red"),
          "skip": ("-", None)}


@click.command("doctor")
@click.option("--no-color", is_flag=True, help="Plain output.")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, no_color: bool, **_connection: Any) -> int:
    """Check that the area can be reached: URL, credentials, dialect, quota, lease.

    One line per check; nothing is written. Exit 0 when every check passed (warnings
    allowed), 1 when one failed.
    """
    settings = connection_settings(ctx)
    seen: dict[str, str] = {}

    def observe(response: httpx.Response) -> None:
        seen.update({k.lower(): v for k, v in response.headers.items()})

    def say(line: str) -> None:
        click.echo(line, err=True)

    url = settings.get("url")
    target = Target(label=target_label(url), exchange=bool(url) and not settings.get("token"),
                    qps=qps_in_effect(url, settings["qps"], settings["qps_given"]))
    checks = asyncio.run(diagnose(lambda: open_client(**settings, announce=say, observe=observe),
                                  target, lambda: seen))
    color = color_wanted(no_color)
    for check in checks:
        click.echo(_line(check, color))
    return EXIT_ERROR if any(c.status == "fail" for c in checks) else EXIT_OK


def _line(check: Check, color: bool) -> str:
    mark, tint = _MARKS[check.status]
    shown = click.style(f"{mark:<4}", fg=tint) if color and tint else f"{mark:<4}"
    return f"{shown} {check.name}: {check.detail}"
