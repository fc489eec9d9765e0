"""No renderer ever shows a secret value, wherever the value turns up in a plan."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.plans.model import Change, Plan, Step, Unmanaged
from apimctl.render import json as render_json
from apimctl.render import markdown, text

from .render_plans import PASSWORD, SECRET, mixed_plan

RENDERERS: dict[str, Callable[[Plan], str]] = {
    "text": text.render_plan,
    "text-color": lambda plan: text.render_plan(plan, color=True),
    "json": render_json.render_plan,
    "markdown": markdown.render_plan,
}


def leaky_plan() -> Plan:
    """``mixed_plan`` plus the secret values where a buggy planner or a user might put them."""
    plan = mixed_plan()
    plan.steps += [
        # a secret field the planner forgot to mark: the kind registry still knows it
        Step("update", "endpoint", "Weather/Forecast", id="e-1",
             changes=(Change("systemDomainCredentialSecret", "old-" + SECRET, SECRET),
                      Change("systemDomainAuthentication", {"username": "svc", "password": PASSWORD},
                             {"username": "svc2", "password": PASSWORD}),
                      Change("description", "x", f"uses {SECRET} for the backend"),
                      Change("notes", None, PASSWORD))),
        Step("create", "service", "Radar", desired={"name": "Radar", "description": SECRET,
                                                    "tags": [f"k={PASSWORD}"], "eav": {"k": SECRET}}),
    ]
    plan.unmanaged.append(Unmanaged("service", f"copy of {SECRET}", "s-99"))
    plan.warnings.append(f"literal secret {SECRET!r} in weather.yaml")
    plan.ignored.append({"target": "endpoint:Weather/Current:notes", "reason": PASSWORD})
    return plan


def _forms(secret: str) -> list[str]:
    """The secret as it would look if leaked raw, JSON-escaped or Markdown-escaped."""
    return [secret, json.dumps(secret)[1:-1], secret.replace("|", "\\|")]


@pytest.mark.parametrize("render", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("build", [mixed_plan, leaky_plan], ids=["mixed", "leaky"])
def test_secret_values_never_appear(render: Callable[[Plan], str], build: Callable[[], Plan]) -> None:
    out = render(build())
    for secret in (SECRET, PASSWORD):
        for form in _forms(secret):
            assert form not in out
    assert "hunter2" not in out and "p4ss" not in out
    assert "${FORECAST_BACKEND_SECRET}" not in out and "${BACKEND_PASSWORD}" not in out
    assert "(sensitive)" in out


def test_nested_secret_inside_a_changed_object_is_masked() -> None:
    out = text.render_plan(leaky_plan())
    assert '~ systemDomainAuthentication: {"username": "svc", "password": "(sensitive)"} -> ' in out


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in [k, *_strings(v)]]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


secret_text = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=4, max_size=24).filter(
    lambda s: s not in "(sensitive)")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=secret_text, where=st.sampled_from(["before", "after", "desired", "warning", "key"]))
def test_any_secret_value_anywhere_is_scrubbed(secret: str, where: str) -> None:
    change = Change("description", secret if where == "before" else "a",
                    secret if where == "after" else "b")
    plan = Plan(
        steps=[Step("update", "service", "S", id="s", changes=(change,)),
               Step("create", "service", f"key {secret}" if where == "key" else "T",
                    desired={"name": "T", "notes": f"see {secret}" if where == "desired" else "n"})],
        warnings=[f"w {secret}" if where == "warning" else "w"],
        secret_values={"endpoint:S/E#systemDomainCredentialSecret": secret},
    )
    assert secret not in text.render_plan(plan)
    assert secret not in markdown.render_plan(plan).replace("\\|", "|")
    doc = json.loads(render_json.render_plan(plan))
    assert not any(secret in s for s in _strings(doc))
