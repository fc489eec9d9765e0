"""The plan as JSON for tools: ``apimctl plan --format json``.

The shape is documented in ``docs/plan-format.md`` and described by
``schemas/plan.schema.json``; it is :meth:`apimctl.plans.model.Plan.to_json` (same
``format_version``) with secrets redacted, the target stripped of credentials, and a
``risks`` list added. Unlike a saved plan (``plan --out``), it is for reading, not for
``apply --plan``: secret fields show as ``"(sensitive)"`` rather than ``${VAR}`` references.

``apimctl apply --format json`` streams one JSON object per line (documented in
``docs/apply-format.md``, described by ``schemas/apply-events.schema.json``):
:func:`render_apply_event` for each step started and finished, :func:`render_apply_interrupt`
on Ctrl-C or SIGTERM, and :func:`render_apply_summary` last.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from apimctl.plans.model import Change, Plan, Step
from apimctl.plans.progress import ProgressEvent
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
    if plan.replay is not None:  # optional: present only with --replay
        doc["replay"] = plan.replay.to_json()
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


APPLY_EVENTS_VERSION = "1.0"
_FINISHED = {"done": "done", "failed": "failed", "skipped": "skipped"}


def _line(data: dict[str, Any], redactor: Redactor) -> str:
    return json.dumps(_scrub(data, redactor), ensure_ascii=False, default=str, separators=(",", ":"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def render_apply_event(event: ProgressEvent, redactor: Redactor) -> str | None:
    """A step event as one line of JSON (no newline): ``step_started`` or ``step_finished``
    (``outcome`` done | failed | skipped, ``error`` why it failed or was skipped). ``None``
    for events that are not part of the stream."""
    base = {"address": event.address, "action": event.action, "time": _now()}
    if event.kind == "start":
        return _line({"type": "step_started", **base}, redactor)
    if event.kind in _FINISHED:
        return _line({"type": "step_finished", **base, "outcome": _FINISHED[event.kind],
                      "error": event.message or None, "completed": event.completed,
                      "total": event.total}, redactor)
    return None


def render_apply_interrupt(signal_name: str) -> str:
    """The line of the stream that says a Ctrl-C or SIGTERM came (no new step starts after it)."""
    return _line({"type": "interrupt", "signal": signal_name, "time": _now()}, Redactor(Plan()))


def render_apply_summary(result: ApplyResult, *, plan: Plan | None = None) -> str:
    """The last line of the ``apply --format json`` stream: ``{"type": "summary"}`` and the
    fields of :meth:`ApplyResult.to_json`, with ``plan``'s secret values scrubbed, on one line
    ending in a newline."""
    data = {"type": "summary", **result.to_json()}
    return _line(data, Redactor(plan or Plan())) + "\n"
