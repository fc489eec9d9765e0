"""Large manifests read by both processes (``apimctl.manifests.pipeline``: the worker takes
runs of the last files until it meets this process): wherever they meet, and whatever the
worker fails to answer, the result is the one read here alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl import workers
from apimctl.manifests import pipeline, validate
from apimctl.manifests.pipeline import ValidationResult


def _files(root: Path, count: int, broken: bool) -> Path:
    for n in range(count):
        endpoints = "".join(
            f"      - {{name: e{k}, requestPathAlias: /s{n}/e{k}, trafficManagerDomain: api.example.com,"
            f" publicDomains: [api.example.com]{', cors: {maxAge: x}' if broken and n == 7 and k == 1 else ''}}}\n"
            for k in range(3))
        (root / f"svc-{n:03d}.yaml").write_text(
            f"services:\n  - name: s{n}\n    description: ${{DESC_{n % 3}}}\n    endpoints:\n{endpoints}")
    if broken:
        (root / "broken.yaml").write_text("services: [\n")
    return root


def _seen(result: ValidationResult) -> tuple[object, ...]:
    manifest = result.manifest
    return (tuple(str(p) for p in result.problems), result.files, result.objects,
            None if manifest is None else (manifest.doc, dict(manifest.positions)))


ENV = {"DESC_0": "zero", "DESC_1": "one", "DESC_2": "two"}


@pytest.fixture(params=[False, True], ids=["valid", "with problems"])
def area(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return _files(tmp_path, 40, request.param)


def _alone(area: Path, monkeypatch: pytest.MonkeyPatch) -> ValidationResult:
    with monkeypatch.context() as patch:
        patch.setenv(workers.ENV, "0")
        return validate([str(area)], env=ENV)


@pytest.mark.parametrize("runs", [1, 3, 40])
def test_read_from_both_ends_is_read_here(area: Path, runs: int, worker_answers: list[object],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _alone(area, monkeypatch)
    assert (expected.manifest is None) is (area / "broken.yaml").exists()
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(pipeline, "RUNS", runs)
    assert _seen(validate([str(area)], env=ENV)) == _seen(expected)  # wherever they met
    monkeypatch.setattr(workers.FromBothEnds, "patient", True)
    assert _seen(validate([str(area)], env=ENV)) == _seen(expected)  # every run sent, taken
    assert worker_answers and None not in worker_answers


def test_runs_the_worker_did_not_answer_are_read_here(area: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _alone(area, monkeypatch)
    monkeypatch.delenv(workers.ENV, raising=False)
    monkeypatch.setattr(workers, "_unavailable", False)
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(workers.FromBothEnds, "patient", True)
    monkeypatch.setattr(workers, "result", lambda future: None)  # every answer lost
    assert _seen(validate([str(area)], env=ENV)) == _seen(expected)
