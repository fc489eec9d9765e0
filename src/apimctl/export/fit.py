"""Fitting an export to the manifest schema: object keys the schema does not allow are dropped
(and reported by path), so the manifests validate even when a deployment returns fields this
tool does not manage.

Called by :func:`apimctl.export.area.export_state` on the built documents, before they are laid
out in files; ``apimctl export`` warns about each dropped path. The fitted value is a copy in
which no list or mapping occurs twice (YAML would write the second as an alias).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def fit_schema(value: Any, node: Any, root: Mapping[str, Any], where: str,
               dropped: list[str]) -> Any:
    """``value`` without the object keys the manifest schema does not allow (recorded in
    ``dropped`` by path): a deployment may return fields this tool does not manage, and a
    manifest holding them would not validate."""
    return _Fitter(root, dropped).fit(value, node, [where])


def fit_items(items: list[Any], node: Any, root: Mapping[str, Any], where: str,
              dropped: list[str]) -> None:
    """:func:`fit_schema` of the list ``items`` (the schema ``node``), item by item in place,
    so that each object as built is let go once its fitted copy is made."""
    fitter = _Fitter(root, dropped)
    item_node = fitter.shape(node).items
    if item_node is None:
        items[:] = fitter.fit(items, node, [where])
        return
    trail: list[str | int] = [where]
    for index, item in enumerate(items):
        trail.append(index)
        items[index] = fitter.fit(item, item_node, trail)
        trail.pop()


@dataclass(frozen=True)
class _Shape:
    """What fitting needs of a schema node (``$ref`` and ``anyOf``/``oneOf`` followed):
    the properties of the first alternative that has them, whether that object is closed,
    and the items schema of the first alternative that has one."""

    props: Mapping[str, Any] | None
    closed: bool
    items: Any


class _Fitter:
    """One fitting run: schema nodes compiled to shapes once, paths spelled only when a key is
    dropped (``trail``: the keys and indices down to the value at hand)."""

    def __init__(self, root: Mapping[str, Any], dropped: list[str]) -> None:
        self.root = root
        self.dropped = dropped
        self.shapes: dict[int, tuple[Any, _Shape]] = {}

    def fit(self, value: Any, node: Any, trail: list[str | int]) -> Any:
        if isinstance(value, Mapping):
            return self.mapping(value, self.shape(node), trail)
        if isinstance(value, list):
            return self.sequence(value, self.shape(node), trail)
        return value

    def mapping(self, value: Mapping[str, Any], shape: _Shape, trail: list[str | int]) -> Any:
        props = shape.props
        if props is None:
            return _copied(value)
        out = {}
        for key, sub in value.items():
            if key in props:
                trail.append(str(key))
                out[key] = self.fit(sub, props[key], trail)
                trail.pop()
            elif shape.closed:
                self.dropped.append(_spelled([*trail, str(key)]))
            else:
                out[key] = _copied(sub)
        return out

    def sequence(self, value: list[Any], shape: _Shape, trail: list[str | int]) -> Any:
        node = shape.items
        if node is None:
            return _copied(value)
        out = []
        for index, item in enumerate(value):
            if isinstance(item, Mapping | list):
                trail.append(index)
                out.append(self.fit(item, node, trail))
                trail.pop()
            else:
                out.append(item)
        return out

    def shape(self, node: Any) -> _Shape:
        found = self.shapes.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        options = _alternatives(_resolve(node, self.root), self.root)
        obj = next((o for o in options if "properties" in o), None)
        arr = next((o for o in options if "items" in o), None)
        shape = _Shape(obj["properties"] if obj is not None else None,
                       obj is not None and obj.get("additionalProperties") is False,
                       arr["items"] if arr is not None else None)
        self.shapes[id(node)] = (node, shape)  # the node is kept, so its id stays its own
        return shape


def _copied(value: Any) -> Any:
    """A copy of ``value``: every dict and list in it new (as plain ones), the rest shared."""
    if isinstance(value, dict):
        return {key: _copied(sub) for key, sub in value.items()}
    if isinstance(value, list):
        return [_copied(sub) for sub in value]
    return value


def _spelled(trail: list[str | int]) -> str:
    """``["services", 0, "cors", "x"]`` -> ``services[0].cors.x``."""
    out = ""
    for part in trail:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else part
    return out


def _resolve(node: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema ``node`` with its ``$ref`` chain followed (an empty schema if it breaks)."""
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref = str(node["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        node = target
    return node if isinstance(node, Mapping) else {}


def _alternatives(node: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``node`` and each of its ``anyOf``/``oneOf`` alternatives, resolved."""
    return [node, *(_resolve(a, root) for a in [*node.get("anyOf", []), *node.get("oneOf", [])])]
