"""Render a drift report (:class:`apimctl.drift.DriftReport`) as text, JSON or Markdown.

``apimctl drift`` calls :func:`render_drift`. Differences are told from the area's side:
``~`` a declared object changed outside git (each field as ``git`` and ``live`` values),
``-`` a declared object missing from the area, ``+`` an object in the area that git does not
have. Who and when follow when the platform records them. Ignore rules in effect are always
listed with their reasons, and accepted differences with the rule's reason. Secrets go through
the same :class:`~apimctl.render.style.Redactor` as plans: never a value, only ``(sensitive)``.
The Markdown form is meant for an issue body and stays under ``limit`` characters.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

import click

from apimctl.plans.drift import Difference, DriftReport
from apimctl.render.markdown import replay_alert
from apimctl.render.style import (
    Redactor,
    duplicate_line,
    field_lines,
    format_value,
    plural,
    safe_target,
)
from apimctl.render.text import render_replay

SYMBOL = {"update": "~", "create": "-", "delete": "+"}
COLOR = {"update": "yellow", "create": "red", "delete": "green"}
DEFAULT_LIMIT = 60_000


def render_drift(report: DriftReport, fmt: str = "text", *, limit: int = DEFAULT_LIMIT,
                 color: bool = False) -> str:
    """The report in ``fmt`` (``text``, ``json`` or ``markdown``), ending with a newline;
    ``color`` styles the text form's object lines with ANSI colours."""
    redactor = Redactor(report.plan)
    renderers: dict[str, Callable[[DriftReport, Redactor], str]] = {
        "text": lambda r, red: _text(r, red, color), "json": _json,
        "markdown": lambda r, red: _markdown(r, red, limit),
    }
    if fmt not in renderers:
        raise ValueError(f"unknown drift format {fmt!r}")
    out = redactor.text(renderers[fmt](report, redactor))
    return out if out.endswith("\n") else out + "\n"


def _who(diff: Difference) -> str:
    att = diff.attribution
    if att is None or (att.who is None and att.when is None):
        return ""
    parts = []
    if att.who:
        parts.append(f"by {att.who}")
    if att.when:
        parts.append(f"at {att.when}")
    detail = att.source + (f", revision {att.revision}" if att.revision is not None else "")
    return f"last change {' '.join(parts)} ({detail})"


def _field_texts(diff: Difference, redactor: Redactor) -> list[tuple[str, str, str]]:
    """(path, git value, live value) of an update."""
    if diff.step.action != "update":
        return []
    return [(line.path, format_value(line.after), format_value(line.before))
            for line in field_lines(diff.step, redactor)]


def _objects_differ(report: DriftReport) -> str:
    count = len(report.differences)
    return f"{plural(count, 'object')} {'differs' if count == 1 else 'differ'}"


def _counts(report: DriftReport) -> str:
    actions = [d.step.action for d in report.differences]
    parts = [f"{actions.count('update')} changed", f"{actions.count('delete')} added outside git",
             f"{actions.count('create')} missing"]
    if report.duplicates:
        parts.append(f"{plural(len(report.duplicates), 'group')} of duplicates")
    return ", ".join(parts)


# --- text ------------------------------------------------------------------------------------


def _text(report: DriftReport, redactor: Redactor, color: bool = False) -> str:
    lines: list[str] = []
    where = f" in {safe_target(report.target)}" if report.target else ""
    if report.drifted:
        lines += [f"Drift{where}: {_objects_differ(report)} from the manifests.", ""]
    for diff in report.differences:
        step = diff.step
        line = f"{SYMBOL[step.action]} {step.kind} \"{redactor.text(step.key)}\": {diff.what}"
        lines.append(click.style(line, fg=COLOR[step.action]) if color else line)
        who = _who(diff)
        if who:
            lines.append(f"    {redactor.text(who)}")
        for path, git, live in _field_texts(diff, redactor):
            lines.append(f"    {path}: git {git}, live {live}")
        lines += [f"    impact of the change outside git: {redactor.text(i.text)}" for i in step.impact]
    if report.differences:
        lines.append("")
    lines += _text_ignores(report)
    if report.duplicates:
        lines.append("Duplicates (live copies sharing one identity):")
        lines += [f"    {redactor.text(duplicate_line(d))}" for d in report.duplicates]
        lines.append("")
    if report.unmanaged:
        names = ", ".join(f"{u.kind} \"{u.key}\"" for u in report.unmanaged)
        lines += [f"Unmanaged (not in git, left alone, not drift): {names}", ""]
    for warning in report.plan.warnings:
        lines.append(f"Warning: {warning}")
    if report.drifted:
        lines.append(f"Drift: {_counts(report)}. Apply the manifests to restore git, or change "
                     "the manifests to accept the area's state.")
    else:
        lines.append(f"No drift. The area matches the manifests{where}.")
    if report.plan.replay is not None:
        lines += ["", render_replay(report.plan.replay)]
    return "\n".join(lines)


def _reason(reason: str | None) -> str:
    if reason == "--ignore":
        return "given with --ignore"
    return reason or "(no reason given)"


def _text_ignores(report: DriftReport) -> list[str]:
    lines: list[str] = []
    if report.rules:
        lines.append("Accepted changes outside git (ignore rules):")
        lines += [f"    {r.target}: {_reason(r.reason)}" for r in report.rules]
    if report.ignored:
        lines.append("Accepted differences found (not drift):")
        lines += [f"    {i['target']}: {_reason(i.get('reason'))}" for i in report.ignored]
    return [*lines, ""] if lines else []


# --- json ------------------------------------------------------------------------------------


def _json(report: DriftReport, redactor: Redactor) -> str:
    data = report.to_json()
    data["target"] = safe_target(report.target) if report.target else ""
    for diff_doc, diff in zip(data["differences"], report.differences, strict=True):
        diff_doc["changes"] = [{"path": p, "git": json.loads(g), "live": json.loads(v)}
                               for p, g, v in _json_fields(diff, redactor)]
        diff_doc["key"] = redactor.text(diff_doc["key"])
        if diff.step.impact:  # present only when the change outside git governs calls
            diff_doc["impact"] = [i.to_json() for i in diff.step.impact]
    return json.dumps(data, indent=2, ensure_ascii=False)


def _json_fields(diff: Difference, redactor: Redactor) -> list[tuple[str, str, str]]:
    return [(p, _as_json(g), _as_json(v)) for p, g, v in _field_texts(diff, redactor)]


def _as_json(text: str) -> str:
    """``format_value`` output is JSON except for ``(sensitive)``; keep it valid JSON."""
    try:
        json.loads(text)
    except ValueError:
        return json.dumps(text)
    return text


# --- markdown --------------------------------------------------------------------------------


def _cell(text: str, width: int = 200) -> str:
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _name(text: str) -> str:
    """An object name as Markdown text: it may hold ``<``, ``*``, ``_``, ``[``... which must
    show as written rather than open an HTML tag, a ``<details>`` block or emphasis."""
    return re.sub(r"([*_\[\]~])", r"\\\1", _cell(html.escape(text, quote=False)))


def _html(text: str, width: int = 200) -> str:
    """Text inside an HTML element (``<summary>``), where Markdown is not interpreted."""
    text = text.replace("\n", " ")
    return html.escape(text if len(text) <= width else text[: width - 1] + "…", quote=False)


def _markdown(report: DriftReport, redactor: Redactor, limit: int) -> str:
    """Summary table, then per-object details while they fit in ``limit`` characters; with
    thousands of differences the table itself is cut, so the whole stays under the limit
    (an issue body holds at most 65,536 characters)."""
    where = f" in `{_cell(safe_target(report.target))}`" if report.target else ""
    tail = _md_tail(report, redactor, limit // 4)
    if not report.drifted:
        return "\n".join([f"### No drift{where}", "", "The area matches the manifests.", "", tail])
    head = [f"### Drift{where}: {_objects_differ(report)} from git", "", f"{_counts(report)}.", "",
            "| | Object | What | Last change |", "|---|---|---|---|"]
    budget = limit - len("\n".join(head)) - len(tail) - 400
    listed: list[Difference] = []
    for diff in report.differences:
        step = diff.step
        row = (f"| {SYMBOL[step.action]} | `{_cell(step.kind)}` {_name(redactor.text(step.key))} "
               f"| {diff.what} | {_name(redactor.text(_who(diff)))} |")
        if len(row) + 1 > budget:
            break
        head.append(row)
        listed.append(diff)
        budget -= len(row) + 1
    head.append("")
    blocks: list[str] = []
    shown = 0
    for diff in listed:
        block = _md_details(diff, redactor)
        if len(block) + 1 > budget:
            break
        if block:
            blocks.append(block)
        budget -= len(block) + 1
        shown += 1
    unlisted = len(report.differences) - len(listed)
    if unlisted:
        blocks.append(f"… and {plural(unlisted, 'more object')} not listed (cut to stay short; "
                      "run `apimctl drift` for all of them).\n")
    elif shown < len(listed):
        blocks.append(f"… details of {plural(len(listed) - shown, 'more object')} cut to stay "
                      "short; run `apimctl drift` for all of them.\n")
    return "\n".join([*head, *blocks, tail])


def _md_details(diff: Difference, redactor: Redactor) -> str:
    step = diff.step
    rows = _field_texts(diff, redactor)
    if not rows:
        return ""
    lines = [f"<details><summary>{SYMBOL[step.action]} {_cell(step.kind)} "
             f"{_html(redactor.text(step.key))} ({plural(len(rows), 'field')})</summary>", "",
             "| Field | Git | Live |", "|---|---|---|"]
    lines += [f"| `{_cell(p)}` | `{_cell(g)}` | `{_cell(v)}` |" for p, g, v in rows]
    if step.impact:
        lines += ["", "Impact of the change outside git:", ""]
        lines += [f"- {_name(redactor.text(i.text))}" for i in step.impact]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def _md_tail(report: DriftReport, redactor: Redactor, budget: int) -> str:
    """Ignore rules, duplicates, unmanaged objects and what recorded callers see now
    (``--replay``, within ``budget`` characters)."""
    lines: list[str] = []
    if report.rules:
        lines += ["**Accepted changes outside git** (ignore rules):", ""]
        lines += [f"- `{_cell(r.target)}`: {_cell(_reason(r.reason))}"
                  for r in report.rules[:50]]
        lines.append("")
    if report.ignored:
        lines.append(f"{plural(len(report.ignored), 'ignored difference')} found.")
        lines.append("")
    if report.duplicates:
        lines += ["**Duplicates** (live copies sharing one identity):", ""]
        lines += [f"- {_cell(duplicate_line(d), 500)}" for d in report.duplicates[:50]]
        lines.append("")
    if report.unmanaged:
        names = ", ".join(f"`{_cell(u.kind)}` {_name(u.key)}" for u in report.unmanaged[:50])
        more = f" and {len(report.unmanaged) - 50} more" if len(report.unmanaged) > 50 else ""
        lines += [f"Unmanaged (not in git, left alone): {names}{more}", ""]
    alert = replay_alert(report.plan.replay, redactor, budget, against="the drift")
    if alert:
        lines += [alert, ""]
    return "\n".join(lines)
