"""``apimctl import openapi --into DIR``: a newer document updates the generated fields in
place; what a person added (fields, comments, key order) stays; endpoints the document no
longer has are reported, and removed only with ``--prune``; a second import changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from apimctl.cli import cli

DOCS = Path(__file__).parent / "documents"


def run(*args: str) -> Any:
    done = CliRunner().invoke(cli, ["import", "openapi", *args], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done


def newer(tmp_path: Path) -> Path:
    """petstore-3.1.yaml, one version on: a new path, one path gone, a changed extension."""
    doc = yaml.safe_load((DOCS / "petstore-3.1.yaml").read_text())
    doc["paths"].pop("/pets/{petId}")
    doc["paths"]["/stores"] = {"get": {"operationId": "listStores", "responses": {"200": {"description": "ok"}}}}
    doc["paths"]["/pets"]["x-apimctl-endpoint"]["cors"]["maxAge"] = 120
    doc["paths"]["/pets"]["get"]["operationId"] = "findPets"
    path = tmp_path / "petstore-3.1.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def hand_edit(file: Path) -> str:
    text = file.read_text()
    text = text.replace("      - name: Pets\n",
                        "      # the pets endpoint: reviewed by the API team\n      - name: Pets\n")
    text = text.replace("        requestPathAlias: /v3/pets\n",
                        "        requestPathAlias: /v3/pets\n        highSecurity: true  # security review 2026-05\n")
    text = text.replace("          - {name: listPets}\n",
                        "          - name: listPets\n            sampleJsonResponse: '[]'\n")
    file.write_text(text)
    return text


def test_reimport_keeps_hand_edits_and_is_idempotent(tmp_path: Path) -> None:
    into = tmp_path / "manifests"
    first = run(str(DOCS / "petstore-3.1.yaml"), "--into", str(into))
    file = into / "petstore.yaml"
    assert f"Wrote {file}: a new file with 2 endpoints" in first.stderr
    hand_edit(file)
    again = run(str(DOCS / "petstore-3.1.yaml"), "--into", str(into))
    assert f"No changes: {file} already matches the document" in again.stderr
    edited = file.read_text()

    update = run(str(newer(tmp_path)), "--into", str(into))
    assert f"Updated {file}: 1 endpoint added, 1 updated" in update.stderr
    assert "no longer has these endpoints (kept; --prune removes them): /pets/{petId}" in update.stderr
    assert "no longer has these methods (kept; --prune removes them): Pets: listPets" in update.stderr
    text = file.read_text()
    assert "# the pets endpoint: reviewed by the API team\n" in text
    assert "highSecurity: true  # security review 2026-05\n" in text
    block = text[text.index("- name: Pets\n"):]
    assert block.index("highSecurity") < block.index("trafficManagerDomain")  # key order kept
    service = yaml.safe_load(text)["services"][0]
    one, pets, stores = service["endpoints"]
    assert pets["cors"]["maxAge"] == 120
    assert pets["methods"] == [{"name": "createPets"}, {"name": "listPets", "sampleJsonResponse": "[]"},
                               {"name": "findPets"}]  # a method gone from the document is kept too
    assert one["name"] == "/pets/{petId}" and stores["name"] == "/stores"
    assert text.replace("maxAge: 120", "maxAge: 60") != edited  # the new endpoint was appended

    twice = run(str(newer(tmp_path)), "--into", str(into))
    assert f"No changes: {file} already matches the document" in twice.stderr
    assert file.read_text() == text


def test_prune_removes_what_the_document_no_longer_has(tmp_path: Path) -> None:
    into = tmp_path / "manifests"
    run(str(DOCS / "petstore-3.1.yaml"), "--into", str(into))
    hand_edit(into / "petstore.yaml")
    done = run(str(newer(tmp_path)), "--into", str(into), "--prune")
    assert "1 removed" in done.stderr
    assert "no longer has these methods (removed): Pets: listPets" in done.stderr
    service = yaml.safe_load((into / "petstore.yaml").read_text())["services"][0]
    assert [e["name"] for e in service["endpoints"]] == ["Pets", "/stores"]
    assert service["endpoints"][0]["methods"] == [{"name": "createPets"}, {"name": "findPets"}]
    assert service["endpoints"][0]["highSecurity"] is True


def test_import_into_a_directory_finds_the_file_holding_the_service(tmp_path: Path) -> None:
    into = tmp_path / "manifests"
    into.mkdir()
    (into / "all.yaml").write_text("# our services\nservices:\n  - name: Other\n    endpoints: []\n"
                                   "  - name: Swagger Petstore\n    description: kept\n")
    run(str(DOCS / "petstore-swagger2.yaml"), "--into", str(into))
    assert sorted(p.name for p in into.iterdir()) == ["all.yaml"]
    text = (into / "all.yaml").read_text()
    assert text.startswith("# our services\n")
    services = yaml.safe_load(text)["services"]
    assert services[0] == {"name": "Other", "endpoints": []}
    assert services[1]["description"] == "kept" and len(services[1]["endpoints"]) == 2


def test_prune_needs_into() -> None:
    done = CliRunner().invoke(cli, ["import", "openapi", str(DOCS / "petstore-3.1.yaml"), "--prune"])
    assert done.exit_code == 2 and "give --into" in done.output


def test_unwritable_destinations_are_errors(tmp_path: Path) -> None:
    from apimctl.errors import ApimctlError
    from apimctl.openapi import import_openapi, merge_into

    (tmp_path / "file").write_text("")
    service = import_openapi(str(DOCS / "petstore-3.1.yaml")).service
    with pytest.raises(ApimctlError, match="cannot import into"):
        merge_into(str(tmp_path / "file" / "sub"), service, "petstore-3.1.yaml")
