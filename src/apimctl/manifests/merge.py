"""Merging the documents of several files into one configuration.

Called by the pipeline for the base manifests and, separately, for the files of the overlay
directories. Top-level lists are concatenated in file order (duplicate identities are found
later by :mod:`~apimctl.manifests.checks`, which reports them at every location); ``settings``
is merged key by key, a key set in two places being an error at both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl.manifests.documents import LIST_KINDS, Document, Item
from apimctl.manifests.model import JsonPath, Position, Problems, format_path


@dataclass
class Merged:
    """Items of every top-level list, the merged ``settings``, and where keys were written."""

    items: dict[str, list[Item]] = field(default_factory=dict)
    keys: dict[str, Position] = field(default_factory=dict)  # first place a top-level key was written
    settings: dict[str, Any] | None = None
    settings_positions: dict[JsonPath, Position] = field(default_factory=dict)  # relative to settings
    settings_refs: dict[JsonPath, str] = field(default_factory=dict)

    def count(self) -> int:
        return sum(len(v) for v in self.items.values())


def merge_documents(docs: Sequence[Document], problems: Problems) -> Merged:
    """Concatenate the top-level lists of ``docs`` and merge their ``settings``."""
    merged = Merged()
    for doc in docs:
        for key in doc.root:
            if key in LIST_KINDS or key == "settings":
                merged.keys.setdefault(key, doc.positions.get((key,), doc.position))
        for kind in LIST_KINDS:
            if kind in doc.items:
                merged.items.setdefault(kind, []).extend(doc.items[kind])
            elif isinstance(doc.root.get(kind), list):
                merged.items.setdefault(kind, [])
        settings = doc.root.get("settings")
        if isinstance(settings, dict):
            _merge_settings(merged, doc, settings, problems)
    return merged


def _merge_settings(merged: Merged, doc: Document, settings: dict[str, Any], problems: Problems) -> None:
    if merged.settings is None:
        merged.settings = {}
    for key, value in settings.items():
        where = doc.positions.get(("settings", key), doc.position)
        if key in merged.settings:
            first = merged.settings_positions.get((key,))
            problems.error(where, format_path(("settings", key)), f"settings.{key} is also set at {first}")
            if first is not None:
                problems.error(first, format_path(("settings", key)), f"settings.{key} is also set at {where}")
            continue
        merged.settings[key] = value
        for path, pos in doc.positions.items():
            if path[:2] == ("settings", key):
                merged.settings_positions[path[1:]] = pos
        for path, raw in doc.refs.items():
            if path[:2] == ("settings", key):
                merged.settings_refs[path[1:]] = raw
