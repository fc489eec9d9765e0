"""Fixtures of the integration suites.

``dialect`` runs a module's tests once against ``apimctl serve`` and once against
``apimctl serve --dialect mashery`` (spec/SUPPLEMENT.md §10): the reconciler must behave the
same against both, with the same manifests. It is module-scoped so that a module's shared
server (started once per dialect) can depend on it; ``dialect_options`` are the matching
``serve`` options.

Every test runs in its own temporary directory: what a command writes next to where it runs
(an apply's journal in ``.apimctl/runs``, the embedded server's ``.apimctl/local.db``) lands
there, never in the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DIALECTS = ("spec", "mashery")


@pytest.fixture(autouse=True)
def _runs_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module", params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def dialect_options(dialect: str) -> tuple[str, ...]:
    """The ``apimctl serve`` options of the dialect (none for ``spec``, the default)."""
    return () if dialect == "spec" else ("--dialect", dialect)
