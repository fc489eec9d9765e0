"""OpenAPI documents of several shapes, imported (``apimctl import openapi``), validated,
applied to an empty area of the reference server in both dialects and planned to zero; the
area's ``export --openapi`` is a valid OpenAPI 3.1 document, and importing it gives the very
manifest the first import wrote, byte for byte (but for the header line naming the document).

The documents: petstore variants (Swagger 2.0, OpenAPI 3.0 as JSON, 3.1 with the
``x-apimctl-*`` extensions), a ``$ref``-heavy one, a hand-written larger one, and PokéAPI's
published document (a real public API: 100 paths, 11 tags; ``documents/pokeapi/README.md``).
Each is imported once for both dialects (a module-scoped cache).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from openapi_spec_validator import validate

from apimctl.cli import cli
from apimctl.openapi.area import export_openapi

from .export_support import apply, client_for, describe, load, replan, server_app
from .inprocess import entry_point

DOCS = Path(__file__).resolve().parents[1] / "unit" / "openapi" / "documents"
DOMAINS = "domains: [example.com, example.net, example.org, pokeapi.co]\n"
DOCUMENTS = ["petstore-swagger2.yaml", "petstore-3.0.json", "petstore-3.1.yaml", "refs-heavy.yaml",
             "library.yaml", "pokeapi/openapi.yml"]
EXPORTED = "exported.yaml"


def imported(document: Path, folder: Path) -> Path:
    """``apimctl import openapi DOCUMENT --out FOLDER/service.yaml``, with the domains beside it."""
    folder.mkdir(parents=True)
    done = CliRunner().invoke(cli, ["import", "openapi", str(document), "--out", str(folder / "service.yaml")],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    (folder / "domains.yaml").write_text(DOMAINS)
    return folder


@pytest.fixture(scope="module")
def first_import(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The folder of the first import of a document (made once, read by both dialects)."""
    made: dict[str, Path] = {}

    def folder(name: str) -> Path:
        if name not in made:
            made[name] = imported(DOCS / name, tmp_path_factory.mktemp("first") / "import")
        return made[name]
    return folder


def same_manifest(first: Path, second: Path, source: str) -> None:
    """The manifest imported from the export is the first one, byte for byte, but for the
    header line that names the document each was made from."""
    a, b = (first / "service.yaml").read_text(), (second / "service.yaml").read_text()
    made_from = f"# Made by apimctl import openapi from {Path(source).name}.\n"
    assert made_from in a
    assert b == a.replace(made_from, f"# Made by apimctl import openapi from {EXPORTED}.\n", 1)


async def round_trip(source: str, first_folder: Path, tmp: Path, dialect: str) -> None:
    first = load([first_folder], {})
    async with client_for(server_app(tmp / "area.db", dialect=dialect)) as client:
        applied = await apply(client, first, {})
        assert applied.dialect == dialect
        again = await replan(client, first)
        assert not again.steps, describe(again)

        documents = await export_openapi(lambda: nullcontext(client))
        assert len(documents) == 1
        exported = documents[0]
        assert exported.document["openapi"] == "3.1.0"
    (tmp / EXPORTED).write_text(exported.text)
    # the import validates the export with the validator it validated the first document with;
    # the manifest it makes is the first one (which plans to zero against the area), byte for byte
    same_manifest(first_folder, imported(tmp / EXPORTED, tmp / "second"), source)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_imported_document_applies_plans_to_zero_and_exports_back(
        name: str, dialect: str, tmp_path: Path, first_import: Callable[[str], Path]) -> None:
    asyncio.run(round_trip(name, first_import(name), tmp_path, dialect))


def test_the_real_document_is_large() -> None:
    """PokéAPI's document is what the round trip above is about: many paths and tags."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ten times faster
    doc = yaml.load((DOCS / "pokeapi" / "openapi.yml").read_text(), Loader=loader)
    assert len(doc["paths"]) >= 100 and len(doc["tags"]) >= 10


def test_export_openapi_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI", raising=False)
    guarded = entry_point(monkeypatch, capsys)
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
