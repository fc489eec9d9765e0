"""The golden-file helper of the renderer tests.

Run with ``--update-goldens`` (or ``APIMCTL_UPDATE_GOLDENS=1``) to rewrite the files under ``golden/`` from the current
output (then review the diff).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """``golden(name, actual)``: compare with ``golden/<name>`` (or rewrite it when asked)."""

    update = bool(request.config.getoption("--update-goldens"))
    update = update or os.environ.get("APIMCTL_UPDATE_GOLDENS") == "1"

    def check(name: str, actual: str) -> None:
        path = GOLDEN_DIR / name
        if update:
            path.write_bytes(actual.encode("utf-8"))
            return
        assert path.exists(), f"missing golden file {path}; run with --update-goldens"
        assert actual == path.read_bytes().decode("utf-8")

    return check
