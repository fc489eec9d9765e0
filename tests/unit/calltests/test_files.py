"""The call-test schema ships beside the manifest schema, and the examples' test files are
valid against it and never read as manifests."""

from __future__ import annotations

from pathlib import Path

from apimctl.calltests.model import load
from apimctl.manifests import validate_paths

ROOT = Path(__file__).resolve().parents[3]


def test_the_packaged_schema_is_the_published_one() -> None:
    packaged = ROOT / "src" / "apimctl" / "schemas" / "calltests.schema.json"
    assert packaged.read_bytes() == (ROOT / "schemas" / "calltests.schema.json").read_bytes()


def test_the_examples_test_files_are_valid_and_not_manifests() -> None:
    folders = sorted({p.parent for p in (ROOT / "examples").rglob("tests/*.test.yaml")})
    assert len(folders) == 5, "the examples have call tests"
    loaded = load([str(f) for f in folders])
    assert loaded.problems == []
    assert len(loaded.files) == len(folders)
    for folder in folders:
        env = {"FORECAST_BACKEND_SECRET": "x", "PAYMENTS_BACKEND_KEY_SECRET": "x"}
        problems = validate_paths([str(folder.parent)], env=env)
        assert [p for p in problems if p.severity == "error"] == [], folder


def test_times_stay_strings_and_places_are_exact(tmp_path: Path) -> None:
    path = tmp_path / "t.test.yaml"
    path.write_text("calls:\n  - name: a\n    url: http://h.example.com/\n    at: 2030-01-07T09:00:00Z\n"
                    "    expect: {status: 200}\n")
    loaded = load([str(path)])
    assert loaded.problems == []
    assert loaded.files[0].doc["calls"][0]["at"] == "2030-01-07T09:00:00Z"
    assert str(loaded.files[0].position("calls", 0, "expect", "status")) == f"{path}:5:22"
