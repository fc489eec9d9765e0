"""Edited manifests are written all or none: a file changed since it was read stops the write
of every file, and a written file is swapped whole for its new text."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl.errors import ApimctlError
from apimctl.manifests.edits import Edit, write_edits


def test_a_file_changed_since_it_was_read_stops_every_write(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("a: 1\n")
    second.write_text("b: 1\n")
    edits = [Edit(first, first.read_bytes(), "a: 2\n"), Edit(second, second.read_bytes(), "b: 2\n")]
    second.write_text("b: 1  # edited meanwhile\n")
    with pytest.raises(ApimctlError, match=r"b\.yaml was edited since drift --adopt read it: nothing written"):
        write_edits(edits, "drift --adopt")
    assert first.read_text() == "a: 1\n" and sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


def test_only_the_files_that_change_are_written(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("a: 1\n")
    second.write_text("b: 1\n")
    edits = [Edit(first, first.read_bytes(), "a: 2\n"), Edit(second, second.read_bytes(), "b: 1\n")]
    assert write_edits(edits, "drift --adopt") == [str(first)]
    assert first.read_text() == "a: 2\n" and not list(tmp_path.glob(".*partial"))
