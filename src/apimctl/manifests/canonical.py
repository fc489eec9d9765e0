"""Shorthand expansion: the canonical form of a valid configuration (``Manifest.doc``).

Called by the pipeline as the last step, only when there are no errors. A top-level entry
written as its identity (roles, domains as names) becomes ``{identity: ...}``; then each
declared object's kind expands its own shorthands (``Shorthands.expand``: a plan's entitled
endpoints, given the names of what the manifests declare). Nothing else is added: defaults
are not filled in here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Shorthands
from apimctl.kinds.findings import identity


def expand(doc: dict[str, Any]) -> dict[str, Any]:
    """Expand the shorthands of ``doc`` in place and return it."""
    for kind in kinds.TOP_LEVEL:  # a top-level entry written as its identity (roles, domains)
        if isinstance(doc.get(kind.manifest_key), list):
            doc[kind.manifest_key] = [{kind.identity: e} if isinstance(e, str) else e
                                      for e in doc[kind.manifest_key]]
    declared = list(_entries(doc))
    names: dict[str, dict[str, list[str]]] = {}
    for kind, entry in declared:
        for child in kinds.children_of(kind):  # by parent name: the last of a repeated name
            names.setdefault(child.name, {})[entry[kind.identity]] = [
                name for e in entry.get(child.manifest_key, [])
                if (name := identity(e, child.identity)) is not None]
    for kind, entry in declared:
        shorthands = kinds.capability(kind, Shorthands)
        if shorthands is not None:
            shorthands.expand(entry, names)
    return doc


def _entries(doc: dict[str, Any]) -> Iterator[tuple[Kind, dict[str, Any]]]:
    """``(kind, entry)`` of every object ``doc`` declares (a mapping), parents first."""
    stack = [(kind, entry) for kind in reversed(kinds.TOP_LEVEL)
             for entry in reversed(doc.get(kind.manifest_key, []))]
    while stack:
        kind, entry = stack.pop()
        if not isinstance(entry, dict):
            continue
        yield kind, entry
        for child in reversed(kinds.children_of(kind)):
            stack.extend((child, e) for e in reversed(entry.get(child.manifest_key, [])))
