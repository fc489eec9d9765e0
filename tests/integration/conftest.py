"""Fixtures of the integration suites.

``dialect`` runs a module's tests once against ``apimctl serve`` and once against
``apimctl serve --dialect mashery`` (spec/SUPPLEMENT.md §10): the reconciler must behave the
same against both, with the same manifests. It is module-scoped so that a module's shared
server (started once per dialect) can depend on it; ``dialect_options`` are the matching
``serve`` options.
"""

from __future__ import annotations

import pytest

DIALECTS = ("spec", "mashery")


@pytest.fixture(scope="module", params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def dialect_options(dialect: str) -> tuple[str, ...]:
    """The ``apimctl serve`` options of the dialect (none for ``spec``, the default)."""
    return () if dialect == "spec" else ("--dialect", dialect)
