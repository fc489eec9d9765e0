"""References between objects: the one home of how objects name each other (pure, no I/O).

What a reference is comes from each kind's ``references`` (:class:`~apimctl.kinds.Reference`);
everything done with them is here:

- :mod:`apimctl.kinds.references.paths`: where the references are found, renamed and
  resolved, on the :class:`Kind` itself (the kinds' operations use it: it reads no registry);
- this module: the same API with the kind given as its entry or its name (``"endpoint"``),
  looked up in :data:`~apimctl.kinds.BY_NAME`, for the stages (planning renames the live
  side's references as the manifests rename objects, and orders steps by the addresses
  referenced);
- :mod:`apimctl.kinds.references.checks`: the offline checks against the objects the
  manifests declare.

The API:

- :func:`refs_of` enumerates the references a document makes (:class:`Ref`: where the name
  is, the referenced kind and key);
- :func:`rename` rewrites them as the manifests rename objects (``previousNames``: a rename
  alone changes no reference), and :func:`resolve` as a write body carries them;
  :func:`rewrite` is the setter both use;
- :func:`addresses` and :func:`hosts` are what planning orders steps by.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# the registry is looked up when called: the kinds' modules import ``paths`` while the
# registry is being made
from apimctl import kinds as registry
from apimctl.kinds.base import Kind
from apimctl.kinds.references import paths
from apimctl.kinds.references.paths import (
    Merge,
    Path,
    Ref,
    covered,
    did_you_mean,
    host_part,
    parent_domains,
    rewrite,
)

__all__ = [
    "Merge", "Path", "Ref", "addresses", "covered", "did_you_mean", "host_part", "hosts",
    "parent_domains", "refs_of", "rename", "resolve", "rewrite",
]


def _kind(kind: Kind | str) -> Kind:
    return kind if isinstance(kind, Kind) else registry.BY_NAME[kind]


def refs_of(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None = None) -> list[Ref]:
    """The references ``doc`` makes (:func:`apimctl.kinds.references.paths.refs_of`)."""
    return paths.refs_of(_kind(kind), doc, parent_key)


def rename(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None,
           renames: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with the names it references renamed (:func:`apimctl.kinds.references.paths.rename`):
    ``renames`` maps old addresses to new keys."""
    return paths.rename(_kind(kind), doc, parent_key, renames)


def resolve(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None,
            id_of: Callable[[Ref], str | int | None]) -> dict[str, Any]:
    """``doc`` as a write body carries its references (:func:`apimctl.kinds.references.paths.resolve`)."""
    return paths.resolve(_kind(kind), doc, parent_key, id_of)


def addresses(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` (manifest shape) refers to by name, hosts excepted."""
    return paths.addresses(_kind(kind), doc, parent_key)


def hosts(kind: Kind | str, doc: Mapping[str, Any]) -> list[str]:
    """The host names ``doc`` refers to (:func:`apimctl.kinds.references.paths.hosts`)."""
    return paths.hosts(_kind(kind), doc)
