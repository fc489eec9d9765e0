#!/usr/bin/env python3
"""The top-level ``schemas/`` directory, written from the package's copy.

``src/apimctl/schemas/`` is the source: the package ships it and apimctl reads it
(``apimctl validate``, saved plans). ``schemas/`` at the top holds the same files for editors,
the docs and the URLs a user pins (``.../vX.Y.Z/schemas/manifest.schema.json``): real files,
not links, since some checkouts and editors do not follow links. This script writes them, or
with ``--check`` lists those that differ (exit 1)::

    python3 .ci/schemas.py            # after changing a schema under src/apimctl/schemas/
    python3 .ci/schemas.py --check    # CI and tests/unit/schemas/test_schemas.py

A schema made from another one (``openapi-extensions.schema.json``, from the manifest
schema) is written into the package first, by its own maker; this script only copies.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = Path("src/apimctl/schemas")
TOP_LEVEL = Path("schemas")
PATTERN = "*.json"


def differences(root: Path = ROOT) -> list[str]:
    """Each top-level file that is not the package's copy: missing, different, a link, or
    left over from a schema the package no longer ships."""
    source, copy = root / PACKAGED, root / TOP_LEVEL
    out: list[str] = []
    for path in sorted(source.glob(PATTERN)):
        target = copy / path.name
        if target.is_symlink():
            out.append(f"{TOP_LEVEL / path.name}: a link (write a copy)")
        elif not target.is_file():
            out.append(f"{TOP_LEVEL / path.name}: missing")
        elif target.read_bytes() != path.read_bytes():
            out.append(f"{TOP_LEVEL / path.name}: differs from {PACKAGED / path.name}")
    shipped = {p.name for p in source.glob(PATTERN)}
    out += [f"{TOP_LEVEL / p.name}: not in {PACKAGED}" for p in sorted(copy.glob(PATTERN))
            if p.name not in shipped]
    return out


def write(root: Path = ROOT) -> list[Path]:
    """Write the top-level copies; return the files written or removed."""
    source, copy = root / PACKAGED, root / TOP_LEVEL
    copy.mkdir(exist_ok=True)
    changed: list[Path] = []
    for path in sorted(source.glob(PATTERN)):
        target = copy / path.name
        data = path.read_bytes()
        if target.is_symlink() or not target.is_file() or target.read_bytes() != data:
            target.unlink(missing_ok=True)
            target.write_bytes(data)
            changed.append(target)
    shipped = {p.name for p in source.glob(PATTERN)}
    for stale in sorted(copy.glob(PATTERN)):
        if stale.name not in shipped:
            stale.unlink()
            changed.append(stale)
    return changed


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        found = differences()
        for line in found:
            print(line, file=sys.stderr)
        if found:
            print("schemas: run python3 .ci/schemas.py to write them", file=sys.stderr)
        return 1 if found else 0
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    for path in write():
        print(f"schemas: {'wrote' if path.exists() else 'removed'} {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
