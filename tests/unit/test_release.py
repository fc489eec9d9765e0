"""The release's version has one source, and every pin users copy names it.

``src/apimctl/__init__.py`` holds ``__version__``; pyproject.toml reads it (dynamic version);
``.ci/pins.py`` writes the pins of the docs, examples, action and hooks from it, and the
export modeline is built from it at run time.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

import apimctl
from apimctl.export.dump import schema_url

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pins", ROOT / ".ci" / "pins.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("pins", module)
    spec.loader.exec_module(module)
    return module


pins = _pins()


def test_pyproject_reads_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "apimctl.__version__"
    assert pins.source_version(ROOT) == apimctl.__version__


def test_every_pin_names_the_version_of_the_source() -> None:
    assert list(pins.stale_pins(ROOT)) == []


def test_the_pins_that_are_checked_exist() -> None:
    """The check is not vacuous: the action, the hook, the modeline and the install lines
    are all pinned somewhere."""
    found = {pattern.pattern for path in pins.pinned_files(ROOT)
             for pattern in pins.PATTERNS if pattern.search(path.read_text())}
    for kind in ("apimctl/apimctl@v", "rev: v", "/schemas/", "ghcr", "apimctl=="):
        assert any(kind in p for p in found), kind


def test_a_stale_pin_is_reported_and_rewritten(tmp_path: Path) -> None:
    for name in ("README.md", "action.yml", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "src" / "apimctl").mkdir(parents=True)
    (tmp_path / "src" / "apimctl" / "__init__.py").write_text('__version__ = "9.8.7"\n')
    stale = list(pins.stale_pins(tmp_path))
    assert any(line.startswith("action.yml:") and "@v" + apimctl.__version__ in line for line in stale)
    assert any(line.startswith(".pre-commit-hooks.yaml:") for line in stale)
    changed = pins.write_pins(tmp_path)
    assert {p.name for p in changed} == {"README.md", "action.yml", ".pre-commit-hooks.yaml"}
    assert list(pins.stale_pins(tmp_path)) == []
    assert "apimctl/apimctl@v9.8.7" in (tmp_path / "action.yml").read_text()


def test_the_export_modeline_names_this_release() -> None:
    url = schema_url()
    assert f"/v{apimctl.__version__}/schemas/manifest.schema.json" in url
    readme = (ROOT / "README.md").read_text()
    assert f"# yaml-language-server: $schema={url}" in readme


@pytest.mark.parametrize("name", ["release.yml", "ci.yml", "examples.yml"])
def test_workflows_exist(name: str) -> None:
    assert (ROOT / ".github" / "workflows" / name).is_file()


def test_the_changelog_names_the_version_or_is_still_unreleased() -> None:
    """The release workflow takes the GitHub release's notes from ``## [X.Y.Z]``."""
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## \[(Unreleased|" + re.escape(apimctl.__version__) + r")\]", text, re.M)
