"""The imported service is written as an export of the applied area writes it (so that
``export --openapi`` imports back to the same text), and documents are read the way the
validator reads them (a response code written ``200``, a version written as a date)."""

from __future__ import annotations

from pathlib import Path

from apimctl.openapi import import_openapi
from apimctl.openapi.canonical import exported_form


def test_children_by_name_defaults_left_out_secrets_and_escaped_text_kept() -> None:
    service = {
        "name": "Shop $${tag}", "description": "costs $${price}",
        "errorSets": [{"name": "JSON", "type": "application/json"}, {"name": "XML", "type": "text/xml"}],
        "endpoints": [
            {"name": "b", "requestPathAlias": "/b", "trafficManagerDomain": "a.example.com",
             "publicDomains": ["a.example.com"], "errorSet": "XML", "supportedHttpMethods": ["get"]},
            {"name": "a $${v}", "requestPathAlias": "/a", "trafficManagerDomain": "a.example.com",
             "publicDomains": ["a.example.com"], "errorSet": "JSON", "inboundSslRequired": False,
             "systemDomainCredentialKey": "k", "systemDomainCredentialSecret": "${SECRET}",
             "systemDomainAuthentication": {"type": "httpBasic", "username": "u", "password": "literal"},
             "methods": [{"name": "z"}, {"name": "y", "sampleXmlResponse": "<y/>"}]}]}
    found = exported_form(service)
    assert (found["name"], found["description"]) == ("Shop $${tag}", "costs $${price}")
    assert found["errorSets"] == [{"name": "JSON"}, {"name": "XML", "type": "text/xml"}]
    a, b = found["endpoints"]
    assert (a["name"], b["name"]) == ("a $${v}", "b")
    assert "errorSet" not in a and b["errorSet"] == "XML"  # the first set is an endpoint's default
    assert "inboundSslRequired" not in a and "supportedHttpMethods" not in b
    assert a["systemDomainCredentialSecret"] == "${SECRET}"  # not a reference of the export's own
    assert a["systemDomainAuthentication"]["password"] == "literal"
    assert a["methods"] == [{"name": "y", "sampleXmlResponse": "<y/>"}, {"name": "z"}]
    assert service["endpoints"][0]["name"] == "b"  # the argument is left as it was


def test_unquoted_response_codes_and_a_date_as_version(tmp_path: Path) -> None:
    doc = tmp_path / "plain.yaml"
    doc.write_text("swagger: '2.0'\ninfo: {title: Plain, version: 2026-05-01}\nhost: api.example.com\n"
                   "paths:\n  /things:\n    get:\n      operationId: listThings\n"
                   "      responses:\n        200: {description: ok}\n        404: {description: none}\n")
    service = import_openapi(str(doc)).service
    assert service["version"] == "2026-05-01"
    assert [(e["name"], e["methods"]) for e in service["endpoints"]] == [("/things", [{"name": "listThings"}])]
