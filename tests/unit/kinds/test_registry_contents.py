"""The registry of kinds: complete, consistent, and the single source of paths and order."""

from __future__ import annotations

import pytest

from apimctl import kinds


def test_kinds_in_creation_order() -> None:
    names = [k.name for k in kinds.KINDS]
    assert names == ["domain", "organization", "emailTemplateSet", "role", "service", "errorSet",
                     "endpoint", "package", "plan", "maintenanceEvent"]
    for kind in kinds.KINDS:
        if kind.parent:
            assert kinds.ORDER[kind.parent] < kinds.ORDER[kind.name]
        for dep in kind.depends_on:
            assert kinds.ORDER[dep] < kinds.ORDER[kind.name], (kind.name, dep)
        for ref in kind.references:  # a kind others refer to comes before them
            assert kinds.ORDER[ref.kind] < kinds.ORDER[kind.name], (kind.name, ref.kind)


def test_parents_list_their_children() -> None:
    for kind in kinds.KINDS:
        if kind.parent:
            assert kind.name in kinds.get(kind.parent).children
        assert kind.prune_key == (kind.manifest_key if kind.top_level else None)


def test_paths_and_keys() -> None:
    assert kinds.ENDPOINT.collection_path(service="s1") == "/services/s1/endpoints"
    assert kinds.PLAN.item_path("p2", package="p1") == "/packages/p1/plans/p2"
    assert kinds.ENDPOINT.key_of("Forecast", "Weather") == "Weather/Forecast"
    assert kinds.split_key(kinds.ENDPOINT, "Weather/Forecast/v2") == ("Weather", "Forecast/v2")
    assert kinds.split_key(kinds.SERVICE, "Weather") == (None, "Weather")
    with pytest.raises(ValueError):
        kinds.split_key(kinds.PLAN, "no-parent")
    with pytest.raises(KeyError, match="known"):
        kinds.get("gadget")


def test_service_projection_reads_the_whole_tree() -> None:
    fields = kinds.SERVICE.fields_param().split(",")
    for needed in ("endpoints.cors.maxAge", "endpoints.cache.cacheTtlOverride",
                   "endpoints.processor.adapter", "endpoints.methods.sampleJsonResponse",
                   "endpoints.methods.responseFilters.jsonFilterFields", "endpoints.errorSet.name",
                   "endpoints.publicDomains.address", "errorSets.errorMessages.detailHeader",
                   "roles.id", "securityProfile.oauth.grantTypes"):
        assert needed in fields
    # entitlements named down to the methods (SUPPLEMENT §10.6: Exp where real deployments run)
    assert "plans.services.endpoints.methods.id" in kinds.PACKAGE.fields and "plans.roles.id" in kinds.PACKAGE.fields


def test_every_read_names_its_fields_down_to_the_leaves() -> None:
    """No read relies on a wildcard or on what a server returns unasked (SUPPLEMENT §10.10.8):
    every field a kind compares (its defaults, nested singletons and keyed items) is named."""
    for kind in kinds.KINDS:
        assert not any("*" in f for f in kind.fields), kind.name
        for path, defaults in kind.nested.items():
            for name in defaults:
                field = f"{path}.{name}"
                if field in kind.nested or field in kind.compare.write_only:
                    continue
                named = field in kind.fields or any(f.startswith(f"{field}.") for f in kind.fields)
                assert named, (kind.name, field)


def test_secrets_and_defaults_declared() -> None:
    assert kinds.ENDPOINT.compare.secret == {"systemDomainCredentialSecret",
                                     "systemDomainAuthentication.password"}
    assert "systemDomainAuthentication.password" in kinds.ENDPOINT.compare.write_only
    assert kinds.ENDPOINT.defaults["connectionTimeoutForSystemDomainResponse"] == 5
    assert kinds.ENDPOINT.nested["cors"]["allDomainsEnabled"] is True
    assert kinds.PACKAGE.defaults["nearQuotaThreshold"] == 80
    assert len(kinds.ERROR_CATALOG) == 23
    assert not kinds.DOMAIN.write.deletable and kinds.DOMAIN.identity == "domain"
