"""Fixtures of the apply tests (the fake area and the manifests fixture are in
``tests/unit/conftest.py``)."""

from __future__ import annotations

import pytest

from apimctl.applying import run as run_module


@pytest.fixture(autouse=True)
def no_visibility_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply looks at the area a second time after a delay when a write seems invisible."""
    monkeypatch.setattr(run_module, "VISIBILITY_DELAY", 0.0)
