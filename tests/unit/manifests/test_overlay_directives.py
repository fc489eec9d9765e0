"""Overlays that add and remove objects: kustomize's ``$patch: add`` and ``$patch: delete``.

An overlay still cannot name an object the base lacks by accident (the corpus keeps those
errors); with the directive it adds it (checked against the schema like any manifest
object) or removes the base's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apimctl.manifests.pipeline import validate
from tests.unit.manifests.corpus_cases import DOMAINS, ENDPOINT, SERVICE

SECOND = ENDPOINT.replace("Forecast", "Alerts").replace("/v2/forecast", "/v2/alerts")


def _run(tmp_path: Path, base: str, overlay: str) -> tuple[Any, list[str]]:
    (tmp_path / "m.yaml").write_text(base)
    (tmp_path / "o").mkdir(exist_ok=True)
    (tmp_path / "o" / "o.yaml").write_text(overlay)
    result = validate([str(tmp_path / "m.yaml")], [str(tmp_path / "o")], env={})
    lines = [f"{p.path}: {p.message}" for p in result.problems if p.severity == "error"]
    return (result.manifest.doc if result.manifest else None), lines


def _names(doc: Any, kind: str) -> list[str]:
    return [item["name"] for item in doc.get(kind, [])]


def test_an_added_service_is_declared(tmp_path: Path) -> None:
    doc, problems = _run(tmp_path, DOMAINS + SERVICE,
                         "services:\n  - name: Climate\n    $patch: add\n    endpoints:\n" + SECOND)
    assert problems == []
    assert _names(doc, "services") == ["Weather", "Climate"]
    assert "$patch" not in doc["services"][1]


def test_a_deleted_service_is_gone(tmp_path: Path) -> None:
    base = DOMAINS + SERVICE + "  - name: Climate\n    endpoints:\n" + SECOND
    doc, problems = _run(tmp_path, base, "services:\n  - {name: Weather, $patch: delete}\n")
    assert problems == []
    assert _names(doc, "services") == ["Climate"]


def test_an_endpoint_is_added_and_another_deleted(tmp_path: Path) -> None:
    base = DOMAINS + "services:\n  - name: Weather\n    endpoints:\n" + ENDPOINT + SECOND.replace("Alerts", "Old")
    overlay = ("services:\n  - name: Weather\n    endpoints:\n      - {name: Old, $patch: delete}\n"
               + SECOND.replace("      - name: Alerts\n", "      - name: Alerts\n        $patch: add\n")
               + "      - {name: Forecast, requestPathAlias: /v3/forecast}\n")
    doc, problems = _run(tmp_path, base, overlay)
    assert problems == []
    endpoints = doc["services"][0]["endpoints"]
    assert [e["name"] for e in endpoints] == ["Forecast", "Alerts"]
    assert endpoints[0]["requestPathAlias"] == "/v3/forecast"


def test_an_added_object_is_checked_against_the_schema(tmp_path: Path) -> None:
    _, problems = _run(tmp_path, DOMAINS + SERVICE,
                       "services:\n  - {name: Climate, $patch: add, qpsLimitOverall: many}\n")
    assert any("qpsLimitOverall" in p and "integer" in p for p in problems), problems


def test_adding_what_the_base_declares_is_an_error(tmp_path: Path) -> None:
    _, problems = _run(tmp_path, DOMAINS + SERVICE, "services:\n  - {name: Weather, $patch: add}\n")
    assert problems and "overlay adds service 'Weather', which the base manifests already declare" in problems[0]


def test_deleting_what_the_base_lacks_is_an_error(tmp_path: Path) -> None:
    _, problems = _run(tmp_path, DOMAINS + SERVICE, "services:\n  - {name: Climate, $patch: delete}\n")
    assert problems == ["services[0]: overlay deletes service 'Climate', which the base manifests do not declare"]
    _, problems = _run(tmp_path, DOMAINS + SERVICE,
                       "services:\n  - name: Weather\n    endpoints: [{name: Nope, $patch: delete}]\n")
    assert problems == ["services[0].endpoints[0]: overlay deletes endpoint 'Nope', which the base manifests "
                        "do not declare"]


def test_an_unknown_directive_is_an_error(tmp_path: Path) -> None:
    _, problems = _run(tmp_path, DOMAINS + SERVICE, "services:\n  - {name: Weather, $patch: replace}\n")
    assert problems == ["services[0][\"$patch\"]: $patch: expected add or delete, got 'replace'"]


def test_an_overlay_gives_the_base_its_variables(tmp_path: Path) -> None:
    base = DOMAINS.replace("example.com,", "api-dev.example.com, example.com,") + SERVICE.replace(
        "trafficManagerDomain: api.example.com", "trafficManagerDomain: ${API_HOST}").replace(
        "name: Weather", "name: ${PREFIX}Weather")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "variables.env").write_text('# dev\nAPI_HOST=api-dev.example.com\nPREFIX="DEV "\n')
    doc, problems = _run(tmp_path, base, "services:\n  - {name: DEV Weather, version: '2'}\n")
    assert problems == []
    service = doc["services"][0]
    assert (service["name"], service["version"]) == ("DEV Weather", "2")
    assert service["endpoints"][0]["trafficManagerDomain"] == "api-dev.example.com"


def test_the_environment_wins_and_secrets_stay_out_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "variables.env").write_text("PREFIX=Dev\nBACKEND_SECRET=x\nnot a line\n")
    (tmp_path / "m.yaml").write_text(DOMAINS + SERVICE.replace("name: Weather", "name: ${PREFIX}Weather"))
    (tmp_path / "o" / "o.yaml").write_text("services:\n  - {name: ProdWeather, version: '2'}\n")
    result = validate([str(tmp_path / "m.yaml")], [str(tmp_path / "o")], env={"PREFIX": "Prod"})
    messages = [p.message for p in result.problems]
    assert any("BACKEND_SECRET is reserved for secret fields" in m for m in messages), messages
    assert any("expected NAME=value" in m for m in messages), messages
    assert not any("ProdWeather" in m for m in messages), messages
