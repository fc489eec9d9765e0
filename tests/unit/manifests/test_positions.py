"""Positions read on demand: the reader records each item and the mappings of its lists (the
objects ``plan`` locates) and reads the file again for the rest, so a problem deep in an object
is located exactly as if every position had been recorded, and locating objects reads no file
twice. A duplicate key inside an item (whose message names the first one's line) makes the
reader start over with every position."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings

from apimctl.kinds.references.checks import objects
from apimctl.manifests import load_manifests, validate_paths, yaml_events
from apimctl.manifests.documents import Document
from apimctl.manifests.model import JsonPath, Position, Problems

from .test_pipeline_properties import manifests

ANCHORED = """\
domains: [example.com]
services:
  - name: A
    endpoints:
      - &ep
        name: One
        requestPathAlias: /one
        trafficManagerDomain: api.example.com
        cors: {maxAge: 60, domainsAllowed: ["https://x"]}
      - <<: *ep
        name: Two
        requestPathAlias: /two
      - *ep
    errorSets: [{name: E, errorMessages: [{id: ERR_400_BAD_REQUEST, status: x}]}]
  - name: B
    description: "${DESC:-a}"
"""


def tables(text: str, every: bool) -> dict[tuple[str, int], dict[JsonPath, Position]]:
    reader = yaml_events.EventReader("m.yaml", text, {}, Problems(), every_position=every)
    try:
        docs: list[Document] = reader.documents()
    finally:
        reader.dispose()
    return {(item.kind, item.index): dict(item.positions.items())
            for doc in docs for items in doc.items.values() for item in items}


def test_completed_tables_are_the_full_tables() -> None:
    assert tables(ANCHORED, every=False) == tables(ANCHORED, every=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=manifests())
def test_completed_tables_are_the_full_tables_for_any_manifest(doc: dict[str, Any]) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    assert tables(text, every=False) == tables(text, every=True)


def test_locating_every_object_reads_no_file_again(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "m.yaml").write_text(ANCHORED.replace(" - *ep\n", " - {name: Three, requestPathAlias: /3, "
                                                                   "trafficManagerDomain: api.example.com}\n"))
    manifest = load_manifests([str(tmp_path)], env={})
    reread: list[str] = []
    original = yaml_events.Reread.positions

    def counted(self: yaml_events.Reread, kind: str, index: int) -> dict[JsonPath, Position]:
        reread.append(kind)
        return original(self, kind, index)

    monkeypatch.setattr(yaml_events.Reread, "positions", counted)
    file = str(tmp_path / "m.yaml")
    where = {obj.path: manifest.where(obj.path) for obj in objects(manifest.doc)}
    assert reread == [] and None not in where.values()
    assert where[("services", 0, "endpoints", 1)] == Position(file, 10, 9)
    assert where[("services", 0, "errorSets", 0)] == Position(file, 14, 17)
    assert manifest.where(("services", 0, "endpoints", 1, "cors", "maxAge")) == Position(
        file, 9, 16)  # merged from the anchor: where the anchor wrote it
    assert reread == ["services"]


def test_positions_are_read_again_from_the_file_not_kept(tmp_path: Path) -> None:
    """The text is not kept after loading: a later lookup reads the file again, and a file
    changed since gives no position rather than a wrong one."""
    path, text = tmp_path / "m.yaml", ANCHORED.replace(" - *ep\n", " - {name: Three, requestPathAlias: /3, "
                                                                  "trafficManagerDomain: api.example.com}\n")
    path.write_text(text)
    deep = ("services", 0, "endpoints", 0, "cors", "maxAge")
    assert load_manifests([str(tmp_path)], env={}).where(deep) == Position(str(path), 9, 16)
    manifest = load_manifests([str(tmp_path)], env={})
    path.write_text("# edited since\n" + text)
    assert manifest.where(deep) == Position(str(path), 5, 9)  # the nearest recorded: the endpoint
    assert manifest.where(("services", 0)) == Position(str(path), 3, 5)  # recorded: still known


def test_a_problem_deep_in_an_object_is_located_exactly() -> None:
    text = ANCHORED.replace("maxAge: 60", "maxAge: sixty")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.yaml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        problems = [str(p) for p in validate_paths([path], env={})]
    where = f"{path}:9:16"
    assert [p for p in problems if "maxAge" in p] == [
        f"{where}: services[0].endpoints[0].cors.maxAge: must be integer",
        f"{where}: services[0].endpoints[1].cors.maxAge: must be integer",
        f"{where}: services[0].endpoints[2].cors.maxAge: must be integer"]


def test_a_duplicate_key_in_an_object_names_the_first_line() -> None:
    text = ANCHORED.replace("        requestPathAlias: /one\n", "        requestPathAlias: /one\n"
                                                                 "        requestPathAlias: /uno\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.yaml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        problems = [str(p) for p in validate_paths([path], env={}) if "duplicate key" in p.message]
    assert problems == [f"{path}:8:9: services[0].endpoints[0].requestPathAlias: "
                        "duplicate key 'requestPathAlias' (first written at line 7)"]
