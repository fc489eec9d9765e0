"""``apimctl promote`` on files: what the target overlay (or the base) becomes, comments and
key order kept, and the refusals (nothing written)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from apimctl.areas.promote import PromoteRequest, plan_promotion, write_promotion
from apimctl.errors import ApimctlError

BASE = """\
# the shared part
services:
  - name: Payments
    qpsLimitOverall: 5
    endpoints:
      - {name: Forecast, requestPathAlias: /f}
      - {name: Alerts, requestPathAlias: /a}
"""
DEV = """\
services:
  - name: Payments
    qpsLimitOverall: 50
    endpoints:
      - {name: Forecast, requestPathAlias: /dev-f}
      - {name: Beta, $patch: add, requestPathAlias: /b}
  - name: Reports
    $patch: add
    endpoints: [{name: X, requestPathAlias: /x}]
"""
PROD = """\
# prod: reviewed by the API team
services:
  - name: Payments  # the money
    version: '2'
    endpoints:
      - {name: Alerts, $patch: delete}
"""


def _repo(tmp_path: Path) -> Path:
    for rel, text in {"base/apimctl.yaml": BASE, "overlays/dev/overlay.yaml": DEV,
                      "overlays/prod/overlay.yaml": PROD}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _promote(repo: Path, *only: str, to: str = "prod") -> list[str]:
    return write_promotion(plan_promotion(PromoteRequest(str(repo), "dev", to, only)))


def test_one_endpoint_keeps_the_rest_and_the_comments(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _promote(repo, "endpoint:Payments/Beta")
    text = (repo / "overlays/prod/overlay.yaml").read_text()
    assert text.startswith("# prod: reviewed by the API team\n")
    assert "# the money" in text
    payments = yaml.safe_load(text)["services"][0]
    assert list(payments) == ["name", "version", "endpoints"]
    assert payments["endpoints"] == [{"name": "Alerts", "$patch": "delete"},
                                     {"name": "Beta", "$patch": "add", "requestPathAlias": "/b"}]


def test_an_object_the_source_leaves_as_the_base_has_it_leaves_the_target_overlay(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _promote(repo, "endpoint:Payments/Alerts")
    payments = yaml.safe_load((repo / "overlays/prod/overlay.yaml").read_text())["services"][0]
    assert "endpoints" not in payments and payments["version"] == "2"


def test_everything_makes_the_overlays_alike(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _promote(repo)
    assert yaml.safe_load((repo / "overlays/prod/overlay.yaml").read_text()) == yaml.safe_load(DEV)


def test_into_the_base(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _promote(repo, "service:Reports", to="base")
    base = yaml.safe_load((repo / "base/apimctl.yaml").read_text())
    assert [s["name"] for s in base["services"]] == ["Payments", "Reports"]
    assert "$patch" not in base["services"][1]
    assert (repo / "base/apimctl.yaml").read_text().startswith("# the shared part\n")
    dev = yaml.safe_load((repo / "overlays/dev/overlay.yaml").read_text())
    assert [s["name"] for s in dev["services"]] == ["Payments"]


def test_a_file_edited_since_it_was_read_is_not_written(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    promotion = plan_promotion(PromoteRequest(str(repo), "dev", "prod", ("service:Reports",)))
    (repo / "overlays/prod/overlay.yaml").write_text(PROD + "# edited meanwhile\n")
    with pytest.raises(ApimctlError, match=r"overlay\.yaml was edited since promote read it: nothing written"):
        write_promotion(promotion)
    assert (repo / "overlays/prod/overlay.yaml").read_text() == PROD + "# edited meanwhile\n"


@pytest.mark.parametrize(("only", "to", "message"), [
    (("nothing",), "prod", "expected KIND:KEY"),
    (("endpoint:Payments",), "prod", "the key of kind endpoint is PARENT/NAME"),
    (("endpoint:Reports/X",), "prod", "service 'Reports' is added by area dev's overlay: promote service:Reports"),
    ((), "qa", "area 'qa': "),
    ((), "dev", "--from and --to both name 'dev'"),
])
def test_refusals(tmp_path: Path, only: tuple[str, ...], to: str, message: str) -> None:
    repo = _repo(tmp_path)
    with pytest.raises(ApimctlError, match=message.replace("(", r"\(").replace("$", r"\$")):
        _promote(repo, *only, to=to)
    assert (repo / "overlays/prod/overlay.yaml").read_text() == PROD


def test_a_service_copied_within_one_area_under_new_names(tmp_path: Path) -> None:
    from apimctl.areas.promote import CopyRequest, plan_copy

    path = tmp_path / "m.yaml"
    path.write_text("# one area, two environments by name\nservices:\n  - name: DEV Payments  # dev\n"
                    "    endpoints:\n      - {name: Forecast, requestPathAlias: /dev/f, trafficManagerDomain: "
                    "api-dev.example.com}\n  - name: Other\n")
    write_promotion(plan_copy(CopyRequest(str(path), "service:DEV Payments",
                                          (("DEV ", "QA "), ("/dev/", "/qa/"), ("api-dev", "api-qa")))))
    text = path.read_text()
    assert text.startswith("# one area, two environments by name\n") and "# dev" in text
    services = yaml.safe_load(text)["services"]
    assert [s["name"] for s in services] == ["DEV Payments", "QA Payments", "Other"]
    assert services[1]["endpoints"] == [{"name": "Forecast", "requestPathAlias": "/qa/f",
                                         "trafficManagerDomain": "api-qa.example.com"}]
    with pytest.raises(ApimctlError, match="already declares service 'QA Payments'"):
        plan_copy(CopyRequest(str(path), "service:DEV Payments", (("DEV ", "QA "),)))


def test_the_command_copies_and_refuses_a_mix(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from apimctl.cli import cli

    path = tmp_path / "m.yaml"
    path.write_text("services:\n  - name: DEV Payments\n")
    runner = CliRunner()
    done = runner.invoke(cli, ["promote", "--copy", "service:DEV Payments", "--rename", "DEV =QA ", "--in", str(path)])
    assert done.exit_code == 0, done.output
    assert [s["name"] for s in yaml.safe_load(path.read_text())["services"]] == ["DEV Payments", "QA Payments"]
    mixed = runner.invoke(cli, ["promote", "--copy", "service:QA Payments", "--from", "dev", "--in", str(path)])
    assert mixed.exit_code == 2 and "no --from, --to or --only" in mixed.output
