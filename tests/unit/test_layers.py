"""The layers of STYLE §11, checked on the import statements of every module.

- the reference server imports nothing of the reconciler (only the shared error hierarchy
  and the platform constants);
- the reconciler reaches the server only through the CLI's two adapters (the embedded
  default in ``cli/target.py`` and ``cli/serve.py``), never from its core;
- the core never imports click: parsing belongs to ``apimctl.cli``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "apimctl"
SHARED = {"apimctl.errors", "apimctl.platform"}
SERVER_ADAPTERS = {"cli/target.py", "cli/serve.py"}


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


MODULES = sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py"))


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("server/")])
def test_server_imports_no_reconciler_module(module: str) -> None:
    own = {name for name in imports(SRC / module) if name.startswith("apimctl")}
    foreign = {n for n in own if not n.startswith("apimctl.server") and n not in SHARED
               and not any(n.startswith(s + ".") for s in SHARED) and n != "apimctl"}
    assert not foreign, f"{module} imports {sorted(foreign)}"


@pytest.mark.parametrize("module", [m for m in MODULES if not m.startswith("server/")])
def test_reconciler_reaches_the_server_only_through_the_cli_adapters(module: str) -> None:
    names = imports(SRC / module)
    if module not in SERVER_ADAPTERS:
        assert not {n for n in names if n.startswith("apimctl.server")}, module
    if not module.startswith(("cli/", "render/")):
        assert not {n for n in names if n == "click" or n.startswith("click.")}, module
