"""Fitting an export to the manifest schema: object keys the schema does not allow are dropped
(and reported by path), so the manifests validate even when a deployment returns fields this
tool does not manage.

Called by :func:`apimctl.export.area.export_state` on the built documents, before they are laid
out in files; ``apimctl export`` warns about each dropped path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.export.fields import join_path


def fit_schema(value: Any, node: Any, root: Mapping[str, Any], where: str,
               dropped: list[str]) -> Any:
    """``value`` without the object keys the manifest schema does not allow (recorded in
    ``dropped`` by path): a deployment may return fields this tool does not manage, and a
    manifest holding them would not validate."""
    options = _alternatives(_resolve(node, root), root)
    if isinstance(value, Mapping):
        return _fit_mapping(value, options, root, where, dropped)
    if isinstance(value, list):
        return _fit_list(value, options, root, where, dropped)
    return value


def _fit_mapping(value: Mapping[str, Any], options: list[Mapping[str, Any]],
                 root: Mapping[str, Any], where: str, dropped: list[str]) -> Any:
    obj = next((o for o in options if "properties" in o), None)
    if obj is None:
        return value
    props, closed = obj["properties"], obj.get("additionalProperties") is False
    out = {}
    for key, sub in value.items():
        if key in props:
            out[key] = fit_schema(sub, props[key], root, join_path(where, str(key)), dropped)
        elif closed:
            dropped.append(join_path(where, str(key)))
        else:
            out[key] = sub
    return out


def _fit_list(value: list[Any], options: list[Mapping[str, Any]], root: Mapping[str, Any],
              where: str, dropped: list[str]) -> Any:
    arr = next((o for o in options if "items" in o), None)
    if arr is None:
        return value
    return [fit_schema(v, arr["items"], root, f"{where}[{i}]", dropped)
            for i, v in enumerate(value)]


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
