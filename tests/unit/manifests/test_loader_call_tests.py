"""Call tests (``*.test.yaml``) beside or below the manifests are never read as manifests, and
a folder of them is not a folder of unread manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl.cli.paths import recursive, unread_warnings
from apimctl.manifests.documents import is_manifest_name
from apimctl.manifests.loader import discover
from apimctl.manifests.model import Problems


@pytest.mark.parametrize(("name", "manifest"), [
    ("weather.yaml", True), ("weather.yml", True), ("weather.test.yaml", False),
    ("weather.test.yml", False), (".hidden.yaml", False), ("test.yaml", True), ("notes.txt", False)])
def test_which_names_are_manifests(name: str, manifest: bool) -> None:
    assert is_manifest_name(name) is manifest


def test_a_folder_of_call_tests_is_neither_read_nor_warned_about(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "api.yaml").write_text("roles: [A]\n")
    (tmp_path / "m" / "beside.test.yaml").write_text("calls: []\n")
    (tmp_path / "m" / "tests").mkdir()
    (tmp_path / "m" / "tests" / "api.test.yaml").write_text("calls: []\n")
    problems = Problems()
    found = discover([str(tmp_path / "m")], problems)
    assert [Path(f.path).name for f in found] == ["api.yaml"]
    assert unread_warnings([str(tmp_path / "m")], []) == []
    assert recursive([str(tmp_path / "m")], []) == (str(tmp_path / "m"),)
