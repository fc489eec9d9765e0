"""Each command's module is imported when the command runs: a command does not pay for the
start-up of the others (``apimctl validate`` imports neither planning nor the server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from apimctl.cli import cli
from apimctl.cli.group import LazyCommands

HEAVY = ("apimctl.planning.build", "apimctl.applying", "apimctl.export", "apimctl.lint.run",
         "apimctl.server.app", "httpx", "starlette")


def test_every_listed_command_is_the_command_of_its_name() -> None:
    assert isinstance(cli.commands, LazyCommands)
    names = list(cli.commands)
    assert names == ["validate", "lint", "render", "plan", "apply", "drift", "export", "serve",
                     "schema", "unlock", "completion", "call", "test", "show", "doctor", "init", "consumer",
                     "matrix", "diff", "promote", "runs", "rollback", "import"]
    for name in names:
        command = cli.commands[name]
        assert isinstance(command, click.Command) and command.name == name
        assert all(p.envvar for p in command.params if isinstance(p, click.Option) and p.expose_value)


def test_an_unknown_name_is_not_a_command() -> None:
    assert "nonesuch" not in cli.commands
    assert cli.commands.get("nonesuch") is None
    assert cli.get_command(click.Context(cli), "nonesuch") is None


def _modules_after(args: list[str], cwd: Path) -> tuple[int, set[str]]:
    code = ("import json, sys\nfrom apimctl.cli import cli\n"
            "try:\n    cli.main(sys.argv[1:], standalone_mode=False)\nexcept (SystemExit, Exception):\n    pass\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, check=True)
    return done.returncode, set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["validate", "m.yaml"], ["schema"], ["--version"], ["matrix"]])
def test_light_commands_import_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "m.yaml").write_text("roles: [Reader]\n")
    _, modules = _modules_after(args, tmp_path)
    assert [m for m in HEAVY if m in modules] == []


def test_help_lists_every_command(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "apimctl", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=True)
    for name in cli.commands:
        assert f"\n  {name} " in done.stdout


def test_plan_loads_neither_the_rule_engine_nor_jsonschema(tmp_path: Path) -> None:
    """Without ``--lint`` and without a problem to explain, ``plan`` never needs them."""
    (tmp_path / "m.yaml").write_text("roles: [Reader]\n")
    _, modules = _modules_after(["plan", "m.yaml", "--url", "http://127.0.0.1:9/v3/rest",
                                 "--token", "t0k3n", "--retries", "0"], tmp_path)
    assert "apimctl.planning.build" in modules  # it did plan (and failed to connect)
    assert [m for m in ("apimctl.lint.run", "apimctl.lint.definitions", "jsonschema",
                        "jsonpath_rfc9535") if m in modules] == []
