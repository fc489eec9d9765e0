"""Desired objects: what the manifests declare, one object per kind and identity.

Called by :mod:`apimctl.planning.build`; child kinds (endpoints, error sets, plans) become
objects of their own, each with the file position that declares it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.plans.model import address

Path = tuple[str | int, ...]

class Located(Protocol):
    """Where a manifest node was written (:class:`apimctl.manifests.model.Position`)."""

    @property
    def file(self) -> str: ...

    @property
    def line(self) -> int: ...

    @property
    def col(self) -> int: ...


class ManifestLike(Protocol):
    """What the planner reads of :class:`apimctl.manifests.Manifest`: the document, the
    references secrets are written as, where a path was written (``None``: unknown), and
    whether the manifests passed ``validate``'s checks (what they hold need not be checked
    again: the routes of :func:`~apimctl.kinds.dialects.validated_routes_by_method`)."""

    @property
    def doc(self) -> dict[str, Any]: ...

    @property
    def validated(self) -> bool: ...

    @property
    def secret_refs(self) -> dict[tuple[str | int, ...], str]: ...

    def where(self, path: Sequence[str | int]) -> Located | None: ...


_NONE: frozenset[str] = frozenset()


def _nowhere(path: Path) -> str:
    return ""


@dataclass(slots=True)
class Desired:
    """One object the manifests declare (``doc`` in manifest shape, without child kinds: the
    manifest's own entry when it has none, so change a copy). ``locate`` finds where the
    manifests declare it, when a message needs it."""

    kind: Kind
    key: str
    name: str
    doc: dict[str, Any]
    path: Path
    parent: Desired | None = None
    pin: str | None = None
    previous: tuple[str, ...] = ()
    declared: frozenset[str] = frozenset()
    locate: Callable[[Path], str] = _nowhere
    address: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.address = address(self.kind.name, self.key)

    @property
    def origin(self) -> str:
        """``file:line:col`` where the manifests declare it, when known."""
        return self.locate(self.path)

    def where(self) -> str:
        """``file:line:col: services[0].endpoints[1]`` (the path alone when not located)."""
        path = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in self.path)
        path = path.replace(".[", "[")
        origin = self.origin
        return f"{origin}: {path}" if origin else path

# --- desired objects -------------------------------------------------------------------------


def locator(manifest: ManifestLike) -> Callable[[Path], str]:
    """``file:line:col`` of a manifest path, when the manifest knows positions."""
    where = manifest.where

    def locate(path: Path) -> str:
        pos = where(path)
        if pos is None or not pos.file:
            return ""
        return f"{pos.file}:{pos.line}:{pos.col}"

    return locate


Desires = dict[str, list[Desired]]  # the desired objects of a manifest, by kind name


def desired_of(manifest: ManifestLike) -> Desires:
    """The objects ``manifest`` declares, each located where the manifests declare it."""
    return desired_objects(manifest.doc, locator(manifest))


def desired_objects(doc: Mapping[str, Any],
                     locate: Callable[[Path], str] = _nowhere) -> dict[str, list[Desired]]:
    found = _Found(defaultdict(list), locate)
    for kind in kinds.TOP_LEVEL:
        found.visit(kind, doc.get(kind.manifest_key), (kind.manifest_key,), None)
    return found.out


@dataclass
class _Found:
    """The desired objects found so far, by kind (a walk without a closure calling itself:
    that would be a reference cycle holding every object until a cyclic collection)."""

    out: dict[str, list[Desired]]
    locate: Callable[[Path], str]
    sets: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)  # one of each

    def visit(self, kind: Kind, items: Any, path: Path, parent: Desired | None) -> None:
        child_keys = {child.manifest_key: child for child in kinds.children_of(kind)}
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, Mapping):
                continue
            name = str(item.get(kind.identity, ""))
            own = item if type(item) is dict and not child_keys else {
                k: v for k, v in item.items() if k not in child_keys}
            declared = frozenset(k for k in child_keys if k in item) if child_keys else _NONE
            obj = Desired(
                kind=kind,
                key=kind.key_of(name, parent.key if parent else None),
                name=name,
                doc=own,
                path=(*path, i),
                parent=parent,
                pin=str(item["id"]) if item.get("id") not in (None, "") else None,
                previous=tuple(str(p) for p in item["previousNames"] or ()) if "previousNames" in item else (),
                declared=self.sets.setdefault(declared, declared),
                locate=self.locate,
            )
            self.out[kind.name].append(obj)
            for key, child in child_keys.items():
                if key in item:
                    self.visit(child, item[key], (*path, i, key), obj)
