"""Fitting exported documents to the manifest schema: keys the schema does not allow are
dropped and named by path; the result shares no list or mapping (YAML would write an alias)."""

from __future__ import annotations

from typing import Any

from apimctl.export.fit import fit_items, fit_schema
from apimctl.manifests.schema import manifest_schema


def containers(value: Any) -> list[int]:
    out = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.append(id(node))
            stack.extend(node.values())
        elif isinstance(node, list):
            out.append(id(node))
            stack.extend(node)
    return out


def services() -> list[Any]:
    shared = ["get", "post"]
    eav = {"free": {"form": [1, 2]}}
    return [
        {"name": "S", "unmanaged": 1, "endpoints": [
            {"name": "E", "requestPathAlias": "/e", "trafficManagerDomain": "t", "supportedHttpMethods": shared,
             "cors": {"maxAge": 1, "mystery": True}, "unknownField": "x"},
            {"name": "F", "requestPathAlias": "/f", "trafficManagerDomain": "t", "supportedHttpMethods": shared}]},
        {"name": "T", "eav": eav, "other": eav},
    ]


def test_unknown_keys_are_dropped_and_named() -> None:
    schema = manifest_schema()
    dropped: list[str] = []
    fitted = fit_schema(services(), schema["properties"]["services"], schema, "services", dropped)
    assert dropped == ["services[0].unmanaged", "services[0].endpoints[0].cors.mystery",
                       "services[0].endpoints[0].unknownField", "services[1].eav", "services[1].other"]
    assert fitted[0]["endpoints"][0]["cors"] == {"maxAge": 1}


def test_fitting_in_place_gives_what_fitting_gives() -> None:
    schema = manifest_schema()
    expected: list[str] = []
    whole = fit_schema(services(), schema["properties"]["services"], schema, "services", expected)
    items, dropped = services(), []
    fit_items(items, schema["properties"]["services"], schema, "services", dropped)
    assert items == whole and dropped == expected


def test_the_fitted_documents_share_no_container() -> None:
    schema = manifest_schema()
    items = services()
    items.append({"name": "U", "roles": items[0]["endpoints"][0]["supportedHttpMethods"]})
    fit_items(items, schema["properties"]["services"], schema, "services", [])
    eav = {"free": {"form": [1, 2]}}  # free-form: copied whole
    packages = [{"name": "P", "plans": [{"name": "A", "eav": eav}, {"name": "B", "eav": eav}]}]
    fit_items(packages, schema["properties"]["packages"], schema, "packages", [])
    assert packages[0]["plans"][1]["eav"] == eav
    found = containers([items, packages])
    assert len(found) == len(set(found))
