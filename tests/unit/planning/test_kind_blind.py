"""Planning, render's style and export's field order ask the kinds rather than test which kind
they hold: none of their modules imports a kind's module (``apimctl.kinds.endpoint``) or names
one kind (``ENDPOINT``, ``kinds.SERVICE``); the registry (``KINDS``, ``get``, ``Kind``) and its
generic helpers are all they use. And no module of ``planning/`` imports another that imports
it back, not even for type checking."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import grimp
import pytest

from apimctl import kinds
from apimctl.kinds import Kind

SRC = Path(kinds.__file__).resolve().parents[1]
CHECKED = ("planning", "render/style.py", "export/fields.py")
# The kind modules' shared layers (not one kind's rules).
GENERIC = frozenset({"apimctl.kinds", "apimctl.kinds.base", "apimctl.kinds.ops",
                     "apimctl.kinds.references", "apimctl.kinds.reference_checks",
                     "apimctl.kinds.dialects"})
# The caller impact rules tell what a change of a plan's entitlements, limits or keys, of a
# service or of an endpoint does to the keys on the plans (SUPPLEMENT §11): facts across
# those kinds, which still name them through the registry, with the number of names each
# holds. A count may only shrink (a module named here that is clean fails the test).
ALLOWED: dict[str, int] = {
    "planning/impact_deletes.py": 23,
    "planning/impact_rules.py": 5,
    "planning/impact_world.py": 1,
}
KIND_NAMES = frozenset(n for n, v in vars(kinds).items() if isinstance(v, Kind))


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("apimctl", cache_dir=None)


def _checked() -> list[Path]:
    out: list[Path] = []
    for part in CHECKED:
        path = SRC / part
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


def named_kinds(path: Path) -> list[str]:
    """``line: name`` of every specific kind ``path`` imports or names through the registry."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "apimctl.kinds":
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name in KIND_NAMES]
        elif (isinstance(node, ast.Attribute) and node.attr in KIND_NAMES
              and isinstance(node.value, ast.Name) and node.value.id == "kinds"):
            found.append(f"{node.lineno}: kinds.{node.attr}")
    return found


def test_no_checked_module_imports_a_kind_module(graph: grimp.ImportGraph) -> None:
    imports = {_module(p): sorted(m for m in graph.find_modules_directly_imported_by(_module(p))
                                  if m.startswith("apimctl.kinds.") and m not in GENERIC)
               for p in _checked()}
    assert {m: i for m, i in imports.items() if i} == {}


def test_no_checked_module_names_a_kind() -> None:
    found = {p.relative_to(SRC).as_posix(): named_kinds(p) for p in _checked()}
    unexpected = {m: f for m, f in found.items() if f and m not in ALLOWED}
    assert unexpected == {}
    grown = {m: len(found.get(m, [])) for m, most in ALLOWED.items() if len(found.get(m, [])) > most}
    assert grown == {}
    clean = [m for m in ALLOWED if len(found.get(m, [])) < ALLOWED[m]]
    assert clean == [], "lower (or drop) their counts in ALLOWED"


def test_the_scan_sees_both_forms(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("from apimctl import kinds\nfrom apimctl.kinds import ENDPOINT, KINDS, Kind\n"
                      "x = kinds.SERVICE.name\ny = kinds.get\n")
    assert named_kinds(sample) == ["2: ENDPOINT", "3: kinds.SERVICE"]


def test_no_import_cycle_inside_planning(graph: grimp.ImportGraph) -> None:
    modules = {m for m in graph.modules if m.startswith("apimctl.planning.")}
    edges = {m: {i for i in graph.find_modules_directly_imported_by(m) if i in modules}
             for m in modules}
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
