"""What ``export --into``, ``diff`` and ``promote`` share: areas named on the command line.

An area is ``NAME=TARGET`` or a bare ``TARGET`` (then named after it), TARGET being a profile
of ``apimctl.toml`` (its URL and credentials) or a URL (the command's credentials). Each area
gets a client of its own, opened by :func:`area_source`; the other connection options
(``--qps``, ``--timeout``, ...) are the command's.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import click

from apimctl.areas.reading import AreaSource
from apimctl.cli.profiles import load_profile
from apimctl.cli.target import (
    EXPLICIT_EMBEDDED,
    connection_settings,
    open_client,
    register_credentials,
    target_label,
)
from apimctl.cli.tls import verification


def is_url(target: str) -> bool:
    return "://" in target


def split_area(value: str, option: str = "--area") -> tuple[str, str]:
    """``dev=staging-profile`` -> ``("dev", "staging-profile")``; a bare target names itself."""
    name, sep, target = value.partition("=")
    if not sep:
        if is_url(value):
            raise click.UsageError(f"{option} {value!r}: name an area given by URL (NAME=URL)")
        return value, value
    if not name.strip() or not target.strip() or is_url(name):
        raise click.UsageError(f"{option} {value!r}: expected NAME=TARGET (TARGET: a profile or a URL)")
    return name.strip(), target.strip()


def area_source(ctx: click.Context, name: str, target: str, say: Any) -> AreaSource:
    """The area ``target`` names, with the command's other connection settings."""
    params = ctx.params
    saved = params.get("url"), params.get("area"), params.get("profile")
    params["url"], params["area"], params["profile"] = EXPLICIT_EMBEDDED, None, None
    try:
        settings = connection_settings(ctx)  # the command's qps, timeout, credentials
    finally:
        params["url"], params["area"], params["profile"] = saved
    if is_url(target):
        settings["url"] = target
        label = target_label(target)
    else:
        profile = load_profile(target)
        settings.update({key: value for key, value in profile.items() if key in settings})
        if "dialect" in profile:
            settings["dialect_source"] = "profile"
        if not settings.get("url"):
            raise click.UsageError(f"area {name}: profile {target!r} gives no url")
        label = f"{target_label(settings['url'])} (profile {target})"
    register_credentials(settings)
    plain = {**{k: v for k, v in settings.items() if k != "verify"},
             "ca_bundle": params.get("ca_bundle"), "insecure": bool(params.get("insecure"))}
    settings["verify"] = verification(params.get("ca_bundle"), bool(params.get("insecure")))
    # the worker process may read the area too (areas.reading.read_area), quietly: not with
    # --verbose, whose lines tell the calls in order
    elsewhere = None if settings.get("verbose") else (reopen, plain)
    return AreaSource(name, label, lambda: open_client(**settings, announce=say), elsewhere)


def reopen(settings: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
    """The client of an area opened in the worker process, from :func:`area_source`'s
    settings as plain data (the TLS options in place of their context)."""
    given = dict(settings)
    register_credentials(given)
    verify = verification(given.pop("ca_bundle"), given.pop("insecure"), warn=_quiet)
    return open_client(**given, verify=verify, announce=_quiet)


def _quiet(line: str) -> None:
    """Nothing told from the worker process: this process told it already."""
