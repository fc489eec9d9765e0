"""No import cycle inside ``kinds/``, ``planning/`` or ``state/``.

Every import counts (grimp's graph): at module level, inside a function and under
``TYPE_CHECKING``. A submodule importing its own package (``from apimctl.kinds import X``
inside ``kinds/``) is an import of the package's ``__init__`` and counts too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import grimp
import pytest

CHECKED = ("apimctl.kinds", "apimctl.planning", "apimctl.state")

# Cycles that exist today, by package, each as the modules that import one another, to be
# broken and taken off this list (a listed cycle that is gone fails the test). ``kinds/``
# has none and may get none.
ALLOWED: Mapping[str, frozenset[frozenset[str]]] = {
    "apimctl.kinds": frozenset(),
    "apimctl.planning": frozenset(),
    # live asks normal_batches for the normal forms, which imports live's values back
    "apimctl.state": frozenset({
        frozenset({"apimctl.state.live", "apimctl.state.normal_batches"}),
    }),
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("apimctl", cache_dir=None)


def _inside(graph: grimp.ImportGraph, package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of ``package`` it imports."""
    mods = {m for m in graph.modules if m == package or m.startswith(package + ".")}
    return {m: graph.find_modules_directly_imported_by(m) & mods for m in mods}


def cycles(edges: Mapping[str, Iterable[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), and
    the modules that import themselves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.add(frozenset(component))
    return found


def _shown(component: frozenset[str], edges: Mapping[str, Iterable[str]]) -> str:
    lines = [f"    {m} -> {i}" for m in sorted(component) for i in sorted(edges[m]) if i in component]
    return "\n".join(lines)


@pytest.mark.parametrize("package", CHECKED)
def test_no_import_cycle_but_the_listed_ones(graph: grimp.ImportGraph, package: str) -> None:
    edges = _inside(graph, package)
    new = cycles(edges) - ALLOWED[package]
    assert not new, f"import cycles inside {package}:\n" + "\n\n".join(_shown(c, edges) for c in new)


@pytest.mark.parametrize("package", CHECKED)
def test_broken_cycles_leave_the_allow_list(graph: grimp.ImportGraph, package: str) -> None:
    gone = ALLOWED[package] - cycles(_inside(graph, package))
    assert not gone, f"these cycles are broken now: remove them from ALLOWED: {sorted(map(sorted, gone))}"


def test_the_kinds_package_allows_no_cycle() -> None:
    assert not ALLOWED["apimctl.kinds"]


def test_the_search_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert cycles(edges) == {frozenset({"a", "b", "c"}), frozenset({"e"})}
    assert cycles({"a": {"b"}, "b": set()}) == set()
