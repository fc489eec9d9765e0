"""Profiles: precedence (command line > variable > profile > default) and secrets only as
references."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from apimctl.cli import target
from apimctl.cli.common import connection_options
from apimctl.cli.profiles import ProfileError, load_profile
from apimctl.planning.build import _check_deletes
from apimctl.plans.model import Plan, Step

CONFIG = """
[default]
profile = "prod"

[profiles.prod]
url = "https://prod.example.test/v3/rest"
token = "${PROD_TOKEN}"
qps = 5
"""


def settings(cwd: Path, args: list[str], env: dict[str, str], config: str = CONFIG) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    @click.command()
    @connection_options
    def command(**_: Any) -> None:
        seen.update(target.connection_settings(click.get_current_context()))

    folder = Path(tempfile.mkdtemp(dir=cwd))  # a folder of its own for each call
    with contextlib.chdir(folder):
        Path("apimctl.toml").write_text(config)
        result = CliRunner().invoke(command, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen


def test_precedence(tmp_path: Path) -> None:
    env = {"PROD_TOKEN": "tok-1"}
    from_profile = settings(tmp_path, [], env)
    assert from_profile["url"] == "https://prod.example.test/v3/rest"
    assert from_profile["token"] == "tok-1" and from_profile["qps"] == 5.0
    assert from_profile["qps_given"] is True
    from_env = settings(tmp_path, [], {**env, "APIMCTL_URL": "https://env.example.test"})
    assert from_env["url"] == "https://env.example.test"
    from_cli = settings(tmp_path, ["--url", "https://cli.example.test"],
                        {**env, "APIMCTL_URL": "https://env.example.test"})
    assert from_cli["url"] == "https://cli.example.test" and from_cli["token"] == "tok-1"


def test_secrets_only_as_references(tmp_path: Path) -> None:
    (tmp_path / "apimctl.toml").write_text('[profiles.p]\npassword = "hunter2"\n')
    with pytest.raises(ProfileError, match="never a literal secret"):
        load_profile("p", cwd=tmp_path, environ={})
    (tmp_path / "apimctl.toml").write_text('[profiles.p]\ntoken = "${T}"\nurl = "x"\n')
    with pytest.raises(ProfileError, match="T is set but empty"):
        load_profile("p", cwd=tmp_path, environ={"T": ""})
    assert load_profile("p", cwd=tmp_path, environ={"T": "v"}) == {"token": "v", "url": "x"}
    assert load_profile(None, cwd=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path)}) == {}


def test_one_delete_is_one_object() -> None:
    plan = Plan(steps=[Step("delete", "role", "Old")])
    with pytest.raises(Exception, match="deletes 1 object, more than"):
        _check_deletes(plan, 0)


def test_dialect_from_the_profile(tmp_path: Path) -> None:
    """A profile may name the target's dialect; --dialect and APIMCTL_DIALECT still win."""
    config = CONFIG + '[profiles.real]\nurl = "https://a.example.test"\ndialect = "mashery"\n'
    env = {"PROD_TOKEN": "tok-1"}
    found = settings(tmp_path, ["--profile", "real"], env, config)
    assert (found["dialect"], found["dialect_source"]) == ("mashery", "profile")
    forced = settings(tmp_path, ["--profile", "real", "--dialect", "spec"], env, config)
    assert (forced["dialect"], forced["dialect_source"]) == ("spec", "--dialect")
    from_env = settings(tmp_path, ["--profile", "real"], {**env, "APIMCTL_DIALECT": "auto"}, config)
    assert (from_env["dialect"], from_env["dialect_source"]) == ("auto", "APIMCTL_DIALECT")
    assert settings(tmp_path, [], env, config)["dialect"] == "auto"  # the default profile names none


def test_a_profile_dialect_must_be_known(tmp_path: Path) -> None:
    (tmp_path / "apimctl.toml").write_text('[profiles.p]\ndialect = "kong"\n')
    with pytest.raises(ProfileError, match=r"\[profiles\.p\]: dialect must be one of spec, mashery, auto"):
        load_profile("p", cwd=tmp_path, environ={})
