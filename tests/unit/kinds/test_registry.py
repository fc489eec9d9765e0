"""STYLE §3 "Register each kind once": kind names and manifest keys are data of ``apimctl.kinds``.

A module outside ``kinds/`` (and the reference server and the CLI, which speak the API and the
command line rather than the registry) that writes ``"endpoint"``, ``"services"``,
``"endpoint:..."`` or ``"services.…"`` as a string literal hard-codes a kind: it must take the
name from the registry (``kinds.ENDPOINT.name``, ``kinds.SERVICE.manifest_key``) or, better, be
generic code driven by the :class:`~apimctl.kinds.Kind` data. Docstrings are prose and exempt.
"""

from __future__ import annotations

import ast
from pathlib import Path

from apimctl import kinds

SRC = Path(kinds.__file__).resolve().parents[1]
EXEMPT_PACKAGES = ("kinds", "server", "cli")

# Modules not cleaned yet, with the number of literals each still holds: none. A module that
# writes a kind literal fails the test; were one ever allowed here, a test fails once it is
# clean and no count may grow.
ALLOWED: dict[str, int] = {}


def _words() -> set[str]:
    words = set()
    for kind in kinds.KINDS:
        words |= {kind.name, kind.manifest_key}
    return words


def _is_kind_literal(value: str, words: set[str]) -> bool:
    return value in words or any(value.startswith((w + ".", w + ":")) for w in words)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def kind_literals() -> dict[str, list[str]]:
    """Module (relative to ``src/apimctl``) -> ``line: literal`` of every kind literal."""
    words = _words()
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.split("/", 1)[0] in EXEMPT_PACKAGES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docs and _is_kind_literal(node.value, words)):
                found.setdefault(rel, []).append(f"{node.lineno}: {node.value!r}")
    return found


def test_kind_names_are_not_string_literals_outside_the_registry() -> None:
    found = kind_literals()
    unexpected = {m: hits for m, hits in found.items() if m not in ALLOWED}
    assert not unexpected, (
        "kind names or manifest keys written as literals (take them from apimctl.kinds):\n"
        + "\n".join(f"  {m}:{hit}" for m, hits in unexpected.items() for hit in hits))
    grown = {m: len(found[m]) for m in found if m in ALLOWED and len(found[m]) > ALLOWED[m]}
    assert not grown, f"allow-listed modules with more literals than allowed: {grown}"


def test_clean_modules_leave_the_allow_list() -> None:
    found = kind_literals()
    clean = sorted(m for m in ALLOWED if m not in found)
    assert not clean, f"these modules are clean now: remove them from ALLOWED: {clean}"


def test_the_scan_sees_every_form() -> None:
    words = _words()
    assert {"endpoint", "endpoints", "scheduledMaintenanceEvents"} <= words
    for literal in ("endpoint", "services", "endpoint:Weather/Forecast", "services.endpoints"):
        assert _is_kind_literal(literal, words)
    for literal in ("endpointId", "service_name", "Default", "methods"):
        assert not _is_kind_literal(literal, words)
