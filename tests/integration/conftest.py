"""Fixtures of the integration suites.

``dialect`` runs a module's tests once against ``apimctl serve`` and once against
``apimctl serve --dialect mashery`` (spec/SUPPLEMENT.md §10): the reconciler must behave the
same against both, with the same manifests. It is module-scoped so that a module's shared
server (started once per dialect) can depend on it; ``dialect_options`` are the matching
``serve`` options.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .apply_support import Server

DIALECTS = ("spec", "mashery")
AREAS = 64  # the several-areas modules' areas on their shared server, all modules together


@pytest.fixture(scope="module", params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def dialect_options(dialect: str) -> tuple[str, ...]:
    """The ``apimctl serve`` options of the dialect (none for ``spec``, the default)."""
    return () if dialect == "spec" else ("--dialect", dialect)


@pytest.fixture(scope="session")
def areas_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, ...], Server]]:
    """One ``apimctl serve`` per dialect for the several-areas modules (each test takes areas
    of its own with ``Server.fresh_token``), started when first asked for, stopped at the end:
    a server started per module costs seconds on a busy machine."""
    started: dict[tuple[str, ...], Server] = {}
    yield started
    for running in started.values():
        running.stop()


@pytest.fixture(scope="module")
def areas_server(areas_servers: dict[tuple[str, ...], Server], dialect_options: tuple[str, ...],
                 tmp_path_factory: pytest.TempPathFactory) -> Server:
    """The shared several-areas server of the module's dialect (:func:`areas_servers`)."""
    if dialect_options not in areas_servers:
        folder = tmp_path_factory.mktemp("areas-server")
        areas_servers[dialect_options] = Server(folder, dialect_options, areas=AREAS).start()
    return areas_servers[dialect_options]
