"""Both dialects plan the same steps: for every scenario, the ``mashery`` golden plan holds
the same (action, address) pairs as the ``spec`` one. The values inside a step may differ
(the dialect's vocabulary and defaults, SUPPLEMENT §10); which objects change may not.

Reads the golden files that ``test_scenarios.py`` keeps in step with the plans.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenario_harness import goldens
from test_scenarios import FOLDERS

Steps = frozenset[tuple[str, str]]

def _steps(folder: Path, dialect: str) -> Steps | str:
    """The plan's (action, address) pairs, or the error text when no plan was made."""
    text, plan = goldens(folder, dialect)
    if not plan.exists():
        return text.read_text()
    return frozenset((s["action"], s["address"]) for s in json.loads(plan.read_text())["steps"])


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_same_steps_in_both_dialects(folder: Path, update_goldens: bool) -> None:
    if update_goldens:
        pytest.skip("the goldens are being rewritten")
    spec, mashery = _steps(folder, "spec"), _steps(folder, "mashery")
    if isinstance(spec, str) or isinstance(mashery, str):
        assert mashery == spec, "a plan in one dialect, an error in the other"
        return
    assert spec - mashery == set(), "steps only in the spec plan"
    assert mashery - spec == set(), "steps only in the mashery plan"
