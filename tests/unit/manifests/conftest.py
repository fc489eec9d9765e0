"""Fixtures of the manifest tests."""

from __future__ import annotations

import pytest

from apimctl.manifests import pipeline


@pytest.fixture
def in_the_worker(worker_answers: list[object], monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every file read in the worker process, however small (``apimctl.workers``); the list
    of the worker's answers."""
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(pipeline, "_split", lambda sizes: 0)
    return worker_answers
