"""Grouping a plan's steps into units written with one call each."""

from __future__ import annotations

from apimctl.applying.units import group_units
from apimctl.plans.model import TEMPORARY_ROUTE, Plan, Step


def _names(plan: Plan, *, batch: bool = True) -> list[tuple[str, ...]]:
    return [u.addresses for u in group_units(plan, batch=batch)]


def test_a_created_service_carries_its_created_children() -> None:
    plan = Plan(steps=[
        Step("create", "service", "W"),
        Step("create", "errorSet", "W/Errs", parent="service:W", depends_on=("service:W",)),
        Step("create", "endpoint", "W/F", parent="service:W", depends_on=("service:W",)),
        Step("create", "role", "R"),
    ])
    assert _names(plan) == [("service:W", "errorSet:W/Errs", "endpoint:W/F"), ("role:R",)]
    assert _names(plan, batch=False) == [("service:W",), ("errorSet:W/Errs",), ("endpoint:W/F",), ("role:R",)]


def test_a_child_created_under_an_existing_parent_is_its_own_call() -> None:
    plan = Plan(steps=[
        Step("update", "service", "W", id="s1"),
        Step("create", "endpoint", "W/F", parent="service:W", parent_id="s1"),
    ])
    assert _names(plan) == [("service:W",), ("endpoint:W/F",)]


def test_a_deleted_service_takes_its_deleted_children() -> None:
    plan = Plan(steps=[
        Step("delete", "endpoint", "W/F", id="e1", parent="service:W", parent_id="s1"),
        Step("delete", "service", "W", id="s1", depends_on=("endpoint:W/F",)),
    ])
    assert _names(plan) == [("service:W", "endpoint:W/F")]


def test_endpoint_updates_of_one_service_are_one_call() -> None:
    plan = Plan(steps=[
        Step("update", "endpoint", "W/A", id="e1", parent="service:W", parent_id="s1"),
        Step("update", "endpoint", "V/C", id="e3", parent="service:V", parent_id="s2"),
        Step("update", "endpoint", "W/B", id="e2", parent="service:W", parent_id="s1"),
    ])
    assert _names(plan) == [("endpoint:W/A", "endpoint:W/B"), ("endpoint:V/C",)]


def test_temporary_routes_are_never_batched() -> None:
    plan = Plan(steps=[
        Step("update", "endpoint", "W/A" + TEMPORARY_ROUTE, id="e1", parent="service:W", parent_id="s1"),
        Step("update", "endpoint", "W/B", id="e2", parent="service:W", parent_id="s1",
             depends_on=("endpoint:W/A" + TEMPORARY_ROUTE,)),
        Step("update", "endpoint", "W/A", id="e1", parent="service:W", parent_id="s1",
             depends_on=("endpoint:W/B",)),
    ])
    units = _names(plan)
    assert ("endpoint:W/A" + TEMPORARY_ROUTE,) in units
    assert sum(len(u) for u in units) == 3


def test_grouping_that_would_make_a_cycle_falls_back_to_single_steps() -> None:
    # W/B waits for role R, which waits for W/A: batching W/A with W/B would be a cycle
    plan = Plan(steps=[
        Step("update", "endpoint", "W/A", id="e1", parent="service:W", parent_id="s1"),
        Step("create", "role", "R", depends_on=("endpoint:W/A",)),
        Step("update", "endpoint", "W/B", id="e2", parent="service:W", parent_id="s1", depends_on=("role:R",)),
    ])
    assert _names(plan) == [("endpoint:W/A",), ("role:R",), ("endpoint:W/B",)]


def test_an_empty_plan_has_no_units() -> None:
    assert group_units(Plan()) == []
