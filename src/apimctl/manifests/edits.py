"""Edited manifest files written all or none: ``promote``, ``promote --copy`` and ``drift
--adopt`` compute every file's new text first (an :class:`Edit` keeps the bytes the file held
when read), then :func:`write_edits` refuses when any file changed since, and swaps each file
for its new text atomically (a ``.NAME.partial`` beside it, then a rename).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from apimctl.errors import ApimctlError


@dataclass
class Edit:
    """One file to write: its path, the bytes it held when read, its new text."""

    path: Path
    before: bytes
    text: str

    @property
    def changes(self) -> bool:
        return self.text.encode("utf-8") != self.before


def write_edits(edits: Sequence[Edit], command: str, what: str = "the edited files") -> list[str]:
    """Write every edit that changes its file, refusing (nothing written) when a file changed
    since ``command`` read it; the paths written. ``what`` names the edits in an error."""
    for edit in edits:
        try:
            now = edit.path.read_bytes()
        except OSError:
            now = b""
        if now != edit.before:
            raise ApimctlError(f"{edit.path} was edited since {command} read it: nothing written; "
                               f"run {command} again")
    written: list[str] = []
    partials = []
    try:
        for edit in edits:
            if not edit.changes:
                continue
            partial = edit.path.with_name(f".{edit.path.name}.partial")
            partial.write_bytes(edit.text.encode("utf-8"))
            partials.append((partial, edit.path))
        for partial, path in partials:
            partial.replace(path)
            written.append(str(path))
    except OSError as exc:
        for partial, _ in partials:
            partial.unlink(missing_ok=True)
        raise ApimctlError(f"cannot write {what}: {exc.strerror or exc}") from None
    return written
