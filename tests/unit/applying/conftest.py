"""Fixtures of the core-function tests: a fake area (``areakit``) and manifests in a scratch
directory.

The core functions (``apimctl.planning.command.plan``, ``apimctl.applying.command.apply``,
``apimctl.drift.drift``, ``apimctl.export.command.export``, ``apimctl.manifests.command.validate``)
take a request and a way to open the client; these tests call them directly, without click,
and check that every refusal comes before any write (and, where the input alone is wrong,
before the client is opened).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from areakit import FakeArea

from apimctl.applying import run as run_module


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


@pytest.fixture(autouse=True)
def no_visibility_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply looks at the area a second time after a delay when a write seems invisible."""
    monkeypatch.setattr(run_module, "VISIBILITY_DELAY", 0.0)
