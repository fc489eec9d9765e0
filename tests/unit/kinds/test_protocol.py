"""Every kind in ``KINDS`` implements the per-kind operations (``Kind.ops``, :class:`KindOps`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from apimctl import kinds
from apimctl.kinds.capabilities import (
    CatalogItems,
    Contextual,
    ObjectDefaults,
    Routed,
    SetMembers,
    Shorthands,
)
from apimctl.kinds.findings import Declarations
from apimctl.kinds.ops import Context, Exported, KindOps, Lookups, Ops, Read, member_name
from apimctl.kinds.references import checks as reference_checks


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_kind_implements_the_protocol(kind: kinds.Kind) -> None:
    assert isinstance(kind.ops, KindOps), f"{kind.name}: Kind.ops does not implement KindOps"
    assert isinstance(kind.ops, Ops) and kind.ops.kind is kind, f"{kind.name}: operations of another entry"


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_operations_answer_for_their_own_kind(kind: kinds.Kind) -> None:
    raw = {"id": "1", kind.identity: "x"}
    read = kind.ops.read(raw, Lookups(), None)
    assert isinstance(read, Read)
    contextual = kinds.capability(kind, Contextual)
    if contextual is not None:
        assert isinstance(contextual.context({}), Context)
        assert set(contextual.context_fields) <= set(kind.defaults) | set(kind.nested)
    defaults = kinds.capability(kind, ObjectDefaults)
    if defaults is not None:
        assert isinstance(defaults.defaults_for(read.doc), Mapping)


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_export_gives_a_manifest_entry(kind: kinds.Kind) -> None:
    """An object with nothing but its identity is its name, or a mapping holding it."""
    asked: list[str] = []

    def secret(part: str) -> str:
        asked.append(part)
        return "${" + part + "}"

    entry = kind.ops.export(Exported({kind.identity: "x"}, {kind.identity: "x"}, {}, secret))
    assert entry == "x" or (isinstance(entry, Mapping) and entry[kind.identity] == "x")
    assert not asked  # no secret to stand in for
    catalog = kinds.capability(kind, CatalogItems)
    if catalog is not None:
        assert catalog.written([entry])
        # the platform's own catalog aside, an empty list is written: no set is not the platform's
        assert catalog.written([])


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_export_keeps_the_fields_and_writes_the_children(kind: kinds.Kind) -> None:
    doc: dict[str, Any] = {kind.identity: "x", "id": "7"}
    children = {kinds.get(c).manifest_key: [{"name": "c"}] for c in kind.children}
    entry = kind.ops.export(Exported(dict(doc), doc, children))
    if isinstance(entry, Mapping):
        assert entry[kind.identity] == "x" and entry["id"] == "7"
        assert all(entry[k] == v for k, v in children.items())


def test_export_names_secrets_through_the_callback() -> None:
    doc = {"name": "Forecast", "systemDomainCredentialSecret": "sha256:...",
           "systemDomainAuthentication": {"username": "u"}}
    live = {**doc, "systemDomainAuthentication": {"type": "httpBasic", "username": "u"}}
    entry = kinds.ENDPOINT.ops.export(Exported(doc, live, {}, lambda part: f"<{part}>"))
    assert entry["systemDomainCredentialSecret"] == "<BACKEND_SECRET>"
    assert entry["systemDomainAuthentication"] == {"type": "httpBasic", "username": "u",
                                                   "password": "<BACKEND_PASSWORD>"}
    assert list(entry)[:3] == ["name", "requestPathAlias", "trafficManagerDomain"]


def test_the_platform_error_set_is_not_written() -> None:
    ops = kinds.capability(kinds.ERROR_SET, CatalogItems)
    assert ops is not None
    assert not ops.written([{"name": "Default"}])
    assert ops.written([{"name": "JSON errors"}])
    assert ops.written([{"name": "Default", "id": "1"}])


def test_comparing_rules_live_in_their_kinds() -> None:
    endpoint = kinds.ENDPOINT.ops
    assert isinstance(endpoint, Contextual) and isinstance(endpoint, ObjectDefaults)
    assert endpoint.contextual("errorSet", None, Context("First")) == "First"
    assert endpoint.contextual("errorSet", {"id": "1", "name": "Other"}, Context("First")) == "Other"
    assert endpoint.defaults_for({"requestAuthenticationType": "oauth"})["apiKeyValueLocations"] == []
    assert endpoint.defaults_for({}) is kinds.ENDPOINT.defaults
    error_set = kinds.ERROR_SET.ops
    assert isinstance(error_set, CatalogItems)
    assert list(error_set.implied_items("errorMessages")) == list(kinds.ERROR_CATALOG)
    status = kinds.ERROR_CATALOG["ERR_403_DEVELOPER_OVER_QPS"][1]
    assert error_set.item_defaults("errorMessages", "ERR_403_DEVELOPER_OVER_QPS", {})["status"] == status
    pair = {"service": "Weather", "endpoint": "Forecast"}
    event = kinds.MAINTENANCE_EVENT.ops
    assert isinstance(event, SetMembers)
    assert event.set_member(pair) == "Weather/Forecast"
    assert event.set_member({"name": "x"}) == member_name({"name": "x"}) == "x"


def test_a_kind_names_its_operations() -> None:
    with pytest.raises(TypeError, match="operations"):
        kinds.Kind(name="x", manifest_key="xs", path="/xs", body="x")  # type: ignore[call-arg]


def test_an_entry_makes_its_own_operations() -> None:
    """Two entries with one operations class each get their own, bound to themselves."""
    first = kinds.Kind(name="x", manifest_key="xs", path="/xs", body="x", operations=Ops)
    second = kinds.Kind(name="y", manifest_key="ys", path="/ys", body="y",
                        compare=kinds.Compare(computed=frozenset({"id"})), operations=Ops)
    assert isinstance(first.ops, Ops) and isinstance(second.ops, Ops)
    assert first.ops.kind is first and second.ops.kind is second
    assert first.ops.read({"id": "1", "name": "a"}, Lookups(), None).doc == {"id": "1", "name": "a"}
    assert second.ops.read({"id": "1", "name": "a"}, Lookups(), None).doc == {"name": "a"}


def test_manifest_rules_live_in_their_kinds() -> None:
    """The shorthands, offline checks and routes of a kind are its operations'."""
    plan = {"name": "Gold", "services": [{"name": "Weather"}, {"name": "Maps", "endpoints": ["Tiles"]}]}
    shorthands = kinds.capability(kinds.PLAN, Shorthands)
    assert shorthands is not None
    shorthands.expand(plan, {"endpoint": {"Weather": ["Forecast", "Now"]}})
    assert plan["services"] == [{"name": "Weather", "endpoints": [{"name": "Forecast"}, {"name": "Now"}]},
                                {"name": "Maps", "endpoints": [{"name": "Tiles"}]}]
    event = reference_checks.Declared(kinds.MAINTENANCE_EVENT, ("scheduledMaintenanceEvents", 0), {
        "name": "w", "startDateTime": "2030-01-02T00:00:00Z", "endDateTime": "2030-01-01T00:00:00Z",
        "endpoints": [{"service": "S", "endpoint": "E"}, {"service": "S", "endpoint": "E"}]}, "w", None, None)
    found = list(kinds.MAINTENANCE_EVENT.ops.check(Declarations({"maintenanceEvent": [event]}, {})))
    assert [f.path[-1] for f in found] == ["endDateTime", 0, 1]
    assert found[1].also == (("scheduledMaintenanceEvents", 0, "endpoints", 1),)
    route = {"requestPathAlias": "/v1", "publicDomains": ["api.example.com"], "supportedHttpMethods": ["get"]}
    routed = kinds.capability(kinds.ENDPOINT, Routed)
    assert routed is not None and routed.routes(route, by_method=True) == {"get|/v1|api.example.com"}
    assert kinds.capability(kinds.SERVICE, Routed) is None
    assert list(kinds.ROLE.ops.check(Declarations({}, {}))) == []
