"""What ``apimctl import openapi`` says about an invalid document: one line per problem at
the line and column of the offending node (in ``components``, ``definitions`` and ``allOf``
too, not where a ``$ref`` led the validator there), no dump of a mapping, a capped list; a
way forward with ``--lenient`` when the problems lie only in parts the import does not read;
paths with a fragment refused (or left out with ``--lenient``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ...integration.inprocess import entry_point

Run = Callable[..., tuple[int, str, str]]
LOCATED = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<path>\S+): (?P<message>.+)$")
HINT = "--lenient imports the paths and operations anyway"

OAS3 = """\
openapi: 3.0.3
info: {title: Shop, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}
components:
  schemas:
    Pet:
      type: object
      properties:
        count: {type: integer, default: '100'}
        kind:
          allOf:
            - {$ref: '#/components/schemas/Base'}
            - properties: {n: {type: integer, default: 'x'}}
    Base: {type: object}
"""


def swagger(paths: int) -> str:
    """A Swagger 2.0 document with one bad parameter per path and bad definitions."""
    lines = ["swagger: '2.0'", "info: {title: Chat, version: '1'}", "host: chat.example.com",
             "basePath: /api", "paths:"]
    for i in range(paths):
        lines += [f"  /chat.method{i}:", "    post:", f"      operationId: method{i}",
                  "      parameters:", "        - {name: token, in: query, type: strin, required: true}",
                  "      responses:", "        '200': {description: ok, schema: {$ref: '#/definitions/Ok'}}"]
    lines += ["definitions:", "  Ok:", "    type: object", "    properties:",
              "      count: {type: integer, default: '100'}"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    return entry_point(monkeypatch, capsys)


def problems(err: str) -> list[re.Match[str]]:
    """The located lines of an error message (its first line starts with ``Error: ``)."""
    lines = err.removeprefix("Error: ").strip().splitlines()
    return [m for m in (LOCATED.match(line) for line in lines) if m]


def refused(result: tuple[int, str, str]) -> str:
    code, out, err = result
    assert code == 1 and out == "" and "Traceback" not in err, err
    return err


def test_problems_in_components_and_all_of_are_located_where_written(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "shop.yaml"
    doc.write_text(OAS3, encoding="utf-8")
    err = refused(run("import", "openapi", str(doc)))
    found = [(m["line"], m["col"], m["path"], m["message"]) for m in problems(err)]
    assert found == [
        ("17", "32", "components.schemas.Pet.properties.count.default",
         "invalid OpenAPI 3.0 document: '100' is not of type 'integer'"),
        ("21", "47", "components.schemas.Pet.properties.kind.allOf[1].properties.n.default",
         "invalid OpenAPI 3.0 document: 'x' is not of type 'integer'")]
    assert HINT in err.strip().splitlines()[-1]


def test_a_swagger_document_with_many_problems_gets_one_short_line_each_capped(
        run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "chat.yaml"
    doc.write_text(swagger(30), encoding="utf-8")
    err = refused(run("import", "openapi", str(doc)))
    lines = err.strip().splitlines()
    located = problems(err)
    assert len(located) == 20 and lines[20] == "… and 11 more" and HINT in lines[21]
    assert len(lines) == 22 and max(len(line) for line in lines) < 400
    assert located[0]["path"] == "paths./chat.method0.post.parameters[0].type"
    assert (located[0]["line"], located[0]["col"]) == ("10", "36")
    assert "'strin' is not one of" in located[0]["message"] and "{" not in err
    assert all(int(m["line"]) > 1 for m in located)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=st.sets(st.integers(min_value=0, max_value=11), min_size=1, max_size=6))
def test_each_bad_default_in_definitions_is_located_on_its_line(
        run: Run, tmp_path: Path, bad: set[int]) -> None:
    used = ", ".join(f"p{i}: {{$ref: '#/definitions/D{i}'}}" for i in range(12))
    lines = ["swagger: '2.0'", "info: {title: T, version: '1'}", "host: t.example.com", "paths:",
             "  /t:", "    get: {operationId: t, responses: {'200': {description: ok, schema: "
             f"{{properties: {{{used}}}}}}}}}}}", "definitions:"]
    written = {}
    for i in range(12):
        written[i] = len(lines) + 1
        lines.append(f"  D{i}: {{type: integer, default: {'nope' if i in bad else i}}}")
    doc = tmp_path / "defs.yaml"
    doc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    located = problems(refused(run("import", "openapi", str(doc))))
    assert sorted(int(m["line"]) for m in located) == sorted(written[i] for i in bad)
    assert all(m["path"] == f"definitions.D{m['path'].split('.D')[1].split('.')[0]}.default"
               for m in located)


def test_lenient_imports_when_problems_lie_outside_what_the_import_reads(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "chat.yaml"
    doc.write_text(swagger(3), encoding="utf-8")
    code, out, err = run("import", "openapi", str(doc), "--lenient")
    assert code == 0, err
    assert [e for e in ("method0", "method1", "method2") if e in out] == ["method0", "method1", "method2"]
    warnings = err.strip().splitlines()
    assert len(warnings) == 4 and all("ignored with --lenient" in w for w in warnings)
    assert "chat.yaml:10:36:" in warnings[0]


def test_lenient_still_refuses_problems_in_what_the_import_reads(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "shop.yaml"
    doc.write_text(OAS3.replace("servers: [{url: 'https://api.example.com'}]", "servers: [{}]"),
                   encoding="utf-8")
    err = refused(run("import", "openapi", str(doc), "--lenient"))
    located = problems(err)
    assert [m["path"] for m in located] == ["servers[0]"] and HINT not in err


def test_a_path_with_a_fragment_is_refused_or_left_out_with_lenient(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "aws.yaml"
    doc.write_text("openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\n"
                   "servers: [{url: 'https://api.example.com'}]\npaths:\n"
                   "  /pets:\n    get: {operationId: listPets, responses: {'200': {description: ok}}}\n"
                   "  /#X-Amz-Target=Shop.Buy:\n    post: {operationId: buy, responses: {'200': {description: ok}}}\n",
                   encoding="utf-8")
    err = refused(run("import", "openapi", str(doc)))
    assert "aws.yaml:7:3:" in err and "carries a fragment" in err and "--lenient" in err
    code, out, err = run("import", "openapi", str(doc), "--lenient")
    assert code == 0, err
    assert "listPets" in out and "buy" not in out and "X-Amz-Target" not in out
    assert "aws.yaml:7:3:" in err and "left out (POST)" in err


def test_an_operations_problem_is_located_at_the_field_it_is_about(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "ops.yaml"
    doc.write_text("openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\n"
                   "servers: [{url: 'https://api.example.com'}]\npaths:\n"
                   "  /pets/{id}:\n    get:\n      operationId: getPet\n      responses: {'200': {description: ok}}\n"
                   "  /dogs:\n    get:\n      operationId: getPet\n      responses: {'200': {description: ok}}\n",
                   encoding="utf-8")
    located = problems(refused(run("import", "openapi", str(doc))))
    assert [(m["line"], m["path"]) for m in located] == [
        ("6", "paths./pets/{id}.get.parameters"), ("11", "paths./dogs.get.operationId")]
    located = problems(refused(run("import", "openapi", str(doc), "--lenient")))
    assert [(m["line"], m["path"]) for m in located] == [("11", "paths./dogs.get.operationId")]


def test_a_missing_field_the_import_does_not_read_is_ignored_with_lenient(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "bare.yaml"
    doc.write_text("openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\n"
                   "servers: [{url: 'https://api.example.com'}]\npaths:\n"
                   "  /pets:\n    get: {operationId: listPets}\n", encoding="utf-8")
    located = problems(refused(run("import", "openapi", str(doc))))
    assert [(m["line"], m["path"], m["message"]) for m in located] == [
        ("6", "paths./pets.get", "invalid OpenAPI 3.0 document: 'responses' is a required property")]
    code, out, err = run("import", "openapi", str(doc), "--lenient")
    assert code == 0 and "listPets" in out and "ignored with --lenient" in err
    doc.write_text("openapi: 3.0.3\nservers: [{url: 'https://api.example.com'}]\npaths:\n"
                   "  /pets:\n    get: {operationId: listPets, responses: {'200': {description: ok}}}\n",
                   encoding="utf-8")
    refused(run("import", "openapi", str(doc), "--lenient"))
