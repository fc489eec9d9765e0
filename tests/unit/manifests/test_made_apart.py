"""``load_manifests(apart=...)``: the worker process that reads a part of large manifests
makes something of their objects while they are checked here (those it read, then those
read here); the manifest gives the answers by the objects' place in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl import workers
from apimctl.manifests import load_manifests, pipeline
from apimctl.manifests.documents import Item
from apimctl.planning.verdicts import AHEAD_KINDS, made_of_items

FILES = {
    "a.yaml": "roles: [Reader]\nservices:\n  - {name: A, endpoints: [{name: E, requestPathAlias: /e, trafficManagerDomain: api.example.com}]}\n",
    "b.yaml": "services:\n  - {name: B}\n  - {name: C, endpoints: [{name: F, requestPathAlias: /f, trafficManagerDomain: api.example.com}]}\n",
}
APART = (made_of_items, ("spec",), AHEAD_KINDS)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.fixture
def split(in_the_worker: list[object], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "_split", lambda sizes: 1)  # b.yaml read in the worker


def test_the_worker_answers_for_every_object_of_the_kinds_asked(folder: Path, split: None) -> None:
    manifest = load_manifests([str(folder)], apart=APART)
    made = manifest.made_apart()
    assert sorted(made) == [("services", 0), ("services", 1), ("services", 2)]  # A here; B, C there
    items = manifest.positions.by_kind["services"]  # type: ignore[attr-defined]
    assert [(i.file.rpartition("/")[2], i.index) for i in items] == [("a.yaml", 0), ("b.yaml", 0), ("b.yaml", 1)]
    here = made_of_items([(i.file, i.kind, i.index, i.value) for i in items], "spec")
    assert [made[("services", n)] for n in range(3)] == [here[(i.file, i.kind, i.index)] for i in items]
    assert sorted(made[("services", 2)][1]) == ["", "endpoints"]  # C itself, and its endpoint
    assert manifest.made_apart() == {}  # given once


def test_nothing_is_made_apart_without_a_worker_or_with_overlays(
        folder: Path, split: None, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    overlay = tmp_path_factory.mktemp("overlay")
    (overlay / "o.yaml").write_text("services:\n  - {name: B, description: overlaid}\n")
    assert load_manifests([str(folder)], [str(overlay)], apart=APART).made_apart() == {}
    assert load_manifests([str(folder)]).made_apart() == {}  # not asked
    monkeypatch.setenv(workers.ENV, "0")
    assert load_manifests([str(folder)], apart=APART).made_apart() == {}


def test_objects_not_told_apart_are_not_answered_for() -> None:
    later = pipeline._Later(APART)
    twins = [Item("services", "b.yaml", 0, {"name": "B"}), Item("services", "b.yaml", 0, {"name": "C"})]
    later.ask(twins)
    assert later.tickets and later.items == twins
    assert later.answers({"services": twins}) is None  # one (file, kind, index) for two objects
