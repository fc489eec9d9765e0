"""Every option of every command has its environment variable, named by the rule, and
setting the variable has the option's effect (checked by parsing, for every option)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from apimctl.cli import cli
from apimctl.cli.common import Lines, Number

REQUIRED_ARGS = {"completion": ["bash"], "call": ["GET", "https://api.example.com/"]}


def options() -> list[tuple[str, click.Option]]:
    return [(name, param) for name, command in sorted(cli.commands.items())
            for param in command.params if isinstance(param, click.Option)]


def expected(command: str, param: click.Option) -> str:
    long = max(param.opts, key=len).lstrip("-").upper().replace("-", "_")
    return f"APIMCTL_SERVE_{long}" if command == "serve" else f"APIMCTL_{long}"


def sample(param: click.Option, tmp_path: Path) -> tuple[str, Any]:
    """A value for the variable and what the option then holds."""
    kind = param.type
    if param.is_flag:
        return "1", True
    if isinstance(kind, click.Choice):
        choice = str(kind.choices[-1])
        return choice, choice
    if isinstance(kind, click.Path):
        folder = tmp_path / "folder"
        folder.mkdir(exist_ok=True)
        file = tmp_path / "file.yaml"
        file.write_text("{}\n")
        value = str(folder if kind.dir_okay and not kind.file_okay else file)
        return value, value
    if isinstance(kind, click.IntRange | click.types.IntParamType):
        return "3", 3
    if isinstance(kind, Number | click.FloatRange | click.types.FloatParamType):
        return "0.5", 0.5
    return "x y", "x y"


@pytest.mark.parametrize(("command", "param"), options(),
                         ids=[f"{c}-{p.name}" for c, p in options()])
def test_every_option_has_its_variable(command: str, param: click.Option, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert param.envvar == expected(command, param)
    assert param.show_envvar
    raw, value = sample(param, tmp_path)
    monkeypatch.setenv(expected(command, param), raw)
    ctx = cli.commands[command].make_context(command, list(REQUIRED_ARGS.get(command, [])),
                                             parent=click.Context(cli))
    got = ctx.params[param.name or ""]
    assert (got == (value,) if param.multiple else got == value), (param.name, got)


def test_repeatable_text_options_take_one_value_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIMCTL_TARGET", "plan:Weather Partners/Gold\nservice:Weather\n")
    monkeypatch.setenv("APIMCTL_DETAILED_EXITCODE", "true")
    ctx = cli.commands["plan"].make_context("plan", [], parent=click.Context(cli))
    assert ctx.params["targets"] == ("plan:Weather Partners/Gold", "service:Weather")
    assert ctx.params["detailed_exitcode"] is True
    assert isinstance(next(p for p in cli.commands["plan"].params if p.name == "targets").type, Lines)


def test_the_command_line_wins_over_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIMCTL_FORMAT", "json")
    ctx = cli.commands["plan"].make_context("plan", ["--format", "markdown"], parent=click.Context(cli))
    assert ctx.params["fmt"] == "markdown"
