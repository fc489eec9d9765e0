"""Fixtures of the manifest tests."""

from __future__ import annotations

import pytest

from apimctl import workers
from apimctl.manifests import pipeline


@pytest.fixture
def in_the_worker(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every file read in the worker process, however small (``apimctl.workers``); the list
    of the worker's answers."""
    monkeypatch.delenv(workers.ENV, raising=False)
    monkeypatch.setattr(workers, "_unavailable", False)
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(pipeline, "_split", lambda sizes: 0)
    answers: list[object] = []
    result = workers.result

    def recorded(future):  # type: ignore[no-untyped-def]
        answers.append(result(future))
        return answers[-1]

    monkeypatch.setattr(workers, "result", recorded)
    return answers
