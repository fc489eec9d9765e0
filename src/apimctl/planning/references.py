"""Names one object uses to refer to others: renamed in live documents, and turned into
the addresses that order the plan's steps. Called by :mod:`apimctl.planning.steps` and
:mod:`apimctl.planning.order`; what a reference is comes from each kind's ``references``
(:mod:`apimctl.kinds.references`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.kinds import references as refs


def with_renamed_references(kind: str, doc: Mapping[str, Any], parent_key: str | None,
                            renames: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with the names it references replaced by their new names, for objects that the
    manifests rename (``previousNames``): a rename alone changes no reference. ``renames`` maps
    old addresses to new keys."""
    return refs.rename(kind, doc, parent_key, renames)


def references(kind: str, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` (manifest shape) refers to by name, domains excepted."""
    return refs.addresses(kind, doc, parent_key)
