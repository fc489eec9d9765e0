"""The plan as JSON for tools: ``apimctl plan --format json``.

The shape is documented in ``docs/plan-format.md`` and described by
``schemas/plan.schema.json``; it is :meth:`apimctl.plans.model.Plan.to_json` (same
``format_version``) with secrets redacted, the target stripped of credentials, and a
``risks`` list added. Unlike a saved plan (``plan --out``), it is for reading, not for
``apply --plan``: secret fields show as ``"(sensitive)"`` rather than ``${VAR}`` references.
:func:`render_apply_summary` is ``apimctl apply --format json``'s closing report.
"""

from __future__ import annotations

import json
from typing import Any

from apimctl.plans.model import Change, Plan, Step
from apimctl.plans.result import ApplyResult
from apimctl.render.style import (
    SENSITIVE_TEXT,
    Redactor,
    Risk,
    plain,
    risks,
    safe_target,
)


def render_plan(plan: Plan) -> str:
    """The plan as indented JSON with a stable key order, ending in a newline."""
    return json.dumps(plan_document(plan), indent=2, ensure_ascii=False, default=str) + "\n"


def plan_document(plan: Plan) -> dict[str, Any]:
    """The JSON document :func:`render_plan` prints, as Python data."""
    redactor = Redactor(plan)
    doc = plan.to_json()
    doc["target"] = safe_target(plan.target)
    doc["steps"] = [_step(step, redactor) for step in plan.steps]
    doc["risks"] = [_risk(r) for r in risks(plan, redactor)]
    scrubbed: dict[str, Any] = _scrub(doc, redactor)
    return scrubbed


def _step(step: Step, redactor: Redactor) -> dict[str, Any]:
    data = step.to_json()
    data["changes"] = [_change(step.address, c, redactor) for c in step.changes]
    if step.desired is not None:
        data["desired"] = plain(redactor.value(step.address, "", step.desired))
    return data


def _change(addr: str, change: Change, redactor: Redactor) -> dict[str, Any]:
    if change.sensitive or redactor.is_secret(addr, change.path):
        return {"path": change.path, "before": SENSITIVE_TEXT, "after": SENSITIVE_TEXT, "sensitive": True}
    return {
        "path": change.path,
        "before": plain(redactor.value(addr, change.path, change.before)),
        "after": plain(redactor.value(addr, change.path, change.after)),
    }


def _risk(risk: Risk) -> dict[str, Any]:
    return {
        "address": risk.address,
        "action": risk.action,
        "kind": risk.kind,
        "key": risk.key,
        "reason": risk.reason,
        "path": risk.path,
        "before": plain(risk.before),
        "after": plain(risk.after),
    }


def _scrub(data: Any, redactor: Redactor) -> Any:
    """Last line of defence: no string anywhere in the document may carry a secret value."""
    if isinstance(data, str):
        return SENSITIVE_TEXT if redactor.leaks(data) else data
    if isinstance(data, dict):
        return {_scrub(k, redactor): _scrub(v, redactor) for k, v in data.items()}
    if isinstance(data, list):
        return [_scrub(v, redactor) for v in data]
    return data


def render_apply_summary(result: ApplyResult, *, plan: Plan | None = None) -> str:
    """:meth:`ApplyResult.to_json` as indented JSON, with ``plan``'s secret values scrubbed."""
    data = _scrub(result.to_json(), Redactor(plan or Plan()))
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
