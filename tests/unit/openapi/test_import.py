"""``apimctl import openapi``: documents of every supported shape become services that
validate; bad documents are refused with their location and exit 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from apimctl.cli import cli
from apimctl.manifests import validate_paths
from apimctl.openapi import ImportOptions, OpenApiError, import_openapi
from apimctl.openapi.extensions import render_schema

from ...integration.inprocess import entry_point

DOCS = Path(__file__).parent / "documents"
ROOT = Path(__file__).resolve().parents[3]
DOMAINS = "domains: [example.com, example.net, example.org]\n"


def endpoints(name: str, **options: Any) -> dict[str, dict[str, Any]]:
    service = import_openapi(str(DOCS / name), ImportOptions(**options)).service
    return {e["name"]: e for e in service["endpoints"]}


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["import", "openapi", *args], catch_exceptions=False)


def test_swagger_2_host_base_path_and_header_key() -> None:
    found = endpoints("petstore-swagger2.yaml")
    assert list(found) == ["/pets", "/pets/{petId}"]
    pets = found["/pets"]
    assert pets["requestPathAlias"] == "/v1/pets"
    assert pets["publicDomains"] == ["petstore.example.com"] == [pets["trafficManagerDomain"]]
    assert pets["supportedHttpMethods"] == ["get", "post"]
    assert pets["methods"] == [{"name": "createPets"}, {"name": "listPets"}]  # the platform's order: by name
    assert (pets["apiKeyValueLocations"], pets["apiKeyValueLocationKey"]) == (["request-header"], "X-Api-Key")
    assert (pets["apiMethodDetectionLocations"], pets["apiMethodDetectionKey"]) == (["request-header"], "X-Operation-Id")


def test_openapi_3_0_json_server_variables_and_several_hosts() -> None:
    found = endpoints("petstore-3.0.json")
    one = found["/pets/{petId}"]
    assert one["publicDomains"] == ["eu.petstore.example.com", "petstore.example.net"]
    assert one["requestPathAlias"] == "/v2/pets/{petId}"
    assert one["supportedHttpMethods"] == ["delete", "get"]  # as an export writes them
    assert "apiKeyValueLocations" not in one  # no security scheme: the platform's default


def test_openapi_3_1_extensions_on_document_path_and_operation() -> None:
    service = import_openapi(str(DOCS / "petstore-3.1.yaml")).service
    assert service["errorSets"][0]["name"] == "JSON errors"
    one, pets = service["endpoints"]  # by name, as an export lists them
    assert pets["name"] == "Pets"  # x-apimctl-endpoint.name on the path item
    assert pets["cors"]["domainsAllowed"] == ["https://app.example.com"]
    assert pets["connectionTimeoutForSystemDomainRequest"] == 5  # from the POST operation
    assert pets["connectionTimeoutForSystemDomainResponse"] == 10  # from the document
    assert pets["apiKeyValueLocationKey"] == "key"  # in the query: the default place, not written
    assert "apiKeyValueLocations" not in pets and "errorSet" not in pets  # the service's first set
    assert "type" not in service["errorSets"][0]  # application/json: the default
    assert one["name"] == "/pets/{petId}" and one["methods"] == [{"name": "showPetById"}]  # path item $ref
    assert "apiKeyValueLocationKey" not in one and one["systemDomains"] == ["pets.backend.example.net"]


def test_refs_to_path_items_in_components_and_another_file() -> None:
    found = endpoints("refs-heavy.yaml")
    assert {n: [m["name"] for m in e["methods"]] for n, e in found.items()} == {
        "/orders": ["listOrders", "placeOrder"], "/orders/{orderId}": ["cancelOrder", "getOrder"],
        "/orders/{orderId}/items": ["listItems"]}


def test_groupings_of_a_larger_document() -> None:
    by_path = endpoints("library.yaml")
    assert len(by_path) == 20
    assert by_path["/search"]["supportedHttpMethods"] == ["get", "options"]
    assert by_path["/search"]["methods"] == [{"name": "search"}]  # OPTIONS has no operationId
    assert "supportedHttpMethods" not in by_path["/status"]  # GET alone, the default: TRACE is left out
    by_prefix = endpoints("library.yaml", group="prefix")
    assert sorted(by_prefix) == ["/authors", "/books", "/branches", "/events", "/loans", "/members",
                                 "/search", "/search/suggestions", "/status"]
    assert by_prefix["/books"]["supportedHttpMethods"] == ["delete", "get", "post", "put"]
    by_tag = endpoints("library.yaml", group="tag")
    assert sorted(by_tag) == ["Authors", "Books", "Branches", "Events", "Loans", "Members", "Search", "Status"]
    assert by_tag["Books"]["requestPathAlias"] == "/v4/books"
    assert len(by_tag["Books"]["methods"]) == 9


def test_a_grouping_that_would_share_a_path_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "shared.yaml"
    doc.write_text(yaml.safe_dump({
        "openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://a.example.com"}],
        "paths": {path: {"get": {"tags": [tag], "responses": {"200": {"description": "ok"}}}}
                  for path, tag in (("/a", "x"), ("/b", "x"), ("/c", "y"), ("/d", "y"))}}))
    with pytest.raises(OpenApiError, match=r"would share path / on a\.example\.com"):
        import_openapi(str(doc), ImportOptions(group="tag"))


@pytest.mark.parametrize("name", ["petstore-swagger2.yaml", "petstore-3.0.json", "petstore-3.1.yaml",
                                  "refs-heavy.yaml", "library.yaml"])
def test_the_imported_manifest_validates(tmp_path: Path, name: str) -> None:
    done = run(str(DOCS / name), "--out", str(tmp_path / "service.yaml"))
    assert done.exit_code == 0, done.output
    (tmp_path / "domains.yaml").write_text(DOMAINS)
    problems = validate_paths([str(tmp_path)])
    assert problems == [], "\n".join(map(str, problems))


def test_options_apply_to_every_endpoint_over_the_document() -> None:
    done = run(str(DOCS / "petstore-3.1.yaml"), "--service", "Pets", "--public-domain", "pets.example.com",
               "--path-prefix", "/api", "--error-set", "Other", "--cors-origin", "https://a.example.com",
               "--key-location", "request-header", "--key-name", "K", "--response-timeout", "30")
    assert done.exit_code == 0, done.output
    service = yaml.safe_load(done.stdout)["services"][0]
    assert service["name"] == "Pets"
    one, pets = service["endpoints"]
    assert pets["requestPathAlias"] == "/api/pets" and pets["publicDomains"] == ["pets.example.com"]
    assert one["errorSet"] == "Other" and one["connectionTimeoutForSystemDomainResponse"] == 30
    assert one["cors"] == {"allDomainsEnabled": False, "domainsAllowed": ["https://a.example.com"]}
    assert pets["cors"]["maxAge"] == 60  # the path item's own value wins over an option
    assert (one["apiKeyValueLocations"], one["apiKeyValueLocationKey"]) == (["request-header"], "K")


@pytest.mark.parametrize("name, where, message", [
    ("invalid.yaml", "invalid.yaml:6:5: paths./things.get:", "'responses' is a required property"),
    ("dangling-ref.yaml", "dangling-ref.yaml:13:24: paths./things.get.responses.200.content"
                          ".application/json.schema.$ref:", "'#/components/schemas/Thing' leads nowhere"),
    ("unsupported-version.yaml", "unsupported-version.yaml:2:1: openapi:", "unsupported version"),
    ("nowhere.yaml", "nowhere.yaml:", "cannot read the document"),
])
def test_bad_documents_are_refused_with_their_location(
        name: str, where: str, message: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = entry_point(monkeypatch, capsys)("import", "openapi", str(DOCS / name))
    assert (code, out) == (1, "")
    error = err.strip()
    located = [line for line in error.splitlines() if "--lenient imports" not in line]  # the hint
    assert "Traceback" not in error and len(located) == 1
    assert error.startswith("Error: ") and where in error and message in error, error


def test_a_bad_extension_is_located_in_the_document(tmp_path: Path) -> None:
    doc = tmp_path / "ext.yaml"
    doc.write_text("openapi: 3.1.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://a.example.com'}]\n"
                   "paths:\n  /a:\n    x-apimctl-endpoint:\n      connectionTimeoutForSystemDomainRequest: 7\n"
                   "    get:\n      responses: {'200': {description: ok}}\n")
    with pytest.raises(OpenApiError) as caught:
        import_openapi(str(doc))
    assert "ext.yaml:7:7: paths./a.x-apimctl-endpoint.connectionTimeoutForSystemDomainRequest" in str(caught.value)


def test_operations_of_one_endpoint_cannot_disagree(tmp_path: Path) -> None:
    doc = tmp_path / "two.yaml"
    doc.write_text(yaml.safe_dump({
        "openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://a.example.com"}],
        "paths": {"/a": {verb: {"x-apimctl-endpoint": {"inboundSslRequired": verb == "get"},
                                "responses": {"200": {"description": "ok"}}} for verb in ("get", "post")}}}))
    with pytest.raises(OpenApiError, match="POST /a and GET /a become one endpoint"):
        import_openapi(str(doc))


def test_a_document_without_hosts_needs_public_domain(tmp_path: Path) -> None:
    doc = tmp_path / "relative.json"
    doc.write_text(json.dumps({"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "/v1"}],
                               "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}}))
    with pytest.raises(OpenApiError, match="give --public-domain"):
        import_openapi(str(doc))
    service = import_openapi(str(doc), ImportOptions(public_domains=("a.example.com",))).service
    assert service["endpoints"][0]["requestPathAlias"] == "/v1/a"


def test_the_extensions_schema_is_shipped_in_both_places() -> None:
    """It is made from the manifest schema: after a change there, write both files again with
    ``python -c 'from apimctl.openapi.extensions import render_schema; print(render_schema(), end="")'``."""
    text = render_schema()
    assert (ROOT / "schemas" / "openapi-extensions.schema.json").read_text() == text
    assert (ROOT / "src" / "apimctl" / "schemas" / "openapi-extensions.schema.json").read_text() == text


def test_the_example_is_what_the_import_makes(tmp_path: Path) -> None:
    example = ROOT / "examples" / "openapi"
    done = run(str(example / "document" / "bookshop.yaml"), "--out", "-")
    assert done.exit_code == 0, done.output
    assert done.stdout == (example / "bookshop.yaml").read_text()


def test_prefix_grouping_stops_before_the_first_template(tmp_path: Path) -> None:
    assert endpoints("petstore-swagger2.yaml", group="prefix")["/pets"]["requestPathAlias"] == "/v1/pets"
    assert list(endpoints("refs-heavy.yaml", group="prefix")) == ["/orders"]
    doc = tmp_path / "items.yaml"
    doc.write_text(yaml.safe_dump({
        "openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://a.example.com"}],
        "paths": {"/items/{id}": {"parameters": [{"name": "id", "in": "path", "required": True,
                                                  "schema": {"type": "string"}}],
                                  "get": {"responses": {"200": {"description": "ok"}}}}}}))
    found = import_openapi(str(doc), ImportOptions(group="prefix")).service["endpoints"]
    assert [(e["name"], e["requestPathAlias"]) for e in found] == [("/items", "/items")]


def test_every_problem_of_a_document_is_reported(tmp_path: Path) -> None:
    doc = tmp_path / "two.yaml"
    doc.write_text("openapi: 3.0.3\ninfo: {title: x}\npaths:\n  /a:\n    get:\n      operationId: a\n"
                   "  /b:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/Nope'}\n")
    with pytest.raises(OpenApiError) as caught:
        import_openapi(str(doc))
    assert [(p.line, p.path) for p in caught.value.problems] == [
        (2, "info"), (5, "paths./a.get"), (10, "paths./b.get.responses.200.$ref")]


def test_import_options_have_their_own_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIMCTL_IMPORT_GROUP", "tag")
    monkeypatch.setenv("APIMCTL_PRUNE", "1")  # plan's and apply's: not read by an import
    done = run(str(DOCS / "library.yaml"))
    assert done.exit_code == 0, done.output
    assert [e["name"] for e in yaml.safe_load(done.stdout)["services"][0]["endpoints"]][:2] == ["Authors", "Books"]


def test_an_option_the_manifest_schema_refuses_is_an_error() -> None:
    with pytest.raises(OpenApiError, match=r"publicDomains\[0\]: 'a.example.com:80:80' does not match"):
        import_openapi(str(DOCS / "petstore-3.1.yaml"), ImportOptions(public_domains=("a.example.com:80:80",)))
