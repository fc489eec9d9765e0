"""``apimctl diff SOURCE TARGET`` against ``apimctl serve`` in both dialects: two areas, an
area and manifests, two overlays of one base; text, JSON (checked against its schema) and
Markdown; ``--detailed-exitcode``; each area read in one list call per 1,000 top-level objects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from apimctl import workers

from .apply_support import Server
from .areas_support import SECRET, Fleet, area_manifest

ROOT = Path(__file__).resolve().parents[2]
RULES = """\
rewrites:
  - variable: API_HOST
    values: {dev: api-dev.example.com, prod: api.example.com, qa: api-qa.example.com}
  - variable: NAME_PREFIX
    prefix: true
    values: {dev: "DEV ", prod: "", qa: "QA "}
"""


@pytest.fixture(scope="module")
def srv(areas_server: Server) -> Server:
    return areas_server


@pytest.fixture(scope="module")
def fleet(srv: Server, tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """Two areas, seeded once per module: the tests read them; the last one (a promotion
    applied) changes prod."""
    folder = tmp_path_factory.mktemp("areas-diff")
    fleet = Fleet(folder / "home")
    dev, prod = fleet.add("dev", srv), fleet.add("prod", srv)
    fleet.seed(dev, area_manifest(folder / "seed-dev", prefix="DEV ", host="api-dev.example.com", qps=50,
                                  extra_service=True))
    fleet.seed(prod, area_manifest(folder / "seed-prod", extra_endpoint=True))
    (folder / "rules.yaml").write_text(RULES)
    return fleet


@pytest.fixture
def rules(fleet: Fleet) -> Path:
    return fleet.home.parent / "rules.yaml"


def test_two_areas_modulo_the_rules(fleet: Fleet, srv: Server, rules: Path) -> None:
    before = srv.calls()
    done = fleet.run("diff", "dev", "prod", "--rewrite", str(rules), "--format", "json",
                     "--detailed-exitcode")
    assert done.returncode == 2, done.stderr
    document = json.loads(done.stdout)
    jsonschema.validate(document, json.loads((ROOT / "schemas" / "diff.schema.json").read_text()))
    found = {(o["address"], o["status"]): [(f["path"], f.get("source"), f.get("target")) for f in o["fields"]]
             for o in document["objects"]}
    assert found == {
        ("service:${NAME_PREFIX}Payments", "different"): [("qpsLimitOverall", 50, 10)],
        ("service:${NAME_PREFIX}Reports", "source-only"): [],
        ("endpoint:${NAME_PREFIX}Payments/Beta", "target-only"): [],
        # the back-end secret's reference is named after each area's own service name: the
        # prefix rule maps it as it maps the names, so the secret is not a difference
    }
    assert document["summary"]["different"] == 1
    # each area in one list call per top-level kind (fewer than 1,000 objects each)
    reads = _list_calls(srv, before)
    assert reads == 2 * len(_top_level_paths()), reads
    assert SECRET not in done.stdout


def test_text_and_markdown_and_identical_sides(fleet: Fleet, rules: Path) -> None:
    text = fleet.run("diff", "dev", "prod")
    assert text.returncode == 0, text.stderr
    assert "  ~ service:DEV Payments" not in text.stdout  # without rules, the names differ
    assert "  - service:DEV Payments (only in dev)" in text.stdout
    assert "  + service:Payments (only in prod)" in text.stdout
    markdown = fleet.run("diff", "dev", "prod", "--rewrite", str(rules), "--format", "markdown")
    assert "| `service:${NAME_PREFIX}Payments` | `qpsLimitOverall` | 50 | 10 |" in markdown.stdout
    same = fleet.run("diff", "dev", "dev2=dev", "--detailed-exitcode")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "No differences: 14 objects identical" in same.stdout  # 3 services, 6 endpoints, ...


def test_objects_held_alike_compare_as_when_exported(fleet: Fleet, tmp_path: Path) -> None:
    """Without rules, the objects both areas hold alike (by the digests of their normal forms)
    are not exported; a rule that gives each area its own value (never met) makes ``diff``
    export and compare every object: the same document either way."""
    (tmp_path / "unmet.yaml").write_text("rewrites:\n  - variable: UNMET\n"
                                         "    values: {dev: never-met-1.invalid, prod: never-met-2.invalid}\n")
    quick = fleet.run("diff", "dev", "prod", "--format", "json")
    whole = fleet.run("diff", "dev", "prod", "--format", "json", "--rewrite", str(tmp_path / "unmet.yaml"))
    assert quick.returncode == whole.returncode == 0, quick.stderr + whole.stderr
    assert json.loads(quick.stdout) == json.loads(whole.stdout)
    assert json.loads(quick.stdout)["summary"]["identical"] > 0


def test_an_area_against_its_manifests_and_two_overlays(fleet: Fleet, tmp_path: Path, rules: Path) -> None:
    repo = tmp_path / "repo"
    (tmp_path / "two.yaml").write_text(RULES.replace(", qa: api-qa.example.com", "").replace(', qa: "QA "', ""))
    done = fleet.run("export", "--area", "dev=dev", "--area", "prod=prod", "--into", str(repo),
                     "--rewrite", str(tmp_path / "two.yaml"))
    assert done.returncode == 0, done.stderr
    env = {"DEV_PAYMENTS_FORECAST_BACKEND_SECRET": SECRET, "PAYMENTS_FORECAST_BACKEND_SECRET": SECRET}
    same = fleet.run("diff", str(repo / "base"), "dev", "--overlay", str(repo / "overlays" / "dev"),
                     "--detailed-exitcode", env=env)
    assert same.returncode == 0, same.stdout + same.stderr
    both = fleet.run("diff", str(repo / "base"), str(repo / "base"), "--source-overlay", str(repo / "overlays" / "dev"),
                     "--target-overlay", str(repo / "overlays" / "prod"), "--rewrite", str(rules),
                     "--format", "json", env=env)
    assert both.returncode == 0, both.stderr
    statuses = {o["address"]: o["status"] for o in json.loads(both.stdout)["objects"]}
    assert statuses["service:${NAME_PREFIX}Reports"] == "source-only"
    assert statuses["endpoint:${NAME_PREFIX}Payments/Beta"] == "target-only"


def test_bad_sides(fleet: Fleet) -> None:
    twice = fleet.run("diff", "dev", "dev")
    assert twice.returncode == 1 and "area 'dev' is named twice" in twice.stderr
    down = fleet.run("diff", "dev", "gone=http://127.0.0.1:9/v3/rest", "--timeout", "1")
    assert down.returncode == 1 and "area gone (http://127.0.0.1:9/v3/rest)" in down.stderr, down.stderr
    assert "Traceback" not in down.stderr


def _top_level_paths() -> list[str]:
    from apimctl import kinds

    return [k.path for k in kinds.TOP_LEVEL]


def _list_calls(srv: Server, before: dict[str, Any]) -> int:
    """GET calls of the top-level lists since ``before`` (operator snapshots)."""
    paths = {f"/v3/rest{p}" for p in _top_level_paths()}

    def count(snapshot: dict[str, Any]) -> int:
        return sum(e["count"] for e in snapshot.get("calls", []) if e["method"] == "GET" and e["path"] in paths)

    return count(srv.calls()) - count(before)


def test_a_promotion_applied_is_one_difference_fewer(fleet: Fleet, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (tmp_path / "two.yaml").write_text(RULES.replace(", qa: api-qa.example.com", "").replace(', qa: "QA "', ""))
    rules = str(tmp_path / "two.yaml")
    assert fleet.run("export", "--area", "dev=dev", "--area", "prod=prod", "--into", str(repo),
                     "--rewrite", rules).returncode == 0
    overlay = repo / "overlays" / "prod" / "overlay.yaml"
    overlay.write_text(overlay.read_text().replace("services:\n", "services:  # reviewed by the API team\n", 1))
    before = json.loads(fleet.run("diff", "dev", "prod", "--rewrite", rules, "--format", "json").stdout)
    done = fleet.run("promote", "--from", "dev", "--to", "prod", "--only", "service:${NAME_PREFIX}Reports",
                     "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    text = overlay.read_text()
    assert "# reviewed by the API team" in text and "${NAME_PREFIX}Reports" in text
    assert text.index("qpsLimitOverall") < text.index("${NAME_PREFIX}Reports")  # order kept, the new one last
    prod = fleet.areas[1]
    folders = (str(repo / "base"), "--overlay", str(repo / "overlays" / "prod"))
    from .areas_support import secrets_of

    applied = fleet.run("apply", "--auto-approve", *folders, area=prod,
                        env=secrets_of([repo / "base", repo / "overlays" / "prod"]))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    after = json.loads(fleet.run("diff", "dev", "prod", "--rewrite", rules, "--format", "json").stdout)
    assert len(after["objects"]) == len(before["objects"]) - 1
    assert "service:${NAME_PREFIX}Reports" not in {o["address"] for o in after["objects"]}
    again = fleet.run("promote", "--from", "dev", "--to", "prod", "--only", "service:${NAME_PREFIX}Reports",
                      "--repo", str(repo))
    assert again.returncode == 0 and "Nothing to promote" in again.stderr


def test_the_second_area_read_by_the_worker_gives_the_same_comparison(
        fleet: Fleet, rules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two areas are read on two cores: the target by the worker process, which sends its
    model back packed; the comparison is the one made when this process reads both."""
    monkeypatch.setattr(workers, "_unavailable", False)
    answers: list[object] = []
    awaited = workers.awaited

    async def recorded(future):  # type: ignore[no-untyped-def]
        answers.append(await awaited(future))
        return answers[-1]

    monkeypatch.setattr(workers, "awaited", recorded)
    both = fleet.run("diff", "dev", "prod", "--rewrite", str(rules), "--format", "json")
    here = fleet.run("diff", "dev", "prod", "--rewrite", str(rules), "--format", "json",
                     env={"APIMCTL_WORKERS": "0"})
    assert both.returncode == here.returncode == 0, both.stderr + here.stderr
    assert json.loads(both.stdout) == json.loads(here.stdout)
    assert answers and answers[0] is not None  # the worker read the target
    error, model, dialect = answers[0]  # type: ignore[misc]
    assert error is None and model and dialect in ("spec", "mashery")
