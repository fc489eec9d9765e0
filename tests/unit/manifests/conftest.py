"""Fixtures of the manifest tests."""

from __future__ import annotations

import pytest

from apimctl import workers
from apimctl.manifests import pipeline


@pytest.fixture
def in_the_worker(worker_answers: list[object], monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every file read in the worker process, however small (``apimctl.workers``); the list
    of the worker's answers."""
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(pipeline, "_runs", lambda sizes: [(0, len(sizes))])
    monkeypatch.setattr(workers.FromBothEnds, "patient", True)
    return worker_answers
