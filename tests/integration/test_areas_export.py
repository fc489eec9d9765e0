"""``apimctl export --area NAME=TARGET ... --into DIR``: several areas into one base and one
overlay per area, against ``apimctl serve`` in both dialects and in a mix of them.

The acceptance: ``apimctl plan DIR/base --overlay DIR/overlays/NAME`` against each area
finds nothing to change; the overlays hold what differs (and only that); values that differ
by a rule are variables of the base.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .apply_support import Server, server
from .areas_support import Fleet, area_manifest

RULES = """\
rewrites:
  - variable: API_HOST
    values: {dev: api-dev.example.com, prod: api.example.com}
  - variable: BACKEND_HOST
    values: {dev: backend-dev.example.com, prod: backend.example.com}
  - variable: NAME_PREFIX
    prefix: true
    values: {dev: "DEV ", prod: ""}
"""


@pytest.fixture(scope="module")
def srv(areas_server: Server) -> Server:
    return areas_server


def _two_areas(fleet: Fleet, tmp: Path, dev_server: Server, prod_server: Server) -> None:
    dev, prod = fleet.add("dev", dev_server), fleet.add("prod", prod_server)
    fleet.seed(dev, area_manifest(tmp / "seed-dev", prefix="DEV ", host="api-dev.example.com",
                                  backend="backend-dev.example.com", qps=50, extra_service=True))
    fleet.seed(prod, area_manifest(tmp / "seed-prod", extra_endpoint=True))


def _overlay(repo: Path, name: str) -> dict[str, list[dict[str, object]]]:
    doc = yaml.safe_load((repo / "overlays" / name / "overlay.yaml").read_text())
    return doc or {}


def _acceptance(fleet: Fleet, repo: Path) -> None:
    for area in fleet.areas:
        done = fleet.plan(area, str(repo / "base"), "--overlay", str(repo / "overlays" / area.name))
        assert done.returncode == 0, (area.name, done.stdout, done.stderr)


def test_two_areas_make_one_base_and_two_overlays(srv: Server, tmp_path: Path) -> None:
    fleet = Fleet(tmp_path / "home")
    _two_areas(fleet, tmp_path, srv, srv)
    (tmp_path / "rules.yaml").write_text(RULES)
    repo = tmp_path / "repo"
    done = fleet.run("export", "--area", "dev=dev", "--area", "prod=prod", "--into", str(repo),
                     "--rewrite", str(tmp_path / "rules.yaml"))
    assert done.returncode == 0, done.stderr
    base = (repo / "base" / "apimctl.yaml").read_text()
    assert "${API_HOST}" in base and "${NAME_PREFIX}Payments" in base and "${BACKEND_HOST}" in base
    assert "api-dev.example.com" not in base and "DEV " not in base
    dev, prod = _overlay(repo, "dev"), _overlay(repo, "prod")
    # dev: a service only it has; prod: an endpoint only it has, and its own qps (a tie of two
    # areas: the base holds the first area's value)
    assert [(s["name"], s.get("$patch")) for s in dev["services"]] == [("${NAME_PREFIX}Reports", "add")]
    payments = {s["name"]: s for s in prod["services"]}["${NAME_PREFIX}Payments"]
    assert payments["qpsLimitOverall"] == 10
    assert [(e["name"], e.get("$patch")) for e in payments["endpoints"]][-1] == ("Beta", "add")
    assert "roles" not in dev and "roles" not in prod
    assert "packages" not in dev and "packages" not in prod  # the same once rewritten
    assert (repo / "overlays" / "dev" / "variables.env").read_text().splitlines()[1:] == [
        'API_HOST="api-dev.example.com"', 'BACKEND_HOST="backend-dev.example.com"', 'NAME_PREFIX="DEV "']
    _acceptance(fleet, repo)


def test_without_rules_the_differences_stay_in_the_overlays(srv: Server, tmp_path: Path, dialect: str) -> None:
    if dialect != "spec":
        pytest.skip("the rules' part, not the dialect's: once is enough")
    fleet = Fleet(tmp_path / "home")
    _two_areas(fleet, tmp_path, srv, srv)
    repo = tmp_path / "repo"
    done = fleet.run("export", "--area", "dev=dev", "--area", "prod=prod", "--into", str(repo))
    assert done.returncode == 0, done.stderr
    assert "DEV Payments" in (repo / "overlays" / "dev" / "overlay.yaml").read_text()
    _acceptance(fleet, repo)


def test_a_spec_area_and_a_mashery_area(srv: Server, tmp_path: Path, dialect: str) -> None:
    if dialect != "mashery":
        pytest.skip("a mashery dev and a spec prod: the mix once")
    other = "mashery" if dialect == "spec" else "spec"
    extra = () if other == "spec" else ("--dialect", "mashery")
    fleet = Fleet(tmp_path / "home")
    (tmp_path / "other").mkdir()
    with server(tmp_path / "other", *extra, areas=2) as second:
        _two_areas(fleet, tmp_path, srv, second)
        (tmp_path / "rules.yaml").write_text(RULES)
        repo = tmp_path / "repo"
        done = fleet.run("export", "--area", "dev=dev", "--area", "prod=prod", "--into", str(repo),
                         "--rewrite", str(tmp_path / "rules.yaml"))
        assert done.returncode == 0, done.stderr
        assert f"overlays/prod/ ({other})" in done.stderr
        _acceptance(fleet, repo)


@pytest.mark.parametrize(("case", "message"), [
    ("twice", "area 'dev' is named twice"),
    ("unreachable", "area gone (http://127.0.0.1:9/v3/rest): "),
    ("collide", "rules collide: API_HOST and OTHER_HOST both rewrite 'api-dev.example.com' in area dev"),
    ("secret", "a rewrite rule would change the secret field services[DEV Payments].endpoints[Forecast]."
               "systemDomainCredentialSecret of area dev"),
    ("unknown area", "names area 'qa', which --area does not give"),
])
def test_bad_input_writes_nothing(srv: Server, tmp_path: Path, case: str, message: str, dialect: str) -> None:
    if dialect != "spec":
        pytest.skip("the refusals do not depend on the dialect")
    fleet = Fleet(tmp_path / "home")
    if case == "secret":  # refused once the areas are read; the others before any call
        _two_areas(fleet, tmp_path, srv, srv)
    else:
        fleet.add("dev", srv), fleet.add("prod", srv)
    areas = ["--area", "dev=dev", "--area", "prod=prod"]
    rules = RULES
    if case == "twice":
        areas = ["--area", "dev=dev", "--area", "dev=prod"]
    elif case == "unreachable":
        areas += ["--area", "gone=http://127.0.0.1:9/v3/rest", "--timeout", "1"]
        rules = ""
    elif case == "collide":
        rules += "  - variable: OTHER_HOST\n    values: {dev: api-dev.example.com, prod: other.example.com}\n"
    elif case == "secret":
        rules += "  - variable: TEAM\n    values: {dev: DEV_PAYMENTS, prod: PAYMENTS_FORECAST}\n"
    else:
        rules = rules.replace("prod: api.example.com}", "prod: api.example.com, qa: api-qa.example.com}")
    (tmp_path / "rules.yaml").write_text(rules or "rewrites: []\n")
    repo = tmp_path / "repo"
    done = fleet.run("export", *areas, "--into", str(repo), "--rewrite", str(tmp_path / "rules.yaml"))
    assert done.returncode == 1, done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not repo.exists()
