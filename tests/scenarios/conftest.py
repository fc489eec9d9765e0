"""Golden plan scenarios: ``NNN-name/`` folders run against the in-process reference server,
once per dialect of the server (``spec`` and ``mashery``, SUPPLEMENT §10).

Each folder holds ``seed.yaml`` (raw API requests that build the live state, as if someone
had applied a configuration by hand), ``manifests/*.yaml``, optionally ``options.yaml``
(``prune``, ``targets``, ``ignores``, ``max_deletes``, ``env``, ``object_responses``) and the
expected plans of each dialect: ``expected.txt`` / ``expected.json`` against a ``spec`` server,
``expected.mashery.txt`` / ``expected.mashery.json`` against a ``mashery`` one (no ``.json``
where planning fails: the ``.txt`` then holds the error). Seeds are written once, in ``spec``
shapes; ``scenario_harness.to_dialect`` rewrites them for a ``mashery`` server (enum
vocabularies, role permissions as whole collections). The client detects the dialect itself,
so each JSON plan names the dialect and why. ``test_dialect_parity.py`` checks that both
dialects' plans change the same objects.

Rewrite the expected files with ``pytest tests/scenarios --update-goldens`` (or
``APIMCTL_UPDATE_GOLDENS=1``) and review the diff before committing: against the ``spec``
files, a ``mashery`` file may differ only by the dialect line, the ``mashery`` vocabulary and
the dialect's defaults (an endpoint's ``returnedHeaders``, error messages' ``detailHeader``).
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    flag = bool(request.config.getoption("--update-goldens"))
    return flag or os.environ.get("APIMCTL_UPDATE_GOLDENS") == "1"
