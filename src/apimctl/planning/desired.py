"""Desired objects: what the manifests declare, one object per kind and identity.

Called by :mod:`apimctl.planning.build`; child kinds (endpoints, error sets, plans) become
objects of their own, each with the file position that declares it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.plans.model import address

Path = tuple[str | int, ...]

class ManifestLike(Protocol):
    """What the planner reads of :class:`apimctl.manifests.Manifest`."""

    @property
    def doc(self) -> dict[str, Any]: ...

    @property
    def secret_refs(self) -> dict[tuple[str | int, ...], str]: ...


@dataclass
class Desired:
    """One object the manifests declare (``doc`` in manifest shape, without child kinds)."""

    kind: Kind
    key: str
    name: str
    doc: dict[str, Any]
    path: Path
    parent: Desired | None = None
    pin: str | None = None
    previous: tuple[str, ...] = ()
    declared: frozenset[str] = frozenset()
    origin: str = ""  # file:line:col where the manifests declare it, when known

    @property
    def address(self) -> str:
        return address(self.kind.name, self.key)

    def where(self) -> str:
        """``file:line:col: services[0].endpoints[1]`` (the path alone when not located)."""
        path = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in self.path)
        path = path.replace(".[", "[")
        return f"{self.origin}: {path}" if self.origin else path

# --- desired objects -------------------------------------------------------------------------


def locator(manifest: ManifestLike) -> Callable[[Path], str]:
    """``file:line:col`` of a manifest path, when the manifest knows positions."""
    where = getattr(manifest, "where", None)

    def locate(path: Path) -> str:
        pos = where(path) if callable(where) else None
        if pos is None or not getattr(pos, "file", ""):
            return ""
        return f"{pos.file}:{pos.line}:{pos.col}"

    return locate


def desired_objects(doc: Mapping[str, Any],
                     locate: Callable[[Path], str] = lambda _: "") -> dict[str, list[Desired]]:
    out: dict[str, list[Desired]] = defaultdict(list)

    def visit(kind: Kind, items: Any, path: Path, parent: Desired | None) -> None:
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, Mapping):
                continue
            name = str(item.get(kind.identity, ""))
            child_keys = {kinds.get(c).manifest_key: kinds.get(c) for c in kind.children}
            obj = Desired(
                kind=kind,
                key=kind.key_of(name, parent.key if parent else None),
                name=name,
                doc={k: v for k, v in item.items() if k not in child_keys},
                path=(*path, i),
                parent=parent,
                pin=str(item["id"]) if item.get("id") not in (None, "") else None,
                previous=tuple(str(p) for p in item.get("previousNames") or ()),
                declared=frozenset(k for k in child_keys if k in item),
                origin=locate((*path, i)),
            )
            out[kind.name].append(obj)
            for key, child in child_keys.items():
                if key in item:
                    visit(child, item[key], (*path, i, key), obj)

    for kind in kinds.TOP_LEVEL:
        visit(kind, doc.get(kind.manifest_key), (kind.manifest_key,), None)
    return out
