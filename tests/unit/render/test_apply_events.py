"""`apply --format json`: one JSON object per line (step events, interrupt, summary), every
line valid against schemas/apply-events.schema.json, secrets scrubbed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from apimctl.cli.apply_terminal import json_events
from apimctl.plans.progress import ProgressEvent
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.render.json import render_apply_interrupt, render_apply_summary
from apimctl.render.text import render_apply_summary as render_text_summary

from .render_plans import mixed_plan

ROOT = Path(__file__).parents[3]
SCHEMA = ROOT / "schemas" / "apply-events.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def test_the_packaged_schema_is_the_documented_one() -> None:
    packaged = ROOT / "src" / "apimctl" / "schemas" / "apply-events.schema.json"
    assert packaged.read_bytes() == SCHEMA.read_bytes()


def _stream() -> list[str]:
    plan = mixed_plan()
    secret = next(iter(plan.secret_values.values()))
    lines: list[str] = []
    update = json_events(lines.append, plan)
    update(ProgressEvent("start", "service:Weather", "create", "", 0, 3))
    update(ProgressEvent("done", "service:Weather", "create", "", 1, 3))
    update(ProgressEvent("start", "endpoint:Weather/Forecast", "update", "", 1, 3))
    update(ProgressEvent("failed", "endpoint:Weather/Forecast", "update", f"400 bad value {secret}", 2, 3))
    update(ProgressEvent("skipped", "plan:P/Gold", "create", "depends on endpoint:Weather/Forecast", 3, 3))
    update(ProgressEvent("note", "plan:P/Gold", "create", "ignored", 3, 3))
    lines.append(render_apply_interrupt("SIGTERM"))
    result = ApplyResult(done=[StepOutcome("service:Weather", "create")],
                         failed=[StepOutcome("endpoint:Weather/Forecast", "update", f"boom {secret}")],
                         skipped=[StepOutcome("plan:P/Gold", "create", "not started: interrupted")],
                         interrupted=True, stopped="interrupted", calls=3, write_calls=2, read_calls=1)
    summary = render_apply_summary(result, plan=plan)
    assert summary.endswith("\n") and summary.count("\n") == 1  # one line
    lines.append(summary.rstrip("\n"))
    return lines


def test_every_line_is_one_valid_json_object(validator: jsonschema.Draft202012Validator) -> None:
    lines = _stream()
    events: list[dict[str, Any]] = [json.loads(line) for line in lines]
    for event in events:
        validator.validate(event)
    assert [e["type"] for e in events] == ["step_started", "step_finished", "step_started", "step_finished",
                                           "step_finished", "interrupt", "summary"]
    assert [e.get("outcome") for e in events if e["type"] == "step_finished"] == ["done", "failed", "skipped"]
    assert events[1]["error"] is None
    summary = events[-1]
    assert summary["exit_code"] == 130 and summary["interrupted"] is True
    assert summary["summary"] == {"done": 1, "failed": 1, "skipped": 1, "non_converged": 0}


def test_secrets_never_appear_in_the_stream() -> None:
    plan = mixed_plan()
    text = "\n".join(_stream())
    for value in plan.secret_values.values():
        assert value not in text
    assert "(sensitive)" in text


def test_the_summary_keeps_the_fields_of_the_old_document() -> None:
    doc = json.loads(render_apply_summary(ApplyResult(done=[StepOutcome("role:a", "create")])))
    assert {"format_version", "exit_code", "summary", "done", "failed", "skipped", "non_converged",
            "stopped", "calls", "seconds"} <= set(doc)
    assert doc["type"] == "summary" and doc["exit_code"] == 0


def test_the_text_summary_of_an_interrupted_apply() -> None:
    result = ApplyResult(done=[StepOutcome("role:a", "create")],
                         skipped=[StepOutcome("role:b", "create", "not started: interrupted (Ctrl-C or SIGTERM)")],
                         interrupted=True, stopped="interrupted (Ctrl-C or SIGTERM)")
    out = render_text_summary(result)
    assert "Not started:\n" in out and "Skipped" not in out
    assert "Apply interrupted: 1 done (1 created, 0 updated, 0 deleted), 0 failed, 1 not started." in out
    assert result.exit_code == 130
