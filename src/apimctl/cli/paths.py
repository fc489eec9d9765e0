"""The manifest directories a command reads: directly inside each, or with ``--recursive``
every subdirectory too; a warning for manifests in a subdirectory that are left unread.

A directory PATH means the ``*.yaml``/``*.yml`` files directly in it (overlays often live
below the base). A subdirectory holding manifests that no PATH or ``--overlay`` names is
most often a mistake (a team's folder that is silently skipped): the commands say so on
stderr, and ``--recursive`` reads them all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from apimctl.manifests.documents import is_manifest_name

_MAX_DEPTH = 8


def _subdirectories(folder: Path, depth: int = 0) -> Iterator[Path]:
    """Every subdirectory below ``folder`` (not hidden, symbolic links not followed), depth first."""
    if depth >= _MAX_DEPTH:
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        yield path
        yield from _subdirectories(path, depth + 1)


def _manifest_count(folder: Path) -> int:
    try:
        return sum(1 for e in os.scandir(folder) if is_manifest_name(e.name) and e.is_file())
    except OSError:
        return 0


def _named(path: Path, named: Sequence[Path]) -> bool:
    """Whether ``path`` is, or is below, one of the directories named on the command line."""
    real = path.resolve()
    return any(real == n or n in real.parents for n in named)


def unread(paths: Sequence[str], overlays: Sequence[str]) -> list[tuple[Path, Path, int]]:
    """``(directory, subdirectory, files)`` for each subdirectory of a directory PATH that
    holds manifests no PATH or overlay names."""
    named = [Path(p).resolve() for p in (*paths, *overlays) if os.path.isdir(p)]
    found = []
    for arg in paths:
        folder = Path(arg)
        if not folder.is_dir():
            continue
        for sub in _subdirectories(folder):
            if any(sub.resolve() == n for n in named) or _named(sub, [n for n in named if n != folder.resolve()]):
                continue
            count = _manifest_count(sub)
            if count:
                found.append((folder, sub, count))
    return found


def recursive(paths: Sequence[str], overlays: Sequence[str]) -> tuple[str, ...]:
    """``paths`` with every subdirectory that holds manifests added after its directory
    (those of the overlays left out)."""
    skip = [Path(o).resolve() for o in overlays]
    out: list[str] = []
    for arg in paths:
        out.append(arg)
        if os.path.isdir(arg):
            out.extend(str(sub) for sub in _subdirectories(Path(arg))
                       if _manifest_count(sub) and not _named(sub, skip))
    return tuple(dict.fromkeys(out))


def unread_warnings(paths: Sequence[str], overlays: Sequence[str]) -> list[str]:
    """The warnings of :func:`unread`, one line each."""
    return [f"Warning: {sub} holds {count} manifest file{'s' if count != 1 else ''} that "
            f"{'are' if count != 1 else 'is'} not read (only the files directly in {folder} are): "
            f"add {sub} to the paths, or use --recursive" for folder, sub, count in unread(paths, overlays)]
