"""No import cycle inside ``kinds/``, ``planning/`` or ``state/``.

Every import counts (grimp's graph): at module level, inside a function and under
``TYPE_CHECKING``. A submodule importing its own package (``from apimctl.kinds import X``
inside ``kinds/``) is an import of the package's ``__init__`` and counts too.
"""

from __future__ import annotations

import graphlib
from collections.abc import Iterable, Mapping

import grimp
import pytest

CHECKED = ("apimctl.kinds", "apimctl.planning", "apimctl.state")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("apimctl", cache_dir=None)


def _inside(graph: grimp.ImportGraph, package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of ``package`` it imports."""
    mods = {m for m in graph.modules if m == package or m.startswith(package + ".")}
    return {m: graph.find_modules_directly_imported_by(m) & mods for m in mods}


def cycle(edges: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import cycle among ``edges`` (``a -> b -> a``), or ``None`` when there is none."""
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


@pytest.mark.parametrize("package", CHECKED)
def test_no_import_cycle(graph: grimp.ImportGraph, package: str) -> None:
    found = cycle(_inside(graph, package))
    assert found is None, f"an import cycle inside {package}: {' -> '.join(found)}"


def test_the_check_finds_cycles() -> None:
    found = cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert found is not None and set(found) == {"a", "b", "c"}
    assert cycle({"e": {"e"}}) is not None  # a module importing itself
    assert cycle({"a": {"b"}, "b": set()}) is None
