"""JSON rendering of plans (``apimctl.render.json``) against its documented schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from apimctl.plans.model import FORMAT_VERSION, Budget, Change, Plan, Step
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.render.json import render_apply_summary, render_plan

from .render_plans import big_plan, mixed_plan, no_change_plan

Golden = Callable[[str, str], None]

SCHEMA_PATH = Path(__file__).parents[3] / "schemas" / "plan.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_mixed_plan_matches_golden(golden: Golden) -> None:
    golden("mixed.json", render_plan(mixed_plan()))


@pytest.mark.parametrize("plan", [mixed_plan(), no_change_plan(), Plan(), big_plan(50, 20, 5)],
                         ids=["mixed", "no-change", "empty", "big"])
def test_renders_validate_against_schema(plan: Plan, validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(json.loads(render_plan(plan)))


def test_schema_rejects_what_it_should(validator: jsonschema.Draft202012Validator) -> None:
    doc = json.loads(render_plan(mixed_plan()))
    leaky = json.loads(json.dumps(doc))
    leaky["steps"][2]["changes"][3]["after"] = "plain"  # a sensitive change carrying a value
    assert not validator.is_valid(leaky)
    undocumented = json.loads(json.dumps(doc))
    undocumented["steps"][0]["extra"] = 1
    assert not validator.is_valid(undocumented)
    missing = json.loads(json.dumps(doc))
    del missing["summary"]["unmanaged"]
    assert not validator.is_valid(missing)


def test_shape_and_order() -> None:
    text = render_plan(mixed_plan())
    doc = json.loads(text)
    assert list(doc) == ["format_version", "target", "summary", "steps", "unmanaged", "fingerprints",
                         "ignored", "warnings", "risks"]
    assert doc["format_version"] == FORMAT_VERSION
    assert doc["summary"] == {"create": 2, "update": 2, "delete": 1, "unmanaged": 2}
    assert [s["action"] for s in doc["steps"]] == ["create", "create", "update", "update", "delete"]
    assert text.startswith('{\n  "format_version"') and text.endswith("}\n")
    assert text == render_plan(mixed_plan())


def test_secrets_are_redacted() -> None:
    doc = json.loads(render_plan(mixed_plan()))
    desired = doc["steps"][1]["desired"]
    assert desired["systemDomainCredentialSecret"] == "(sensitive)"
    assert desired["systemDomainAuthentication"] == {"type": "httpBasic", "username": "svc",
                                                     "password": "(sensitive)"}
    assert {"path": "systemDomainCredentialSecret", "before": "(sensitive)", "after": "(sensitive)",
            "sensitive": True} in doc["steps"][2]["changes"]


def test_risks_list_deletes_and_limit_changes() -> None:
    risks = json.loads(render_plan(mixed_plan()))["risks"]
    assert [(r["address"], r["reason"], r["path"]) for r in risks] == [
        ("role:Interns", "deletes the object", None),
        ("plan:Weather Partners/Gold", "changes a limit", "rateLimitCeiling"),
        ("plan:Weather Partners/Gold", "changes a limit", "qpsLimitKeyOverrideAllowed"),
    ]
    assert risks[1]["before"] == 100000 and risks[1]["after"] == 50000


def test_non_json_values_do_not_crash() -> None:
    import datetime as dt

    when = dt.datetime(2026, 12, 1, 2, tzinfo=dt.UTC)
    plan = Plan(steps=[Step("update", "maintenanceEvent", "December", id="m",
                            changes=(Change("startDateTime", None, when),))])
    doc = json.loads(render_plan(plan))
    assert doc["steps"][0]["changes"][0]["after"] == "2026-12-01 02:00:00+00:00"


def test_apply_summary_json() -> None:
    result = ApplyResult(done=[StepOutcome("service:Weather", "create")],
                         failed=[StepOutcome("endpoint:Weather/Forecast", "update", "boom hunter2-Backend-Secret")],
                         calls=3, write_calls=2, read_calls=1, seconds=0.5)
    doc: dict[str, Any] = json.loads(render_apply_summary(result, plan=mixed_plan()))
    assert doc["exit_code"] == 3
    assert doc["summary"] == {"done": 1, "failed": 1, "skipped": 0, "non_converged": 0}
    assert doc["failed"][0]["reason"] == "(sensitive)"


def test_the_budget_of_a_plan(validator: jsonschema.Draft202012Validator) -> None:
    plan = mixed_plan()
    plan.budget = Budget(reads=8, lease=4, writes=6, checks=5, qps=4.0)
    doc = json.loads(render_plan(plan))
    validator.validate(doc)
    assert doc["budget"] == {"calls": 23, "reads": 8, "lease": 4, "writes": 6, "checks": 5,
                             "qps": 4.0, "seconds": 5.8}
    plan.budget = Budget(reads=8, lease=0, writes=6, checks=5)  # no rate: no time
    assert json.loads(render_plan(plan))["budget"]["seconds"] is None
    assert Plan.from_json(json.loads(plan.dumps())).budget == plan.budget  # a saved plan keeps it
