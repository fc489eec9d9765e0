"""What the offline checks of the manifests look at and report (pure, no registry).

A kind's own checks (``KindOps.check``: an endpoint's routes and authentication, a plan's
entitled methods, a maintenance window) read the objects the manifests declare
(:class:`Declaration`, by kind name in :class:`Declarations`) and give :class:`Finding`
values: where, what, how bad, and for a duplicate the other places it is at. The manifests
layer locates them in the files; :mod:`apimctl.kinds.references.checks` gives the same values
for references.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

JsonPath = tuple[str | int, ...]


class Declaration(Protocol):
    """One object the manifests declare (:class:`apimctl.kinds.references.checks.Declared`):
    where it is, its entry, its name, its parent's key and entry."""

    @property
    def path(self) -> JsonPath: ...

    @property
    def entry(self) -> Any: ...

    @property
    def name(self) -> str | None: ...

    @property
    def parent_key(self) -> str | None: ...

    @property
    def parent(self) -> Mapping[str, Any] | None: ...


@dataclass(frozen=True)
class Declarations:
    """The declared objects whose entry is a mapping, by kind name, and the manifest
    document's ``settings`` (``dialect``: what the target is said to be)."""

    by_kind: Mapping[str, Sequence[Declaration]]
    settings: Mapping[str, Any]

    def of(self, kind: str) -> Sequence[Declaration]:
        return self.by_kind.get(kind, ())


@dataclass(frozen=True)
class Finding:
    """A problem an offline check found: where, what, and how bad; ``also``: the other places
    holding the same thing, for a duplicate (the message then says where they are)."""

    path: JsonPath
    message: str
    severity: str = "error"
    also: tuple[JsonPath, ...] = ()


def duplicates(seen: Mapping[Any, Sequence[JsonPath]],
               describe: Callable[[Any], str]) -> Iterator[Finding]:
    """A finding at every place of each key ``seen`` at more than one, naming the others."""
    for key, paths in seen.items():
        if len(paths) < 2:
            continue
        for path in paths:
            yield Finding(path, describe(key), also=tuple(p for p in paths if p != path))


def identity(entry: Any, field: str) -> str | None:
    """An entry's identity: the field's value, or the entry itself for string shorthands."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping):
        value = entry.get(field)
        return value if isinstance(value, str) else None
    return None


def strings(value: Any) -> Iterator[tuple[int, str]]:
    """``(index, item)`` of the string items of a list (nothing for anything else)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield index, item


def string(obj: Mapping[str, Any], key: str) -> str | None:
    """``obj[key]`` when it is a string."""
    value = obj.get(key)
    return value if isinstance(value, str) else None
