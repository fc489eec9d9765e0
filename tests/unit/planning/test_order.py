"""The order of a plan's steps: dependencies first, then creates/updates parent kinds first
and deletes child kinds first, by key; a cycle is a PlanError."""

from __future__ import annotations

import pytest

from apimctl.errors import PlanError
from apimctl.planning.order import order
from apimctl.plans.model import Change, Step


def _by_address(*steps: Step) -> dict[str, Step]:
    return {s.address: s for s in steps}


def _addresses(steps: list[Step]) -> list[str]:
    return [s.address for s in steps]


def test_creates_parent_kinds_first_then_deletes_child_kinds_first() -> None:
    steps = _by_address(
        Step("delete", "service", "Old", id="s1"),
        Step("create", "endpoint", "New/E", parent="service:New"),
        Step("delete", "endpoint", "Old/E", id="e1", parent="service:Old"),
        Step("create", "service", "New"),
        Step("create", "role", "B"),
        Step("create", "role", "A"),
        Step("create", "domain", "example.com"),
    )
    assert _addresses(order(steps)) == [
        "domain:example.com", "role:A", "role:B", "service:New", "endpoint:New/E",
        "endpoint:Old/E", "service:Old"]


def test_dependencies_win_over_the_kind_rank() -> None:
    steps = _by_address(
        Step("create", "domain", "example.com", depends_on=("role:Z",)),
        Step("create", "role", "Z"),
        Step("delete", "role", "Gone", id="r1", depends_on=("service:S",)),
        Step("update", "service", "S", id="s1"),
    )
    got = _addresses(order(steps))
    assert got.index("role:Z") < got.index("domain:example.com")
    assert got.index("service:S") < got.index("role:Gone")
    assert len(got) == 4


def test_every_step_comes_after_what_it_depends_on() -> None:
    steps = _by_address(*[Step("create", "role", f"r{i}", depends_on=(f"role:r{i + 1}",) if i < 9 else ())
                          for i in range(10)])
    assert _addresses(order(steps)) == [f"role:r{i}" for i in reversed(range(10))]


def test_a_cycle_is_named() -> None:
    steps = _by_address(
        Step("update", "service", "A", id="1", changes=(Change("name", "x", "A"),), depends_on=("service:B",)),
        Step("update", "service", "B", id="2", depends_on=("service:A",)),
    )
    with pytest.raises(PlanError, match=r"cycle: service:[AB] -> service:[AB] -> service:[AB]$"):
        order(steps)


def test_no_steps() -> None:
    assert order({}) == []
