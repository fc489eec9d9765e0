"""``export --area``: several areas need ``--into``; one value stays the token exchange's area."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from apimctl.cli import cli


@pytest.mark.parametrize(("args", "message"), [
    (["--area", "a=x", "--area", "b=y"], "several --area values export several areas: give --into DIR"),
    (["--rewrite", "r.yaml", "--url", "http://127.0.0.1:9"], "--rewrite is for several areas"),
    (["--into", "repo", "--url", "http://127.0.0.1:9"], "give each area as --area NAME=TARGET"),
    (["--into", "repo", "--area", "=x"], "expected NAME=TARGET"),
    (["--into", "repo", "--area", "http://127.0.0.1:9"], "name an area given by URL"),
    (["--into", "repo", "--area", "a=x", "--layout", "per-service"], "--into writes base and overlays"),
])
def test_usage(tmp_path: Path, args: list[str], message: str) -> None:
    done = CliRunner().invoke(cli, ["export", *args], env={"APIMCTL_URL": "http://127.0.0.1:9"})
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert not (tmp_path / "repo").exists()
