"""Golden plans: every ``tests/scenarios/NNN-name/`` folder (see ``conftest.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scenario_harness import run

HERE = Path(__file__).parent
FOLDERS = sorted(p for p in HERE.iterdir() if p.is_dir() and p.name[:3].isdigit())


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_scenario(folder: Path, update_goldens: bool) -> None:
    outcome = asyncio.run(run(folder))
    if outcome.json:  # a plan was made: the live state cost exactly one list call per kind
        assert outcome.reads == outcome.bound
    expected_text, expected_json = folder / "expected.txt", folder / "expected.json"
    if update_goldens:
        expected_text.write_text(outcome.text)
        if outcome.json:
            expected_json.write_text(outcome.json)
        elif expected_json.exists():
            expected_json.unlink()
        return
    assert expected_text.exists(), f"{folder.name}: no expected.txt; run with --update-goldens"
    assert outcome.text == expected_text.read_text()
    if outcome.json or expected_json.exists():
        assert outcome.json == expected_json.read_text()
