"""Which data sources (read-only kinds) a plan lists: those its manifests declare, or name in an
object they declare (a plan's email template set, by name or id, even ``null``; a role's
organization); none otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from apimctl import kinds
from apimctl.state.live import DATA_SOURCES, unnamed_sources

TEMPLATE_SETS = next(k for k in kinds.TOP_LEVEL if k.read_only and k.name == "emailTemplateSet")
ORGANIZATIONS = next(k for k in kinds.TOP_LEVEL if k.read_only and k.name == "organization")
BASE: dict[str, Any] = {"domains": ["example.com"], "services": [{"name": "S"}],
                        "packages": [{"name": "P", "plans": [{"name": "Gold"}]}], "roles": ["Partners"]}


def _with_plan(**fields: Any) -> dict[str, Any]:
    return {**BASE, "packages": [{"name": "P", "plans": [{"name": "Gold"}, {"name": "Silver", **fields}]}]}


def test_manifests_naming_no_data_source_list_none() -> None:
    assert {TEMPLATE_SETS.name, ORGANIZATIONS.name} == DATA_SOURCES
    assert unnamed_sources(BASE) == DATA_SOURCES
    assert unnamed_sources({}) == DATA_SOURCES


@pytest.mark.parametrize("fields", [{"emailTemplateSet": "Default"}, {"emailTemplateSet": None},
                                    {"emailTemplateSetId": 7}])
def test_a_plan_naming_its_template_set_lists_the_sets(fields: dict[str, Any]) -> None:
    assert unnamed_sources(_with_plan(**fields)) == {ORGANIZATIONS.name}


def test_declared_sources_and_a_role_naming_its_organization_are_listed() -> None:
    assert unnamed_sources({**BASE, TEMPLATE_SETS.manifest_key: ["Default"]}) == {ORGANIZATIONS.name}
    assert unnamed_sources({**BASE, ORGANIZATIONS.manifest_key: ["Acme"]}) == {TEMPLATE_SETS.name}
    roles = [{"name": "Partners", "organization": "Acme"}]
    assert unnamed_sources({**BASE, "roles": roles}) == {TEMPLATE_SETS.name}
    assert unnamed_sources({**BASE, TEMPLATE_SETS.manifest_key: [], "roles": roles}) == {TEMPLATE_SETS.name}
