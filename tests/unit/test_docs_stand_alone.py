"""The README, ``docs/`` and ``examples/`` are what a user of apimctl has: they say what they
mean in their own words and never send the reader to the project's design documents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOT_SHIPPED = re.compile(r"SUPPLEMENT|DESIGN\.md|\.\./shared|(?<![\w.-])spec/")


def _documents() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found += sorted(p for p in (ROOT / "examples").rglob("*") if p.is_file())
    return found


def test_the_documents_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _documents()}
    assert {"README.md", "docs/architecture.md", "examples/README.md",
            "examples/weather/weather.yaml"} <= names


@pytest.mark.parametrize("path", _documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_document_names_what_users_lack(path: Path) -> None:
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        found = NOT_SHIPPED.search(line)
        assert found is None, f"{path.relative_to(ROOT)}:{number}: {found.group() if found else ''}"


@pytest.mark.parametrize("text", ["see SUPPLEMENT §11", "the DESIGN.md example",
                                  "../shared/spec/x.txt", "(spec/SUPPLEMENT.md 10.10.1)"])
def test_the_pattern_finds_each_reference(text: str) -> None:
    assert NOT_SHIPPED.search(text)


@pytest.mark.parametrize("text", ["--dialect spec", "openapi-spec-validator/", "`spec` dialect",
                                  "schemas/manifest.schema.json"])
def test_the_pattern_leaves_the_projects_own_words(text: str) -> None:
    assert NOT_SHIPPED.search(text) is None
