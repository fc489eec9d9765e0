"""Helpers for the manifest tests: write a set of files into a fresh directory and run there."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Mapping[str, str | bytes]], Path]:
    """``workdir(files)`` writes ``files`` into an empty directory and makes it the current one."""

    def make(files: Mapping[str, str | bytes]) -> Path:
        write_files(tmp_path, files)
        monkeypatch.chdir(tmp_path)
        return tmp_path

    os.environ.pop("APIMCTL_OVERLAY", None)
    return make
