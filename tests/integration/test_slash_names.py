r"""Names holding ``/`` or ``\`` give unambiguous keys that round-trip through plan, apply,
saved plans and export.

Service ``a/b`` with endpoint ``Same`` is ``endpoint:a\/b/Same``; service ``a`` with endpoint
``b/Same`` is ``endpoint:a/b\/Same``; a ``\`` in a name is ``\\``. Runs the real entry point
in a scratch directory against the reference server over HTTP, in each dialect (an area per
test), the names going into paths and ``filter`` parameters of either.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apimctl import kinds
from apimctl.cli import cli
from apimctl.cli.common import run_guarded

from .dialect_support import ThreadServer, served_in_thread

MANIFEST = r"""
services:
  - name: a/b
    errorSets: [{name: "e/1"}]
    endpoints:
      - name: Same
        requestPathAlias: /ab-same
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        errorSet: "e/1"
        cors: {maxAge: 60}
  - name: a
    endpoints:
      - name: b/Same
        requestPathAlias: /a-b-same
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        cors: {maxAge: 60}
      - name: 'back\slash'
        requestPathAlias: /a-backslash
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
packages:
  - name: P/Q
    plans:
      - name: Gold/1
        services:
          - {name: a/b, endpoints: [Same]}
          - {name: a, endpoints: [b/Same, 'back\slash']}
scheduledMaintenanceEvents:
  - name: m/1
    startDateTime: "2031-01-01T00:00:00Z"
    endDateTime: "2031-01-01T01:00:00Z"
    endpoints: [{service: a/b, endpoint: Same}, {service: a, endpoint: b/Same}]
domains: [example.com]
"""

KEYS = {
    "service:a\\/b", "service:a", "errorSet:a\\/b/e\\/1", "endpoint:a\\/b/Same",
    "endpoint:a/b\\/Same", "endpoint:a/back\\\\slash", "package:P\\/Q", "plan:P\\/Q/Gold\\/1",
    "maintenanceEvent:m\\/1", "domain:example.com",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[ThreadServer]:
    """One reference server per dialect for this module; each test works in an area of its own."""
    with served_in_thread(tmp_path_factory.mktemp("slash-names") / "area.db", dialect, areas=2) as srv:
        yield srv


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], served: ThreadServer):
    import os

    for name in [n for n in os.environ if n.startswith("APIMCTL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("APIMCTL_URL", served.url)
    monkeypatch.setenv("APIMCTL_TOKEN", served.fresh_token())
    monkeypatch.setenv("APIMCTL_QPS", "0")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "all.yaml").write_text(MANIFEST)

    def invoke(*args: str) -> tuple[int, str]:
        """Exit code and stdout (stderr too when the command failed)."""
        monkeypatch.setattr(sys, "argv", ["apimctl", *args])
        capsys.readouterr()
        code = run_guarded(cli)
        captured = capsys.readouterr()
        return code, captured.out if code in (0, 2) else captured.out + captured.err

    return invoke


def test_slashes_round_trip_through_plan_apply_saved_plan_and_export(run, tmp_path: Path, dialect: str) -> None:
    assert run("validate", "m")[0] == 0
    code, out = run("plan", "--format", "json", "m")
    assert code == 0, out
    assert {s["address"] for s in json.loads(out)["steps"]} == KEYS
    assert json.loads(out)["dialect"] == dialect  # detected by the client
    code, out = run("plan", "m")
    assert 'endpoint "a\\\\/b/Same"' in out and 'endpoint "a/b\\\\/Same"' in out  # JSON-quoted keys

    assert run("plan", "--out", "first.json", "m")[0] == 0
    saved = json.loads((tmp_path / "first.json").read_text())
    assert {s["address"] for s in saved["steps"]} == KEYS
    code, out = run("apply", "--auto-approve", "--plan", "first.json")
    assert code == 0, out
    code, out = run("plan", "--detailed-exitcode", "m")
    assert code == 0 and "No changes" in out, out

    # a change under one service only: the other "Same" is left alone
    (tmp_path / "m" / "all.yaml").write_text(MANIFEST.replace("cors: {maxAge: 60}\n  - name: a",
                                                              "cors: {maxAge: 90}\n  - name: a", 1))
    code, out = run("plan", "--format", "json", "m")
    steps = json.loads(out)["steps"]
    assert [(s["address"], [c["path"] for c in s["changes"]]) for s in steps] == [
        ("endpoint:a\\/b/Same", ["cors.maxAge"])]
    assert run("plan", "--out", "second.json", "m")[0] == 0
    assert run("apply", "--auto-approve", "--plan", "second.json")[0] == 0
    assert run("plan", "--detailed-exitcode", "m")[0] == 0

    code, out = run("export", "--out", "exported")
    assert code == 0, out
    code, out = run("plan", "--detailed-exitcode", "exported")
    assert code == 0 and "No changes" in out, out


def test_target_and_ignore_take_escaped_keys(run, tmp_path: Path) -> None:
    assert run("apply", "--auto-approve", "m")[0] == 0
    text = MANIFEST.replace("cors: {maxAge: 60}", "cors: {maxAge: 30}")
    (tmp_path / "m" / "all.yaml").write_text(text)
    code, out = run("plan", "--format", "json", "--target", "service:a\\/b", "m")
    assert code == 0, out
    assert [s["address"] for s in json.loads(out)["steps"]] == ["endpoint:a\\/b/Same"]
    code, out = run("plan", "--format", "json", "--target", "endpoint:a/b\\/Same", "m")
    assert [s["address"] for s in json.loads(out)["steps"]] == ["endpoint:a/b\\/Same"]
    code, out = run("plan", "--format", "json", "--ignore", "endpoint:a\\/b/*:cors.maxAge", "m")
    doc = json.loads(out)
    assert [s["address"] for s in doc["steps"]] == ["endpoint:a/b\\/Same"]
    assert doc["ignored"][0]["target"] == "endpoint:a\\/b/Same:cors.maxAge"
    code, out = run("plan", "--target", "service:a/b", "m")
    assert code == 1 and "matches no declared or live object" in out and "\\/" in out


def test_the_colliding_pair_of_the_issue_plans() -> None:
    """Service ``a/b`` + endpoint ``Same`` and service ``a`` + endpoint ``b/Same`` used to be
    refused as declared twice."""
    from apimctl.planning import build_plan
    from apimctl.state.live import LiveState

    class Doc:
        doc = {"services": [{"name": "a/b", "endpoints": [{"name": "Same"}]},
                            {"name": "a", "endpoints": [{"name": "b/Same"}]}]}
        secret_refs: dict[tuple[str | int, ...], str] = {}
        validated = False

        def where(self, path: tuple[str | int, ...]) -> None:
            return None

    plan = build_plan(Doc(), LiveState())  # type: ignore[arg-type]
    assert {s.address for s in plan.steps if s.kind == "endpoint"} == {
        "endpoint:a\\/b/Same", "endpoint:a/b\\/Same"}


names = st.text(st.sampled_from("ab/\\ :*é"), max_size=8)


@given(names, names)
def test_keys_split_back_into_their_names(parent: str, name: str) -> None:
    key = kinds.ENDPOINT.key_of(name, kinds.SERVICE.key_of(parent))
    parent_key, own = kinds.split_key(kinds.ENDPOINT, key)
    assert own == name
    assert kinds.split_key(kinds.SERVICE, parent_key or "") == (None, parent)


def test_names_without_slash_or_backslash_are_their_own_keys() -> None:
    assert kinds.ENDPOINT.key_of("Forecast", "Weather") == "Weather/Forecast"
    assert kinds.escape_name("Weather Partners") == "Weather Partners"
    assert kinds.escape_name("a/b\\c") == "a\\/b\\\\c"
    assert kinds.unescape_name("a\\/b\\\\c") == "a/b\\c"
