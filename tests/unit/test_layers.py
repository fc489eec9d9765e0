"""The layers of STYLE §11, as import-linter contracts in ``pyproject.toml``.

``.ci/run`` runs ``lint-imports`` too; this test keeps the contracts in the README's test
command, so a broken layer fails the suite where a contributor runs it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code = lint_imports(config_filename=os.fspath(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "broken" not in out.lower().replace("0 broken", ""), out
