"""Fixtures shared by the unit tests: manifests written into a scratch directory, and a fake
area (``areakit``) for the core functions of the commands.

The core functions (``apimctl.planning.command.plan``, ``apimctl.applying.command.apply``,
``apimctl.drift.drift``, ``apimctl.export.command.export``, ``apimctl.manifests.command.validate``)
take a request and a way to open the client; their tests call them directly, without click,
and check that every refusal comes before any write (and, where the input alone is wrong,
before the client is opened).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from .areakit import FakeArea


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

    for name in [n for n in os.environ if n.startswith("APIMCTL_") and n.endswith("_OVERLAY")]:
        os.environ.pop(name, None)
    return make


@pytest.fixture
def area() -> FakeArea:
    return FakeArea()


@pytest.fixture
def manifests(tmp_path: Path) -> Callable[..., str]:
    """``manifests(text, name="m.yaml")``: write a manifest file; its path."""

    def write(text: str, name: str = "m.yaml") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write
