"""OpenAPI documents of several shapes, imported (``apimctl import openapi``), validated,
applied to an empty area of the reference server in both dialects and planned to zero; the
area's ``export --openapi`` is a valid OpenAPI 3.1 document that imports back to the same
endpoints, which plan to zero against the same area."""

from __future__ import annotations

import asyncio
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from openapi_spec_validator import validate

from apimctl.cli import cli
from apimctl.cli.common import run_guarded
from apimctl.openapi.area import export_openapi

from .export_support import apply, client_for, describe, load, replan, server_app

DOCS = Path(__file__).resolve().parents[1] / "unit" / "openapi" / "documents"
DOMAINS = "domains: [example.com, example.net, example.org]\n"
DOCUMENTS = ["petstore-swagger2.yaml", "petstore-3.0.json", "petstore-3.1.yaml", "refs-heavy.yaml",
             "library.yaml"]


def imported(document: Path, folder: Path) -> Path:
    """``apimctl import openapi DOCUMENT --out FOLDER/service.yaml``, with the domains beside it."""
    folder.mkdir()
    done = CliRunner().invoke(cli, ["import", "openapi", str(document), "--out", str(folder / "service.yaml")],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    (folder / "domains.yaml").write_text(DOMAINS)
    return folder


def surface(folder: Path) -> dict[str, Any]:
    """What the document decides of each endpoint: path, domains, HTTP methods, methods, key."""
    service = yaml.safe_load((folder / "service.yaml").read_text())["services"][0]
    return {e["name"]: (e["requestPathAlias"], e["trafficManagerDomain"], sorted(e["publicDomains"]),
                        sorted(e["supportedHttpMethods"]), sorted(m["name"] for m in e.get("methods", [])),
                        e.get("apiKeyValueLocations"), e.get("apiKeyValueLocationKey"))
            for e in service["endpoints"]}


async def round_trip(document: Path, tmp: Path, dialect: str) -> None:
    first = load([imported(document, tmp / "first")], {})
    async with client_for(server_app(tmp / "area.db", dialect=dialect)) as client:
        applied = await apply(client, first, {})
        assert applied.dialect == dialect
        again = await replan(client, first)
        assert not again.steps, describe(again)

        documents = await export_openapi(lambda: nullcontext(client))
        assert len(documents) == 1
        exported = documents[0]
        assert exported.document["openapi"] == "3.1.0"
        validate(yaml.safe_load(exported.text))
        (tmp / "exported.yaml").write_text(exported.text)
        second_folder = imported(tmp / "exported.yaml", tmp / "second")
        second = load([second_folder], {})
        zero = await replan(client, second)
        assert not zero.steps, describe(zero)
    assert surface(second_folder) == surface(tmp / "first")


@pytest.mark.parametrize("name", DOCUMENTS)
def test_imported_document_applies_plans_to_zero_and_exports_back(name: str, dialect: str,
                                                                  tmp_path: Path) -> None:
    asyncio.run(round_trip(DOCS / name, tmp_path, dialect))


def guarded(*args: str) -> tuple[int, str, str]:
    """``apimctl ARGS`` through the real entry point, which maps errors to exit codes."""
    runner = CliRunner()
    with runner.isolation(input="", env={"CI": None}) as (out, err, _):
        argv, sys.argv = sys.argv, ["apimctl", *args]
        try:
            code = run_guarded(cli)
        finally:
            sys.argv = argv
        return code, out.getvalue().decode(), err.getvalue().decode()


def test_export_openapi_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, folder in (("petstore-3.1.yaml", "pets"), ("refs-heavy.yaml", "orders")):
        imported(DOCS / name, tmp_path / folder)
        code, _, err = guarded("apply", folder, "--auto-approve", "--url", "embedded")
        assert code == 0, err
    code, out, err = guarded("export", "--openapi", "--url", "embedded")
    assert code == 0, err
    assert [d["info"]["title"] for d in yaml.safe_load_all(out)] == ["Orders", "Petstore"]
    code, _, err = guarded("export", "--openapi", "--service", "Orders", "--out", "docs", "--url", "embedded")
    assert (code, sorted(p.name for p in (tmp_path / "docs").iterdir())) == (0, ["orders.openapi.yaml"]), err
    validate(yaml.safe_load((tmp_path / "docs" / "orders.openapi.yaml").read_text()))
    code, _, err = guarded("export", "--openapi", "--service", "Nope", "--url", "embedded")
    assert code == 1 and "the area has no service named 'Nope' (it has: Orders, Petstore)" in err
    code, _, err = guarded("export", "--openapi", "--layout", "per-service", "--out", "x", "--url", "embedded")
    assert code == 1 and "--kinds, --layout and --with-ids are for manifests" in err
