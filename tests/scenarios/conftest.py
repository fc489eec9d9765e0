"""Golden plan scenarios: ``NNN-name/`` folders run against the in-process reference server.

Each folder holds ``seed.yaml`` (raw API requests that build the live state, as if someone
had applied a configuration by hand), ``manifests/*.yaml``, optionally ``options.yaml``
(``prune``, ``targets``, ``ignores``, ``max_deletes``, ``env``, ``object_responses``) and the
expected ``expected.txt`` / ``expected.json``. Rewrite the expected files with
``pytest tests/scenarios --update-goldens`` (or ``APIMCTL_UPDATE_GOLDENS=1``) and review the
diff before committing.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    flag = bool(request.config.getoption("--update-goldens"))
    return flag or os.environ.get("APIMCTL_UPDATE_GOLDENS") == "1"
