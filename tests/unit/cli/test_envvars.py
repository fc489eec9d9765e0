"""Every option of every command has its environment variable, named by the rule, and
setting the variable has the option's effect (checked by parsing, for every option).

The rule: a connection setting is ``APIMCTL_<NAME>`` for every command (``APIMCTL_URL``); any
other option is ``APIMCTL_<COMMAND>_<NAME>`` (``APIMCTL_PLAN_FORMAT``), so one variable never
means two things; ``serve``'s options are all ``APIMCTL_SERVE_<NAME>``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from apimctl.cli import cli
from apimctl.cli.common import Lines, Number
from apimctl.cli.group import CONNECTION_SETTINGS

REQUIRED_ARGS = {"completion": ["bash"], "call": ["GET", "https://api.example.com/"], "show": ["plan.json"],
                 "consumer": ["alice"], "diff": ["dev", "prod"], "rollback": ["0123abcd"]}


def options() -> list[tuple[str, click.Option]]:
    return [(name, param) for name, command in sorted(cli.commands.items())
            for param in command.params if isinstance(param, click.Option)]


def expected(command: str, param: click.Option) -> str:
    long = max(param.opts, key=len).lstrip("-").upper().replace("-", "_")
    connects = any(p.name == "parallelism" for p in cli.commands[command].params)
    if command != "serve" and connects and long.lower() in CONNECTION_SETTINGS:
        return f"APIMCTL_{long}"
    return f"APIMCTL_{command.upper()}_{long}"


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
        least = getattr(kind, "min", None)
        number = max(3, least if isinstance(least, int) else 3)  # within the option's range
        return str(number), number
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
    monkeypatch.setenv("APIMCTL_PLAN_TARGET", "plan:Weather Partners/Gold\nservice:Weather\n")
    monkeypatch.setenv("APIMCTL_PLAN_DETAILED_EXITCODE", "true")
    ctx = cli.commands["plan"].make_context("plan", [], parent=click.Context(cli))
    assert ctx.params["targets"] == ("plan:Weather Partners/Gold", "service:Weather")
    assert ctx.params["detailed_exitcode"] is True
    assert isinstance(next(p for p in cli.commands["plan"].params if p.name == "targets").type, Lines)


def test_the_command_line_wins_over_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIMCTL_PLAN_FORMAT", "json")
    ctx = cli.commands["plan"].make_context("plan", ["--format", "markdown"], parent=click.Context(cli))
    assert ctx.params["fmt"] == "markdown"


def test_no_variable_means_two_things() -> None:
    """Two options share a variable only when both are the same connection setting."""
    seen: dict[str, tuple[str, click.Option]] = {}
    for command, param in options():
        variable = str(param.envvar)
        if variable in seen:
            other_command, other = seen[variable]
            assert param.name == other.name and param.name in CONNECTION_SETTINGS, (
                variable, command, other_command)
            # the same words (export's repeatable --area says them after what it adds)
            helps = sorted(((param.help or "").lower().rstrip("."), (other.help or "").lower().rstrip(".")), key=len)
            assert helps[0] in helps[1], (variable, command, other_command)
        seen[variable] = (command, param)


@pytest.mark.parametrize(("variable", "value"), [
    ("APIMCTL_PLAN_FORMAT", "markdown"), ("APIMCTL_SCHEMA_PLAN", "1"), ("APIMCTL_EXPORT_OUT", "p3.json"),
])
def test_one_commands_variable_leaves_the_others_alone(variable: str, value: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A job's ``env:`` set for one command breaks no other one (issue: APIMCTL_FORMAT=markdown
    broke apply and validate)."""
    monkeypatch.setenv(variable, value)
    for command in ("validate", "apply", "schema", "drift", "lint", "render"):
        if variable.startswith(f"APIMCTL_{command.upper()}_"):
            continue
        ctx = cli.commands[command].make_context(command, [], parent=click.Context(cli))
        assert value not in {str(v) for v in ctx.params.values()}, (command, ctx.params)


def test_help_shows_each_options_variable() -> None:
    for name in ("plan", "apply", "export"):
        command = cli.commands[name]
        text = command.get_help(click.Context(command, info_name=name, parent=click.Context(cli)))
        flat = " ".join(text.split())
        assert f"APIMCTL_{name.upper()}_" in flat and "env var: APIMCTL_URL" in flat


def test_a_variable_named_as_before_is_reported(tmp_path: Path) -> None:
    from click.testing import CliRunner

    (tmp_path / "m.yaml").write_text("services: []\n")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "m.yaml")],
                                env={"APIMCTL_FORMAT": "json", "APIMCTL_TOKEN": "x"})
    assert "APIMCTL_FORMAT is not read any more; validate's --format comes from " \
           "APIMCTL_VALIDATE_FORMAT" in result.output
    assert "APIMCTL_TOKEN" not in result.output
    assert result.exit_code == 0, result.output
