"""The terminal and CI experience: the CI guard on the embedded default, colours (in a real
pseudo-terminal), saved plans' targets, ignore typos, profiles, render, completion,
--version, and the friction of errors (options before the command, a wrong API base)."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .apply_support import TOKEN, Completed, readable, run_in_process, server

ROOT = Path(__file__).parents[2]
WEATHER = ROOT / "examples" / "weather"
ENVIRONMENTS = ROOT / "examples" / "environments"
# SGR sequences that set a foreground or background colour (bold or reverse are not colour)
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def has_color(text: str) -> bool:
    for params in _SGR.findall(text):
        codes = [int(p) for p in params.split(";") if p.isdigit()]
        if any(30 <= c <= 49 or 90 <= c <= 107 for c in codes):
            return True
    return False


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("APIMCTL_") and k not in ("CI", "NO_COLOR", "TERM")}
    env.update(extra)
    return env


def run(cwd: Path, *args: str, **env: str) -> Completed:
    """``apimctl ARGS`` through the real entry point, in ``cwd``."""
    here = Path.cwd()
    os.chdir(cwd)
    try:
        return run_in_process(list(args), clean_env(**env))
    finally:
        os.chdir(here)


def run_in_pty(cwd: Path, *args: str, **env: str) -> str:
    """``apimctl ARGS`` as a subprocess whose stdin, stdout and stderr are a terminal."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "apimctl", *args], cwd=cwd, stdin=secondary,
                            stdout=secondary, stderr=secondary,
                            env=clean_env(COLUMNS="120", **env), close_fds=True)
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if readable(main, 0.2):
            try:
                data = os.read(main, 65536)
            except OSError:  # the other side closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(10)
    os.close(main)
    return b"".join(chunks).decode(errors="replace")


@pytest.fixture
def weather(tmp_path: Path) -> Path:
    shutil.copytree(WEATHER, tmp_path / "weather")
    return tmp_path


# --- 0. the embedded default in CI ----------------------------------------------------------


def test_empty_connection_variables_refuse_the_embedded_server(weather: Path) -> None:
    done = run(weather, "apply", "weather", "--auto-approve",
               CI="true", APIMCTL_URL="", APIMCTL_TOKEN="")
    assert done.returncode == 1, done.stderr
    assert "APIMCTL_URL, APIMCTL_TOKEN are set but empty" in done.stderr
    assert "--url embedded" in done.stderr
    assert not (weather / ".apimctl").exists()


def test_ci_refuses_the_embedded_default_unless_asked(weather: Path) -> None:
    refused = run(weather, "plan", "weather", CI="true")
    assert refused.returncode == 1
    assert "CI is set" in refused.stderr and not (weather / ".apimctl").exists()
    empty_url = run(weather, "plan", "weather", APIMCTL_URL="")
    assert empty_url.returncode == 1 and "APIMCTL_URL is set but empty" in empty_url.stderr
    asked = run(weather, "apply", "weather", "--auto-approve", "--url", "embedded", CI="true")
    assert asked.returncode == 0, asked.stderr
    assert (weather / ".apimctl" / "local.db").exists()
    assert run(weather, "plan", "weather", CI="false").returncode == 0


def test_an_empty_token_with_a_url_is_named(weather: Path) -> None:
    done = run(weather, "plan", "weather", "--url", "https://apim.example.test/v3/rest",
               APIMCTL_TOKEN="")
    assert done.returncode == 1
    assert "APIMCTL_TOKEN is set but empty" in done.stderr


# --- 2. colours --------------------------------------------------------------------------------


def test_plan_and_drift_colours_follow_no_color_and_term(weather: Path) -> None:
    coloured = run_in_pty(weather, "plan", "weather")
    assert "Plan: 7 to create" in coloured and has_color(coloured)
    for env in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        plain = run_in_pty(weather, "plan", "weather", **env)
        assert "Plan: 7 to create" in plain and not has_color(plain), env
    drift = run_in_pty(weather, "drift", "weather")
    assert has_color(drift)
    assert not has_color(run_in_pty(weather, "drift", "weather", NO_COLOR="1"))


def test_apply_progress_bar_is_plain_under_no_color(weather: Path) -> None:
    out = run_in_pty(weather, "apply", "weather", "--auto-approve", NO_COLOR="1")
    assert "Apply complete: 7 created" in out
    assert not has_color(out)


# --- 3. saved plans and their target --------------------------------------------------------


def test_a_saved_plan_applies_whatever_the_trailing_slash(weather: Path, dialect_options: tuple[str, ...]) -> None:
    with server(weather, *dialect_options) as srv:
        env = {"APIMCTL_TOKEN": TOKEN, "APIMCTL_QPS": "0"}
        made = run(weather, "plan", "weather", "--url", srv.url + "/", "--out", "plan.json", **env)
        assert made.returncode == 0, made.stderr
        assert json.loads((weather / "plan.json").read_text())["target"] == srv.url
        done = run(weather, "apply", "--plan", "plan.json", "--auto-approve", "--url", srv.url, **env)
        assert done.returncode == 0, done.stderr


def test_an_embedded_plan_is_refused_in_another_directory(weather: Path, tmp_path: Path) -> None:
    made = run(weather, "plan", "weather", "--out", "plan.json")
    assert made.returncode == 0, made.stderr
    other = tmp_path / "elsewhere"
    other.mkdir()
    done = run(other, "apply", "--plan", str(weather / "plan.json"), "--auto-approve")
    assert done.returncode == 1
    assert f"made for embedded ({weather / '.apimctl' / 'local.db'})" in done.stderr
    assert not (other / ".apimctl" / "local.db").exists() or "create" not in done.stdout
    same = run(weather, "apply", "--plan", "plan.json", "--auto-approve")
    assert same.returncode == 0, same.stderr


# --- 4. ignore entries that match nothing ----------------------------------------------------


def test_ignore_typos_are_errors(weather: Path) -> None:
    typo_object = run(weather, "plan", "weather", "--ignore", "endpoint:Weather/Forcast:cors.maxAge")
    assert typo_object.returncode == 1
    assert "--ignore endpoint:Weather/Forcast:cors.maxAge matches no declared or live endpoint" in typo_object.stderr
    typo_field = run(weather, "plan", "weather", "--ignore", "endpoint:Weather/Forecast:corz.maxAge")
    assert typo_field.returncode == 1 and "has no field 'corz'" in typo_field.stderr
    fine = run(weather, "plan", "weather", "--ignore", "endpoint:Weather/*:cors.maxAge")
    assert fine.returncode == 0, fine.stderr
    manifest = weather / "weather" / "weather.yaml"
    manifest.write_text(manifest.read_text() + "settings:\n  ignore:\n"
                        "    - {target: 'plan:Weather Partners/Glod:rateLimitCeiling', reason: typo}\n")
    settings = run(weather, "plan", "weather")
    assert settings.returncode == 1
    assert "settings.ignore plan:Weather Partners/Glod:rateLimitCeiling matches no" in settings.stderr


# --- friction ----------------------------------------------------------------------------------


def test_options_before_the_command_get_a_hint(weather: Path) -> None:
    done = run(weather, "--url", "https://h/v3/rest", "plan", "weather")
    assert done.returncode == 1
    assert "No such option" in done.stderr
    assert "Options go after the command: apimctl plan --url" in done.stderr


def test_plain_apimctl_prints_help_and_succeeds(tmp_path: Path) -> None:
    done = run(tmp_path)
    assert done.returncode == 0
    assert "Commands:" in done.stdout and "completion" in done.stdout and "render" in done.stdout


def test_version_names_dialects_and_formats(tmp_path: Path) -> None:
    done = run(tmp_path, "--version")
    assert done.returncode == 0
    assert "dialects: spec, mashery" in done.stdout
    assert "markdown" in done.stdout and "sarif" in done.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(tmp_path: Path, shell: str) -> None:
    done = run(tmp_path, "completion", shell)
    assert done.returncode == 0, done.stderr
    assert "_APIMCTL_COMPLETE" in done.stdout
    assert f"{shell}_complete" in done.stdout or f"{shell}_source" in done.stdout or "complete" in done.stdout


def test_help_shows_variables_metavars_and_the_qps_note(tmp_path: Path) -> None:
    done = run(tmp_path, "plan", "--help")
    text = " ".join(done.stdout.split())
    assert "--max-deletes N" in text and "INTEGER RANGE" not in text
    assert "Off against the embedded server unless given" in text
    assert "env var: APIMCTL_PLAN_DETAILED_EXITCODE" in text


def test_detailed_exitcode_from_its_variable(weather: Path) -> None:
    done = run(weather, "plan", "weather", APIMCTL_PLAN_DETAILED_EXITCODE="1")
    assert done.returncode == 2, done.stderr


def test_a_wrong_api_base_suggests_v3_rest(weather: Path, dialect_options: tuple[str, ...]) -> None:
    with server(weather, *dialect_options) as srv:
        done = run(weather, "plan", "weather", "--url", srv.base + "/api/rest", "--token", TOKEN)
    assert done.returncode == 1
    assert "404" in done.stderr and "ends in /v3/rest" in done.stderr


def test_an_unreachable_host_is_named(weather: Path) -> None:
    done = run(weather, "plan", "weather", "--url", "http://no-such-host.invalid/v3/rest",
               "--token", "t", "--timeout", "2")
    assert done.returncode == 1
    assert "no-such-host.invalid" in done.stderr.splitlines()[-1]


def test_domains_waiting_for_approval_are_flagged(weather: Path, dialect_options: tuple[str, ...]) -> None:
    with server(weather, *dialect_options, auto_approve=False) as srv:
        env = {"APIMCTL_URL": srv.url, "APIMCTL_TOKEN": TOKEN, "APIMCTL_QPS": "0"}
        run(weather, "apply", "weather", "--auto-approve", "--target", "domain:example.com",
            "--target", "domain:example.net", **env)
        done = run(weather, "plan", "weather", **env)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "domain example.com is waiting for approval; endpoint Weather/Forecast needs it" in text


def test_an_empty_secret_variable_is_an_error(tmp_path: Path) -> None:
    done = run(tmp_path, "validate", str(ENVIRONMENTS / "base"), FORECAST_BACKEND_SECRET="",
               FORECAST_API_VERSION="4")
    assert done.returncode == 1
    assert "environment variable FORECAST_BACKEND_SECRET is set but empty" in done.stdout
    assert "forecast.yaml:32:" in done.stdout


# --- profiles ----------------------------------------------------------------------------------


def test_profiles_from_the_repository_file(weather: Path, tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    with server(weather, *dialect_options) as srv:
        (weather / "apimctl.toml").write_text(
            '[default]\nprofile = "local"\n\n[profiles.local]\nurl = "embedded"\n\n'
            f'[profiles.ci]\nurl = "{srv.url}"\ntoken = "${{PROD_TOKEN}}"\nqps = 0\n'
            '\n[profiles.leaky]\nurl = "https://h/v3/rest"\ntoken = "literal"\n')
        by_profile = run(weather, "apply", "weather", "--auto-approve", "--profile", "ci",
                         PROD_TOKEN=TOKEN)
        assert by_profile.returncode == 0, by_profile.stderr
        assert "embedded" not in by_profile.stderr and srv.writes() > 0
        missing = run(weather, "plan", "weather", APIMCTL_PROFILE="ci")
        assert missing.returncode == 1 and "PROD_TOKEN is not set" in missing.stderr
    by_default = run(weather, "plan", "weather", CI="true")  # the default profile: url = embedded
    assert by_default.returncode == 0, by_default.stderr
    leaky = run(weather, "plan", "weather", "--profile", "leaky")
    assert leaky.returncode == 1 and "never a literal secret" in leaky.stderr
    unknown = run(weather, "plan", "weather", "--profile", "nope")
    assert unknown.returncode == 1 and "profile 'nope' is not defined" in unknown.stderr


# --- render ------------------------------------------------------------------------------------


def test_render_shows_the_overlay_and_masks_secrets(tmp_path: Path) -> None:
    env = {"FORECAST_BACKEND_SECRET": "s3cr3t-value-91", "FORECAST_API_VERSION": "4"}
    done = run(tmp_path, "render", str(ENVIRONMENTS / "base"), "--overlay",
               str(ENVIRONMENTS / "overlays" / "production"), **env)
    assert done.returncode == 0, done.stderr
    assert "s3cr3t-value-91" not in done.stdout
    assert "systemDomainCredentialSecret: ${FORECAST_BACKEND_SECRET}" in done.stdout
    assert "prod.weather-backend.example.net" in done.stdout
    unset = run(tmp_path, "render", str(ENVIRONMENTS / "base"), "--format", "json")
    assert unset.returncode == 1
    mocked = run(tmp_path, "render", str(ENVIRONMENTS / "base"), "--mock-env", "--format", "json")
    assert mocked.returncode == 0, mocked.stderr
    assert json.loads(mocked.stdout)["services"][0]["name"]
    assert "FORECAST_BACKEND_SECRET" in mocked.stderr
