"""The JSON schemas: the top-level ``schemas/`` is the package's copy (written by
``.ci/schemas.py``), and every list of kinds a schema holds is the kinds apimctl plans."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from apimctl import kinds

ROOT = Path(__file__).resolve().parents[3]
PACKAGED = ROOT / "src" / "apimctl" / "schemas"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_schemas", ROOT / ".ci" / "schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ci_schemas", module)
    spec.loader.exec_module(module)
    return module


maker = _maker()


def test_the_top_level_schemas_are_the_packaged_ones() -> None:
    found = maker.differences(ROOT)
    assert found == [], ("schemas/ is written from src/apimctl/schemas/ (edit the packaged file, "
                         "then run python3 .ci/schemas.py): " + "; ".join(found))


def test_the_maker_tells_and_writes_what_differs(tmp_path: Path) -> None:
    source, copy = tmp_path / maker.PACKAGED, tmp_path / maker.TOP_LEVEL
    source.mkdir(parents=True)
    copy.mkdir()
    (source / "a.schema.json").write_text('{"title": "a"}\n')
    (source / "b.schema.json").write_text('{"title": "b"}\n')
    (copy / "a.schema.json").write_text('{"title": "old"}\n')
    (copy / "gone.schema.json").write_text("{}\n")
    assert maker.differences(tmp_path) == [
        "schemas/a.schema.json: differs from src/apimctl/schemas/a.schema.json",
        "schemas/b.schema.json: missing",
        "schemas/gone.schema.json: not in src/apimctl/schemas",
    ]
    assert {p.name for p in maker.write(tmp_path)} == {"a.schema.json", "b.schema.json", "gone.schema.json"}
    assert maker.differences(tmp_path) == []
    assert sorted(p.name for p in copy.iterdir()) == ["a.schema.json", "b.schema.json"]


def _enums(node: Any, where: str) -> Iterator[tuple[str, list[Any]]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "enum" and isinstance(value, list):
                yield where, value
            yield from _enums(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _enums(value, f"{where}/{i}")


def test_every_list_of_kinds_in_a_schema_is_the_kinds_planned() -> None:
    """A kind added to ``KINDS`` is added to each schema that lists kinds (the plan schema's
    ``$defs/kind``), in the same order. Read-only kinds are never planned: no step,
    fingerprint or unmanaged entry names one."""
    names = {k.name for k in kinds.KINDS}
    planned = [k.name for k in kinds.KINDS if not k.read_only]
    lists = [(f"{path.name}#{where}", values) for path in sorted(PACKAGED.glob("*.json"))
             for where, values in _enums(json.loads(path.read_text()), "")
             if len(names.intersection(v for v in values if isinstance(v, str))) > 1]
    assert "plan.schema.json#/$defs/kind" in [where for where, _ in lists]
    for where, values in lists:
        assert values == planned, f"{where}: {values} (KINDS plans {planned})"
