"""The values manifest files are read into: files, documents, top-level items; the bounds.

Built by :mod:`apimctl.manifests.yaml_events` (one per file), read by the merge, overlay, schema
and pipeline stages of :mod:`apimctl.manifests`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.manifests.model import JsonPath, Position

LIST_KINDS = tuple(k.manifest_key for k in sorted(kinds.TOP_LEVEL, key=lambda k: k.manifest_rank))
TOP_LEVEL_KEYS = (*LIST_KINDS, "settings")
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 64
# Entries (list items and mapping keys) one file may hold. A 20 MB file of real manifests has
# under a million; the bound keeps a file of tiny entries (``[r,r,r,...]``) from taking
# gigabytes of memory and minutes of checking.
MAX_ENTRIES = 2_000_000
MANIFEST_SUFFIXES = (".yaml", ".yml")


@dataclass
class Item:
    """One object of a top-level list, with positions and references relative to itself."""

    kind: str
    file: str
    index: int  # index in its file's list of this kind (over all documents of the file)
    value: Any
    positions: dict[JsonPath, Position] = field(default_factory=dict)
    refs: dict[JsonPath, str] = field(default_factory=dict)
    # an unquoted ``${VAR}`` that took its YAML type (8080 -> integer): path -> substituted text,
    # so a field the schema types as string gets the text back (``version: ${VERSION}``)
    typed: dict[JsonPath, str] = field(default_factory=dict)
    # paths whose value an overlay wrote -> the path as written in that overlay file
    shown: dict[JsonPath, JsonPath] = field(default_factory=dict)

    def display(self, rel: JsonPath) -> JsonPath:
        """The full path of ``rel`` as the user wrote it in the file its position points into:
        the index in the item's own file, or the overlay file's indices for overlaid values."""
        if self.shown:
            placed = rel
            while placed and placed not in self.positions:
                placed = placed[:-1]
            over = self.shown.get(placed)
            if over is not None:
                return (*over, *rel[len(placed):])
        return (self.kind, self.index, *rel)


@dataclass
class Document:
    """One YAML document of a manifest file."""

    file: str
    position: Position
    root: dict[str, Any]  # every top-level key as written, for the shape check
    positions: dict[JsonPath, Position] = field(default_factory=dict)  # outside items
    refs: dict[JsonPath, str] = field(default_factory=dict)  # outside items
    items: dict[str, list[Item]] = field(default_factory=dict)


@dataclass
class SourceFile:
    """A manifest file: the name shown to the user and its path on disk."""

    display: str
    path: str
