"""``apimctl lint --openapi-spec [SERVICE=]SPEC``: operations without operationId and paths no
endpoint of the service routes are findings located in the OpenAPI document."""

from __future__ import annotations

from pathlib import Path

from apimctl.lint import lint_paths
from apimctl.openapi import import_openapi, new_file_text

DOCS = Path(__file__).parent / "documents"
OPERATION_ID, PATH_COVERED = "apimctl-openapi-operation-id", "apimctl-openapi-path-covered"


def imported(tmp_path: Path, name: str, drop: str | None = None) -> Path:
    service = import_openapi(str(DOCS / name)).service
    service["endpoints"] = [e for e in service["endpoints"] if e["name"] != drop]
    (tmp_path / "service.yaml").write_text(new_file_text(service, name))
    (tmp_path / "domains.yaml").write_text("domains: [example.org, example.com]\n")
    return tmp_path


def test_operations_without_operation_id_point_into_the_document(tmp_path: Path) -> None:
    report = lint_paths([str(imported(tmp_path, "library.yaml"))], openapi=[str(DOCS / "library.yaml")])
    found = [f for f in report.findings if f.rule == OPERATION_ID]
    text = (DOCS / "library.yaml").read_text().splitlines()
    assert [(Path(f.file).name, text[f.line - 1].strip()) for f in found] == [
        ("library.yaml", "options:")]  # OPTIONS /search has no operationId
    assert "no method is made for it" in found[0].message
    assert [f for f in report.findings if f.rule == PATH_COVERED] == []


def test_a_path_no_endpoint_routes_is_a_finding(tmp_path: Path) -> None:
    folder = imported(tmp_path, "refs-heavy.yaml", drop="/orders/{orderId}")
    report = lint_paths([str(folder)], openapi=[str(DOCS / "refs-heavy.yaml")])
    # without its own endpoint, /orders/{orderId} is still routed: /orders is a prefix of it
    assert [f for f in report.findings if f.rule == PATH_COVERED] == []
    folder = imported(tmp_path, "refs-heavy.yaml", drop="/orders")
    report = lint_paths([str(folder)], openapi=[str(DOCS / "refs-heavy.yaml")])
    found = [f for f in report.findings if f.rule == PATH_COVERED]
    assert [(Path(f.file).name, f.line) for f in found] == [("refs-heavy.yaml", 7)]  # /orders:


def test_the_service_is_named_or_taken_from_the_title(tmp_path: Path) -> None:
    folder = imported(tmp_path, "refs-heavy.yaml")
    report = lint_paths([str(folder)], openapi=[f"Nope={DOCS / 'refs-heavy.yaml'}"])
    assert any("declare no service named 'Nope'" in w for w in report.warnings)
    assert len([f for f in report.findings if f.rule == PATH_COVERED]) == 3
    report = lint_paths([str(folder)], openapi=[f"Orders={DOCS / 'refs-heavy.yaml'}"])
    assert report.warnings == [] and [f for f in report.findings if f.rule == PATH_COVERED] == []


def test_without_openapi_the_rules_find_nothing(tmp_path: Path) -> None:
    report = lint_paths([str(imported(tmp_path, "library.yaml"))])
    assert [f for f in report.findings if f.rule in (OPERATION_ID, PATH_COVERED)] == []


def test_the_rules_count_as_run_only_with_a_document(tmp_path: Path) -> None:
    folder = imported(tmp_path, "refs-heavy.yaml")
    without = {r.name for r in lint_paths([str(folder)]).rules}
    with_doc = {r.name for r in lint_paths([str(folder)], openapi=[str(DOCS / "refs-heavy.yaml")]).rules}
    assert with_doc - without == {OPERATION_ID, PATH_COVERED}
