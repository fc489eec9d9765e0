"""Shell completion through click's protocol (what the scripts of ``apimctl completion`` ask):
``_APIMCTL_COMPLETE=bash_complete`` with ``COMP_WORDS``/``COMP_CWORD``, and the zsh and fish
equivalents, answered by the group in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.shell_completion import shell_complete

from apimctl.cli import cli

WEATHER = Path(__file__).resolve().parents[3] / "examples" / "weather"


def complete(shell: str, line: str, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The values the shell would offer for ``line`` (the cursor at its end)."""
    words = line.split(" ")
    if shell in ("bash", "zsh"):  # the words and the index of the one being completed
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(len(words) - 1))
    else:  # fish: the words before the cursor, and the incomplete one
        monkeypatch.setenv("COMP_WORDS", " ".join(words[:-1]))
        monkeypatch.setenv("COMP_CWORD", words[-1])
    capsys.readouterr()
    code = shell_complete(cli, {}, "apimctl", "_APIMCTL_COMPLETE", f"{shell}_complete")
    assert code == 0
    out = capsys.readouterr().out.strip("\n")
    if not out:
        return []
    if shell == "bash":
        return [line.partition(",")[2] for line in out.splitlines()]
    if shell == "zsh":
        lines = out.splitlines()
        return [lines[i + 1] for i in range(0, len(lines), 3)]
    return [line.partition(",")[2].partition("\t")[0] for line in out.splitlines()]


SHELLS = ["bash", "zsh", "fish"]


@pytest.mark.parametrize("shell", SHELLS)
def test_command_names(shell: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert complete(shell, "apimctl pl", monkeypatch, capsys) == ["plan"]
    every = complete(shell, "apimctl ", monkeypatch, capsys)
    assert {"validate", "plan", "apply", "drift", "export", "serve", "completion"} <= set(every)


@pytest.mark.parametrize("shell", SHELLS)
def test_options_and_their_choices(shell: str, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert complete(shell, "apimctl plan --detailed", monkeypatch, capsys) == ["--detailed-exitcode"]
    assert complete(shell, "apimctl plan --format ", monkeypatch, capsys) == ["text", "json", "markdown"]
    assert complete(shell, "apimctl apply --dialect m", monkeypatch, capsys) == ["mashery"]
    assert "github" in complete(shell, "apimctl validate --format ", monkeypatch, capsys)
    assert complete(shell, "apimctl completion f", monkeypatch, capsys) == ["fish"]


@pytest.mark.parametrize("shell", SHELLS)
def test_target_names_from_the_manifests(shell: str, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(WEATHER.parent)
    got = complete(shell, "apimctl plan weather --target ", monkeypatch, capsys)
    assert {"service:Weather", "endpoint:Weather/Forecast", "domain:example.com"} <= set(got)
    assert complete(shell, "apimctl apply weather --target endp", monkeypatch, capsys) == [
        "endpoint:Weather/Forecast"]
    assert complete(shell, "apimctl drift weather --target nothing", monkeypatch, capsys) == []


def test_target_kinds_when_no_object_matches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # no manifests here
    assert complete("bash", "apimctl plan --target serv", monkeypatch, capsys) == ["service:"]


def test_ignore_completes_fields_after_the_object(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(WEATHER.parent)
    got = complete("bash", "apimctl plan weather --ignore endpoint:Weather/Forecast:co", monkeypatch, capsys)
    assert "endpoint:Weather/Forecast:cors" in got
    assert all(g.startswith("endpoint:Weather/Forecast:co") for g in got)


def test_manifests_are_found_in_the_default_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "apimctl").mkdir()
    (tmp_path / "apimctl" / "a.yaml").write_text("roles:\n  - name: Ops\n")
    (tmp_path / "apimctl" / "broken.yaml").write_text("services: [\n")
    monkeypatch.chdir(tmp_path)
    assert complete("bash", "apimctl plan --target ro", monkeypatch, capsys) == ["role:Ops"]


def test_export_kinds(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert complete("bash", "apimctl export --kinds services,pa", monkeypatch, capsys) == [
        "services,packages"]
