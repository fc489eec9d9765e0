"""Golden plans: every ``tests/scenarios/NNN-name/`` folder against a server of each dialect
(see ``conftest.py``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from scenario_harness import DIALECTS, goldens, run

HERE = Path(__file__).parent
FOLDERS = sorted(p for p in HERE.iterdir() if p.is_dir() and p.name[:3].isdigit())
CASES = [pytest.param(folder, dialect, id=f"{folder.name}-{dialect}")
         for folder in FOLDERS for dialect in DIALECTS]


@pytest.mark.parametrize(("folder", "dialect"), CASES)
def test_scenario(folder: Path, dialect: str, update_goldens: bool) -> None:
    outcome = asyncio.run(run(folder, dialect))
    if outcome.json:  # a plan was made: the live state cost exactly one list call per kind
        assert outcome.reads == outcome.bound
        assert json.loads(outcome.json)["dialect"] == dialect  # detected, never forced
    expected_text, expected_json = goldens(folder, dialect)
    if update_goldens:
        expected_text.write_text(outcome.text)
        if outcome.json:
            expected_json.write_text(outcome.json)
        elif expected_json.exists():
            expected_json.unlink()
        return
    assert expected_text.exists(), f"{folder.name}: no {expected_text.name}; run with --update-goldens"
    assert outcome.text == expected_text.read_text()
    if outcome.json or expected_json.exists():
        assert outcome.json == expected_json.read_text()
