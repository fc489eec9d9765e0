"""The kind contract stays small: a core every kind has or may have, one facet per stage that
reads the rules only some kinds have, and the roles one kind alone holds in one table."""

from __future__ import annotations

import dataclasses

from apimctl.kinds import KINDS, ROLES, Callers, Compare, Export, Kind, Write
from apimctl.kinds.ops import Ops

FACETS: dict[str, type] = {"compare": Compare, "write": Write, "export": Export, "callers": Callers}
CORE_LIMIT = 20


def _init_fields(cls: type) -> list[dataclasses.Field[object]]:
    return [f for f in dataclasses.fields(cls) if f.init]


def test_the_core_is_small_and_the_rest_is_in_facets() -> None:
    names = [f.name for f in _init_fields(Kind)]
    assert [n for n in names if n in FACETS] == list(FACETS)
    core = [n for n in names if n not in FACETS]
    assert len(core) <= CORE_LIMIT, f"Kind's core has grown to {len(core)} fields: {core}"


def test_every_facet_rule_is_some_kind_s() -> None:
    """A facet holds the rules of the kinds that have them: a rule no kind sets is dead
    weight a new contributor must still read."""
    for name, cls in FACETS.items():
        empty = cls()
        for f in _init_fields(cls):
            assert any(getattr(getattr(k, name), f.name) != getattr(empty, f.name) for k in KINDS), (
                f"no kind sets {name}.{f.name}")


def test_a_kind_without_rules_of_a_stage_reads_an_empty_facet() -> None:
    plain = Kind(name="x", manifest_key="xs", path="/xs", body="x", operations=Ops)
    for name, cls in FACETS.items():
        assert getattr(plain, name) == cls()
    assert not plain.compare.secret and plain.write.deletable and plain.export.pinnable


def test_each_role_is_held_by_a_kind_of_the_registry() -> None:
    for f in dataclasses.fields(ROLES):
        value = getattr(ROLES, f.name)
        if isinstance(value, Kind):
            assert any(value is k for k in KINDS), f.name
    assert ROLES.lease_name and ROLES.reserved(ROLES.lease, ROLES.lease_name)
    assert not any(ROLES.reserved(k, ROLES.lease_name) for k in KINDS if k is not ROLES.lease)
