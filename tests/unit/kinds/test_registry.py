"""STYLE §3 "Register each kind once": kind names and manifest keys are data of ``apimctl.kinds``.

A module outside ``kinds/`` (and the reference server and the CLI, which speak the API and the
command line rather than the registry) that writes ``"endpoint"``, ``"services"``,
``"endpoint:..."`` or ``"services.…"`` as a string literal hard-codes a kind: it must take the
name from the registry (``kinds.ENDPOINT.name``, ``kinds.SERVICE.manifest_key``) or, better, be
generic code driven by the :class:`~apimctl.kinds.Kind` data. Docstrings are prose and exempt.

Nor does a module outside ``kinds/`` import a specific kind (an entry such as ``ENDPOINT``, a
value of one kind's module, the module itself; ``kinds.SERVICE`` counts too): a kind's module
is the only home of its rules (the second half of this file, with its allow-list).
"""

from __future__ import annotations

import ast
import functools
import importlib
import types
from pathlib import Path

from apimctl import kinds

SRC = Path(kinds.__file__).resolve().parents[1]
EXEMPT_PACKAGES = ("kinds", "server", "cli")

# Modules not cleaned yet, with the number of literals each still holds. A module that writes
# a kind literal fails the test; a test fails once one here is clean, and no count may grow.
# replay/ names the kinds that decide each step of the traffic manager (route: endpoint and
# service; entitlement and limits: plan and package; maintenance: its event) and the server's
# names of the documents it seeds; the kinds do not say which traffic step reads them yet.
ALLOWED: dict[str, int] = {
    "replay/compare.py": 6,
    "replay/config.py": 9,
    "replay/decide.py": 1,
}


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


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


@functools.cache
def kind_literals() -> dict[str, list[str]]:
    """Module (relative to ``src/apimctl``) -> ``line: literal`` of every kind literal."""
    words = _words()
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.split("/", 1)[0] in EXEMPT_PACKAGES:
            continue
        tree = _tree(path)
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


# --- imports of specific kinds ----------------------------------------------------------------
#
# Outside ``kinds/``, no module imports a specific kind: neither an entry (``from apimctl.kinds
# import ENDPOINT``, ``kinds.SERVICE``), nor a value of one kind re-exported by the registry
# (``kinds.CORS_DEFAULTS``), nor a kind's module (``apimctl.kinds.endpoint``). Stages are
# generic code over ``KINDS`` and ask the kind's data and operations; what one kind needs
# lives in its module.

KIND_MODULES: frozenset[str] = frozenset(type(k.ops).__module__ for k in kinds.KINDS)
_GENERIC_MODULES = ("apimctl.platform", "apimctl.kinds.base", "apimctl.kinds.ops",
                    "apimctl.kinds.protocol")

# Modules that import specific kinds, with how many such imports and uses each holds (the
# count the scan gives). A module that grows fails, and one that is clean fails until it
# leaves this list; nothing may be added.
#
# Only openapi/ is left, and by nature: an OpenAPI document is one service, its path items
# are that service's endpoints (operations: their methods) and its error responses come from
# the endpoints' error sets. Importing a document makes a service entry with its endpoints
# (mapping.py, manifest_file.py: the file it is written to or updated in), in the form export
# writes it (canonical.py); export --openapi describes the area's services (area.py,
# describe.py); the x-apimctl-* extensions are the service's and the endpoint's schemas
# (extensions.py); lint --openapi-spec sets a document's paths beside the endpoints that
# route them (coverage.py). Those modules map these kinds to OpenAPI's words and no other
# kind, so the mapping is theirs rather than a rule of any one kind's module.
ALLOWED_IMPORTS: dict[str, int] = {
    "openapi/area.py": 2,
    "openapi/canonical.py": 7,
    "openapi/coverage.py": 2,
    "openapi/describe.py": 5,
    "openapi/extensions.py": 3,
    "openapi/manifest_file.py": 4,
    "openapi/mapping.py": 2,
}


def _specific_names() -> frozenset[str]:
    """Names of ``apimctl.kinds`` that stand for one kind: its entries and the values a kind's
    module defines (generic values the registry re-exports, such as ``ERROR_CATALOG``, are a
    platform fact or shared code, not a kind's)."""
    generic = [importlib.import_module(m) for m in _GENERIC_MODULES]
    modules = [importlib.import_module(m) for m in sorted(KIND_MODULES)]
    out = set()
    for name, value in vars(kinds).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if (isinstance(value, kinds.Kind) and value in kinds.KINDS) or (any(vars(m).get(name) is value for m in modules)
              and not any(vars(m).get(name) is value for m in generic)):
            out.add(name)
    return frozenset(out)


def _kind_module(name: str) -> bool:
    return name in KIND_MODULES


def kind_imports(tree: ast.AST, specific: frozenset[str]) -> list[str]:
    """``line: what`` of every import of a specific kind or kind module in ``tree``, and of
    every use of a specific name through the registry module (``kinds.SERVICE``)."""
    found: list[str] = []
    registry_aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _kind_module(alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
                elif alias.name == kinds.__name__ and alias.asname:
                    registry_aliases.add(alias.asname)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if _kind_module(node.module) or (node.module == kinds.__name__ and (
                        alias.name in specific or _kind_module(f"{node.module}.{alias.name}"))):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                elif f"{node.module}.{alias.name}" == kinds.__name__:
                    registry_aliases.add(alias.asname or alias.name)
    names = specific | _MODULE_NAMES
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in names:
            if isinstance(node.value, ast.Name) and node.value.id in registry_aliases:
                found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
            elif isinstance(node.value, ast.Attribute) and ast.unparse(node.value) == kinds.__name__:
                found.append(f"{node.lineno}: {kinds.__name__}.{node.attr}")
    return found


_MODULE_NAMES = frozenset(m.rsplit(".", 1)[1] for m in KIND_MODULES)


@functools.cache
def all_kind_imports() -> dict[str, list[str]]:
    """Module (relative to ``src/apimctl``) -> its imports of specific kinds, outside ``kinds/``."""
    specific = _specific_names()
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("kinds/"):
            continue
        hits = kind_imports(_tree(path), specific)
        if hits:
            found[rel] = hits
    return found


def test_no_module_imports_a_specific_kind_outside_the_registry() -> None:
    found = all_kind_imports()
    unexpected = {m: hits for m, hits in found.items() if m not in ALLOWED_IMPORTS}
    assert not unexpected, (
        "specific kinds imported outside kinds/ (drive the code by the Kind's data and hooks):\n"
        + "\n".join(f"  {m}:{hit}" for m, hits in unexpected.items() for hit in hits))
    grown = {m: len(found[m]) for m in found if m in ALLOWED_IMPORTS and len(found[m]) > ALLOWED_IMPORTS[m]}
    assert not grown, f"allow-listed modules importing more kinds than allowed: {grown}"


def test_modules_that_import_no_kind_leave_the_allow_list() -> None:
    found = all_kind_imports()
    clean = sorted(m for m in ALLOWED_IMPORTS if m not in found)
    assert not clean, f"these modules import no specific kind now: remove them from ALLOWED_IMPORTS: {clean}"


def test_the_import_scan_sees_every_form() -> None:
    specific = _specific_names()
    assert {"ENDPOINT", "SERVICE", "CORS_DEFAULTS"} <= specific
    assert not {"KINDS", "BY_NAME", "Kind", "ERROR_CATALOG", "NESTED_COMPUTED_FIELDS", "get"} & specific
    source = """
from apimctl import kinds
from apimctl import kinds as k
import apimctl.kinds as reg
import apimctl.kinds.endpoint
from apimctl.kinds import ENDPOINT, KINDS, service
from apimctl.kinds.role import LEASE_NAME
from apimctl.kinds.dialects import SPEC
a = kinds.SERVICE.name, k.PLAN, reg.CORS_DEFAULTS, apimctl.kinds.ROLE, kinds.KINDS, kinds.plan
"""
    hits = [h.split(": ", 1)[1] for h in kind_imports(ast.parse(source), specific)]
    assert sorted(hits) == sorted([
        "import apimctl.kinds.endpoint", "from apimctl.kinds import ENDPOINT",
        "from apimctl.kinds import service", "from apimctl.kinds.role import LEASE_NAME",
        "kinds.SERVICE", "k.PLAN", "reg.CORS_DEFAULTS", "apimctl.kinds.ROLE", "kinds.plan",
    ])
