"""The plan as a terminal reader expects it, in the manner of ``terraform plan``.

``apimctl plan``/``drift``/``apply`` print :func:`render_plan` for ``--format text`` (the
default). Unchanged fields are hidden, secrets show as ``(sensitive)``, and with
``color=False`` the output is plain and deterministic (the goldens in the tests rely on it).
``apimctl apply`` prints :func:`render_apply_summary` when it finishes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import click

from apimctl.plans.model import WRITE_ONLY_NOTE, Impact, Plan, Step
from apimctl.plans.replay import Replay
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.render.style import (
    SYMBOLS,
    FieldLine,
    Redactor,
    duplicate_line,
    field_lines,
    format_value,
    plural,
    safe_target,
)

_COLORS = {"+": "green", "~": "yellow", "-": "red"}

Paint = Callable[[str, str], str]


def _painter(color: bool) -> Paint:
    """``paint(text, style)``: ANSI styling when ``color``, the text unchanged otherwise."""
    def paint(text: str, style: str) -> str:
        if not color:
            return text
        if style == "bold":
            return click.style(text, bold=True)
        return click.style(text, fg=_COLORS.get(style, style))
    return paint


def render_replay(found: Replay) -> str:
    """What replaying a log found (``--replay LOG``), as text (ends with a newline)."""
    lines = [f"Replayed {found.calls} recorded call(s): {found.changed} would get another answer."]
    for group in found.ordered():
        lines.append(f"  {group.change}: {group.calls} call(s), {len(group.keys)} key(s), "
                     f"{len(group.applications)} application(s): {group.before} → {group.after} "
                     f"(decided by {group.step})")
        lines += [f"      e.g. {example}" for example in group.examples]
    if found.unknown_keys:
        lines.append(f"  {found.unknown_keys} call(s) with a key the area does not know (not counted against the plan)")
    if found.unmatched:
        lines.append(f"  {found.unmatched} call(s) no endpoint matched (not counted against the plan)")
    if found.bad:
        lines.append(f"  {found.bad} bad record(s) skipped:")
        lines += [f"      {where}" for where in found.bad_shown]
    return "\n".join(lines) + "\n"


def dialect_note(plan: Plan) -> str:
    """`` (dialect mashery: <why>)`` after the target, when the plan knows its dialect."""
    if not plan.dialect:
        return ""
    return f" (dialect {plan.dialect}: {plan.dialect_reason})" if plan.dialect_reason else f" (dialect {plan.dialect})"


def render_plan(plan: Plan, *, color: bool = False) -> str:
    """The whole plan: header, steps with field lines, unmanaged, ignored, warnings, totals."""
    paint = _painter(color)
    redactor = Redactor(plan)
    out: list[str] = []
    if plan.target:
        out += [f"Target: {safe_target(plan.target)}{dialect_note(plan)}", ""]
    if plan.steps:
        out += ["apimctl will perform the following actions:", ""]
        for step in plan.steps:
            out += _step(step, redactor, paint)
            out.append("")
    out += _unmanaged(plan, paint)
    out += _duplicates(plan, paint)
    out += _ignored(plan, paint)
    out += _write_only(plan, paint)
    out += [paint(f"Warning: {w}", "yellow") for w in plan.warnings]
    if plan.warnings:
        out.append("")
    out += impact_summary(plan)
    if plan.replay is not None:
        out += [render_replay(plan.replay), ""]
    out.append(_totals(plan, paint))
    out += _budget(plan)
    return redactor.text("\n".join(out) + "\n")


def _budget(plan: Plan) -> list[str]:
    """``Budget: 23 calls (8 reads, 4 lease, 6 writes, 5 checks), about 6 s at --qps 4.``
    under the totals of a plan with changes that was budgeted (``plan`` and ``apply``)."""
    return [plan.budget.text()] if plan.budget is not None and plan.has_changes else []


def _step(step: Step, redactor: Redactor, paint: Paint) -> list[str]:
    symbol = SYMBOLS[step.action]
    head = f"  {paint(symbol, symbol)} {step.action} {step.kind} {json.dumps(step.key, ensure_ascii=False)}"
    return ([head] + [_field(line, paint) for line in field_lines(step, redactor)]
            + [_impact(item, paint) for item in step.impact])


def _impact(item: Impact, paint: Paint) -> str:
    """``! 3 keys (2 applications) on plan Pro lose access to ...``: ``!`` when the change cuts
    off or tightens keys, ``#`` for what is only told."""
    return f"      {paint('!', 'red') if item.guarded else '#'} {item.text}"


def _field(line: FieldLine, paint: Paint) -> str:
    mark = paint(line.symbol, line.symbol)
    if line.words:
        return f"      {mark} {line.words}" if line.named else f"      {mark} {line.path}: {line.words}"
    if line.sensitive:
        return f"      {mark} {line.path}: (sensitive)"
    if line.symbol == "+":
        return f"      {mark} {line.path}: {format_value(line.after)}"
    if line.symbol == "-":
        return f"      {mark} {line.path}: {format_value(line.before)} -> null"
    return f"      {mark} {line.path}: {format_value(line.before)} -> {format_value(line.after)}"


def impact_summary(plan: Plan) -> list[str]:
    """What reading the keys cost and what the plan cuts off or tightens (when keys were read)."""
    info = plan.impact
    if info is None or not info.read:
        return []
    what = "application" if info.applications else "key"
    line = (f"Caller impact: {plural(info.items, what)} read in {plural(info.calls, 'list call')}; "
            f"the plan cuts off or tightens {plural(plan.affected_keys(), 'key')}.")
    return [line, ""]


def _unmanaged(plan: Plan, paint: Paint) -> list[str]:
    if not plan.unmanaged:
        return []
    lines = [paint("Unmanaged (left alone; use --prune to delete):", "bold")]
    lines += [f"  {u.kind} {json.dumps(u.key, ensure_ascii=False)}" for u in plan.unmanaged]
    return [*lines, ""]


def _duplicates(plan: Plan, paint: Paint) -> list[str]:
    if not plan.duplicates:
        return []
    lines = [paint("Duplicates (live copies sharing one identity):", "bold")]
    lines += [f"  {duplicate_line(d)}" for d in plan.duplicates]
    return [*lines, ""]


def _ignored(plan: Plan, paint: Paint) -> list[str]:
    if not plan.ignored:
        return []
    lines = [paint("Ignored (accepted out-of-band changes, not planned):", "bold")]
    for entry in plan.ignored:
        target = entry.get("target", "?")
        reason = entry.get("reason")
        lines.append(f"  {target} (reason: {reason})" if reason else f"  {target}")
    return [*lines, ""]


def _write_only(plan: Plan, paint: Paint) -> list[str]:
    if not plan.write_only:
        return []
    lines = [paint(f"Write-only secrets: {WRITE_ONLY_NOTE}.", "bold")]
    lines += [f"  {w.address}:{w.path}: {'sent by this plan' if w.sent else 'not compared, not sent'}"
              for w in plan.write_only]
    return [*lines, ""]


def render_totals(plan: Plan, *, color: bool = False) -> str:
    """The plan's last line: ``Plan: 1 to create, 2 to update, 0 to delete.``"""
    return _totals(plan, _painter(color))


def _totals(plan: Plan, paint: Paint) -> str:
    if not plan.has_changes and plan.duplicates:
        return paint("No changes planned, but the area holds duplicates (see above).", "yellow")
    if not plan.has_changes:
        return paint("No changes. The area matches the manifests.", "green")
    counts = plan.summary()
    return paint(
        f"Plan: {counts['create']} to create, {counts['update']} to update, {counts['delete']} to delete.",
        "bold",
    )


COLLAPSE_AT = 40
"""Beyond this many, the steps done and not started are counted per action and kind (failed
and not converged ones are always listed: each has its reason)."""


def render_apply_summary(result: ApplyResult, *, plan: Plan | None = None, color: bool = False,
                         full: bool = False) -> str:
    """What an apply did: done, failed, skipped and not converged steps with reasons, then totals.

    With ``plan``, its resolved secret values are scrubbed from the reasons too. Long lists of
    steps done or not started are collapsed to counts unless ``full``.
    """
    paint = _painter(color)
    redactor = Redactor(plan or Plan())
    out: list[str] = []
    sections = (("Done", result.done, "green"), ("Failed", result.failed, "red"),
                ("Not started" if result.interrupted else "Skipped", result.skipped, "yellow"),
                ("Not converged", result.non_converged, "red"))
    for title, outcomes, style in sections:
        if outcomes:
            out.append(paint(f"{title}:", style))
            collapse = not full and len(outcomes) > COLLAPSE_AT and style != "red"
            out += _counted(outcomes, paint) if collapse else [_outcome(o, paint) for o in outcomes]
            out.append("")
    if result.stopped and not result.interrupted:
        out += [paint(f"Stopped early: {result.stopped}", "red"), ""]
    out.append(paint(_apply_headline(result), "bold"))
    out.append(f"Calls: {result.calls} ({result.write_calls} writes, {result.read_calls} reads) "
               f"in {result.seconds:.1f} s.")
    return redactor.text("\n".join(out) + "\n")


def _counted(outcomes: list[StepOutcome], paint: Paint) -> list[str]:
    """``  + create endpoint: 660`` per action and kind, in the order they first came."""
    counts = Counter((o.action, o.address.partition(":")[0]) for o in outcomes)
    lines = [f"  {paint(SYMBOLS.get(action, '?'), SYMBOLS.get(action, '?'))} {action} {kind}: {n}"
             for (action, kind), n in counts.items()]
    return [*lines, f"  ({len(outcomes)} steps; --full lists each)"]


def _outcome(outcome: StepOutcome, paint: Paint) -> str:
    kind, _, key = outcome.address.partition(":")
    symbol = SYMBOLS.get(outcome.action, "?")
    line = f"  {paint(symbol, symbol)} {outcome.action} {kind} {json.dumps(key, ensure_ascii=False)}"
    return f"{line}: {outcome.reason}" if outcome.reason else line


def _apply_headline(result: ApplyResult) -> str:
    counts = Counter(o.action for o in result.done)
    done = f"{counts['create']} created, {counts['update']} updated, {counts['delete']} deleted"
    if result.interrupted:
        return (f"Apply interrupted: {len(result.done)} done ({done}), {len(result.failed)} failed, "
                f"{len(result.skipped)} not started. Rerun to converge.")
    if result.ok:
        return f"Apply complete: {done}."
    problems = ", ".join(
        f"{len(items)} {label}" for label, items in
        (("failed", result.failed), ("skipped", result.skipped), ("not converged", result.non_converged))
        if items
    )
    waiting = result.awaited_domains
    if waiting:
        return (f"Apply finished partially: {done}; {problems}. A rerun cannot converge yet: "
                f"the new domain{'s' if len(waiting) > 1 else ''} {', '.join(waiting)} "
                f"{'wait' if len(waiting) > 1 else 'waits'} for approval by the area's operator "
                "(on apimctl serve: POST /operator/areas/AREA/domains/ID/approve with its "
                "--operator-token, ID from GET /domains; or start it with --auto-approve-domains); "
                "rerun once "
                f"{'they are' if len(waiting) > 1 else 'it is'} active.")
    if result.done:
        return f"Apply finished partially: {done}; {problems}. Rerun to converge."
    return f"Apply failed: nothing was written; {problems}."
