"""The base and overlays of several areas: base plus an area's overlay, read by the manifest
pipeline, is that area's configuration again (property), and what goes where."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.areas import repository
from apimctl.areas.split import split
from apimctl.manifests import load_manifests


def _endpoint(name: str, path: str, target: str) -> dict[str, Any]:
    return {"name": name, "requestPathAlias": path, "trafficManagerDomain": "api.example.com",
            "publicDomains": ["api.example.com"], "systemDomains": ["backend.example.com"],
            "outboundRequestTargetPath": target}


@st.composite
def fleets(draw: st.DrawFn) -> dict[str, dict[str, list[Any]]]:
    count = draw(st.integers(1, 4))
    out = {}
    for a in range(count):
        services = []
        for s in draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True)):
            endpoints = [_endpoint(f"E{e}", f"/s{s}/e{e}", draw(st.sampled_from(["/a", "/b"])))
                         for e in draw(st.lists(st.integers(0, 2), max_size=3, unique=True))]
            service: dict[str, Any] = {"name": f"S{s}", "endpoints": endpoints}
            qps = draw(st.sampled_from([None, 5, 7]))
            if qps is not None:
                service["qpsLimitOverall"] = qps
            services.append(service)
        out[f"a{a}"] = {"domains": ["example.com"], "services": services}
    return out


def _load(folder: Path, overlay: Path | None = None) -> dict[str, Any]:
    """The services by name, their endpoints by name (an overlay appends what it adds: the
    order of a keyed list is not the configuration)."""
    doc = load_manifests([str(folder)], [str(overlay)] if overlay else [], env={}).doc
    return {s["name"]: {**s, "endpoints": {e["name"]: e for e in s.get("endpoints", [])}} for s in doc["services"]}


@settings(max_examples=25, deadline=None)  # shapes of one to four small areas: 25 reach them
@given(areas=fleets())
def test_base_plus_overlay_is_the_area(areas: dict[str, dict[str, list[Any]]]) -> None:
    parts = split(areas)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for planned in repository.files(parts.base, parts.overlays, {}, (), {}):
            (root / planned.path).parent.mkdir(parents=True, exist_ok=True)
            (root / planned.path).write_text(planned.text)
        for name, docs in areas.items():
            (root / "direct" / name).mkdir(parents=True)
            for planned in repository.files(docs, {}, {}, (), {}):
                (root / "direct" / name / "apimctl.yaml").write_text(planned.text)
            if not parts.base.get("services"):
                continue  # an empty base is no configuration of its own
            merged = _load(root / "base", root / "overlays" / name)
            assert merged == _load(root / "direct" / name)


def test_the_majority_goes_to_the_base() -> None:
    areas = {name: {"services": [{"name": "S", "qpsLimitOverall": qps, "endpoints": [
        _endpoint("E", "/e", "/a"), *([_endpoint("Only", "/o", "/a")] if name == "c" else [])]}]}
        for name, qps in (("a", 5), ("b", 7), ("c", 7))}
    areas["b"]["services"].append({"name": "Gone", "endpoints": []})
    areas["c"]["services"].append({"name": "Gone", "endpoints": []})
    parts = split(areas)
    assert parts.base["services"][0]["qpsLimitOverall"] == 7
    assert [s["name"] for s in parts.base["services"]] == ["S", "Gone"]
    assert parts.overlays["a"]["services"] == [{"name": "S", "qpsLimitOverall": 5},
                                               {"name": "Gone", "$patch": "delete"}]
    assert parts.overlays["b"] == {}
    assert parts.overlays["c"]["services"][0]["endpoints"][0]["$patch"] == "add"
