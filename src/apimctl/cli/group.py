"""The command group and how each option gets its environment variable.

:class:`Group` is ``apimctl`` itself (help when alone, retired variables warned about, an
option before the command explained); :class:`LazyCommands` imports a command's module when the
command is first asked for and gives its options their variables then
(:func:`assign_envvars`, :func:`option_envvar`: ``APIMCTL_<NAME>`` for a connection setting,
``APIMCTL_<COMMAND>_<NAME>`` for every other option).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Mapping, MutableMapping

import click

from apimctl.cli.common import LINES, envvar

CONNECTION_SETTINGS = ("profile", "url", "token", "api_key", "api_secret", "username",
                       "password", "area", "qps", "parallelism", "timeout", "deadline", "verbose",
                       "dialect", "ca_bundle", "insecure", "public_env", "allow_symlinks_outside")
"""The options that mean the same to every command: those of :func:`connection_options`, and
what manifests may read (set by the pipeline), so each comes from one variable,
``APIMCTL_<NAME>`` (``APIMCTL_URL``, ``APIMCTL_PUBLIC_ENV``, ...)."""
SERVE_COMMAND = "serve"


def option_envvar(command: str, param: click.Option, connects: bool = True) -> str:
    """The environment variable of an option: ``APIMCTL_<NAME>`` for a connection setting,
    ``APIMCTL_<COMMAND>_<NAME>`` for every other option (``APIMCTL_PLAN_FORMAT``), so that a
    variable means one thing whichever command reads it. ``serve``'s options are its own
    (``serve --token`` is ``TOKEN=AREA``, not the client's access token): all of them are
    ``APIMCTL_SERVE_<NAME>``."""
    long = max(param.opts, key=len).lstrip("-")
    # ``connects``: the command takes the connection options (``call --url``, which names the
    # server of one call, is its own)
    if command != SERVE_COMMAND and connects and long.replace("-", "_") in CONNECTION_SETTINGS:
        return envvar(long)
    return envvar(f"{command}_{long}")


def takes_connection_options(command: click.Command) -> bool:
    """Whether ``command`` has the options of :func:`connection_options` (its ``--url`` is the
    area's)."""
    return any(p.name == "parallelism" for p in command.params)


def assign_envvars(name: str, command: click.Command) -> None:
    """Give every option of a command its variable (:func:`option_envvar`) and show it in
    ``--help``; repeatable text options read one value per line from it."""
    connects = takes_connection_options(command)
    for param in command.params:
        if not isinstance(param, click.Option) or (param.is_eager and param.expose_value is False):
            continue
        param.envvar = option_envvar(name, param, connects)
        param.show_envvar = True
        if param.multiple and param.type is click.STRING:
            param.type = LINES


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name, each command's module imported when the command is first
    asked for, and its options given their variables then (:func:`assign_envvars`): ``apimctl
    validate`` does not import what ``apply`` or ``serve`` need (a fifth of a second of every
    start). Listing the names imports nothing; ``--help`` imports every command."""

    def __init__(self, modules: Mapping[str, str]) -> None:
        self.modules = dict(modules)  # name -> module defining ``command``
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        found = self.loaded.get(name)
        if found is None:
            module = importlib.import_module(self.modules[name])
            found = self.loaded[name] = module.command
            assign_envvars(name, found)
        return found

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command
        self.modules.setdefault(name, "")

    def __delitem__(self, name: str) -> None:
        del self.modules[name]
        self.loaded.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self.modules

    def __iter__(self) -> Iterator[str]:
        return iter(self.modules)

    def __len__(self) -> int:
        return len(self.modules)


def retired_variables(name: str, command: click.Command,
                      environ: Mapping[str, str] | None = None) -> list[str]:
    """Warnings for the variables of ``command``'s options as named before 0.2.0
    (``APIMCTL_FORMAT``), set but no longer read: each names the one that is."""
    environ = os.environ if environ is None else environ
    found: list[str] = []
    if name == SERVE_COMMAND:  # its variables were APIMCTL_SERVE_<NAME> already
        return found
    for param in command.params:
        if not isinstance(param, click.Option) or not isinstance(param.envvar, str):
            continue
        old = envvar(max(param.opts, key=len).lstrip("-"))
        if old != param.envvar and old in environ:
            found.append(f"Warning: {old} is not read any more; {name}'s "
                         f"{max(param.opts, key=len)} comes from {param.envvar}.")
    return found


class Group(click.Group):
    """The command group: ``apimctl`` alone prints help (exit 0), and an option given before
    the command says that options go after it."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and command is not None and not ctx.resilient_parsing:
            for warning in retired_variables(name, command):
                click.echo(warning, err=True)
        return name, command, rest

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing:  # not while completing: no command yet
            click.echo(ctx.get_help())
            ctx.exit(0)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            command = next((a for a in args if a in self.commands), "plan")
            raise click.NoSuchOption(
                exc.option_name,
                f"{exc.format_message()} Options go after the command: apimctl {command} "
                f"{exc.option_name} ... (see apimctl {command} --help)", ctx=ctx) from None
