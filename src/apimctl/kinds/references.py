"""References between objects, for callers that hold a kind or its name (pure, no I/O).

The same API as :mod:`apimctl.kinds.reference_paths` (where the references are found, renamed
and resolved, on the :class:`Kind` itself), with the kind given as its entry or its name
(``"endpoint"``), looked up in :data:`~apimctl.kinds.BY_NAME`:

- :func:`refs_of` enumerates the references a document makes (:class:`Ref`: where the name
  is, the referenced kind and key);
- :func:`rename` rewrites them as the manifests rename objects (``previousNames``), and
  :func:`resolve` as a write body carries them; :func:`rewrite` is the setter both use;
- :func:`addresses` and :func:`hosts` are what planning orders steps by;
- :mod:`apimctl.kinds.reference_checks` checks them offline against the objects the
  manifests declare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from apimctl.kinds import BY_NAME
from apimctl.kinds import reference_paths as paths
from apimctl.kinds.base import Kind
from apimctl.kinds.reference_paths import (
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
    return kind if isinstance(kind, Kind) else BY_NAME[kind]


def refs_of(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None = None) -> list[Ref]:
    """The references ``doc`` makes (:func:`apimctl.kinds.reference_paths.refs_of`)."""
    return paths.refs_of(_kind(kind), doc, parent_key)


def rename(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None,
           renames: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with the names it references renamed (:func:`apimctl.kinds.reference_paths.rename`)."""
    return paths.rename(_kind(kind), doc, parent_key, renames)


def resolve(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None,
            id_of: Callable[[Ref], str | int | None]) -> dict[str, Any]:
    """``doc`` as a write body carries its references (:func:`apimctl.kinds.reference_paths.resolve`)."""
    return paths.resolve(_kind(kind), doc, parent_key, id_of)


def addresses(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` refers to by name, hosts excepted."""
    return paths.addresses(_kind(kind), doc, parent_key)


def hosts(kind: Kind | str, doc: Mapping[str, Any]) -> list[str]:
    """The host names ``doc`` refers to (:func:`apimctl.kinds.reference_paths.hosts`)."""
    return paths.hosts(_kind(kind), doc)
