#!/usr/bin/env python3
"""Every place that names apimctl's own release, written from the one source of the version.

The version lives only in ``src/apimctl/__init__.py`` (``__version__``; pyproject.toml reads it
from there). The docs, the examples, the action and the pre-commit hooks name it as pins a user
copies (``uses: apimctl/apimctl@vX.Y.Z``, ``rev: vX.Y.Z``, the export modeline's schema URL,
``pipx install apimctl==X.Y.Z``, the image tag ...). This script rewrites them all to the
version of the source, or with ``--check`` lists those that disagree (exit 1)::

    python3 .ci/pins.py            # after changing __version__: write every pin
    python3 .ci/pins.py --check    # CI and tests/unit/test_release.py: fail on a stale pin

CHANGELOG.md is left alone: it names the versions of the past on purpose.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION_FILE = Path("src/apimctl/__init__.py")
_VERSION = r"(\d+\.\d+\.\d+(?:[a-z]+\d+)?)"
_VERSION_LINE = re.compile(r'^__version__ = "' + _VERSION + '"$', re.MULTILINE)

# Each pattern holds the version as its only group.
PATTERNS = tuple(re.compile(p) for p in (
    r"apimctl/apimctl@v" + _VERSION,                    # the action
    r"\brev: v" + _VERSION,                             # pre-commit
    r"/apimctl/v" + _VERSION + r"/schemas/",            # the export modeline's schema URL
    r"ghcr\.io/apimctl/apimctl:" + _VERSION,            # the image
    r"\bapimctl==" + _VERSION,                          # pip, pipx, uv
    r"\bapimctl~=" + _VERSION,
    r"\binstalls apimctl " + _VERSION,                  # comments beside the action's pin
    r"a version \(" + _VERSION + r"\)",                 # the action's `version` input
    r"\bor `" + _VERSION + "`",
    r"\(`" + _VERSION + "`, or",
    r"`v" + _VERSION + "` below",
    r"the same tags \(`v" + _VERSION + r"`\)",
))

# The files users copy pins from (relative to the repository's root).
_GLOBS = ("README.md", "RELEASING.md", "action.yml", ".pre-commit-hooks.yaml", "docs/*.md",
          "examples/**/*.md", "examples/**/*.yml", "examples/**/*.yaml",
          "examples/**/.pre-commit-config.yaml", ".github/workflows/*.yml",
          "src/apimctl/templates/*", "src/apimctl/templates/workflows/*")  # apimctl init's


def source_version(root: Path = ROOT) -> str:
    """``__version__`` as written in ``src/apimctl/__init__.py``."""
    found = _VERSION_LINE.search((root / VERSION_FILE).read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{VERSION_FILE}: no line __version__ = \"X.Y.Z\"")
    return found.group(1)


def pinned_files(root: Path = ROOT) -> list[Path]:
    """The files that may hold pins, each once, in a stable order."""
    return sorted({p for glob in _GLOBS for p in root.glob(glob) if p.is_file()})


def stale_pins(root: Path = ROOT, version: str | None = None) -> Iterator[str]:
    """``path:line: pin`` for every pin that names another version than ``version``."""
    version = version or source_version(root)
    for path in pinned_files(root):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern in PATTERNS:
                for match in pattern.finditer(line):
                    if match.group(1) != version:
                        yield f"{path.relative_to(root)}:{number}: {match.group(0)}"


def write_pins(root: Path = ROOT, version: str | None = None) -> list[Path]:
    """Rewrite every pin to ``version`` (the source's by default); the files changed."""
    version = version or source_version(root)
    changed = []
    for path in pinned_files(root):
        text = path.read_text(encoding="utf-8")
        new = text
        for pattern in PATTERNS:
            new = pattern.sub(lambda m: _with_version(m, version), new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def _with_version(match: re.Match[str], version: str) -> str:
    start, end = match.span(1)
    whole = match.group(0)
    offset = match.start(0)
    return whole[:start - offset] + version + whole[end - offset:]


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        stale = list(stale_pins())
        for line in stale:
            print(f"{line}  (the source says {source_version()})", file=sys.stderr)
        if stale:
            print("pins: run python3 .ci/pins.py to write them", file=sys.stderr)
        return 1 if stale else 0
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    for path in write_pins():
        print(f"pins: wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
