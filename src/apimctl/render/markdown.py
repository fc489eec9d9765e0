"""The plan as Markdown for a pull-request comment: ``apimctl plan --format markdown``.

Layout: a title with the totals, a summary table, a ``> [!WARNING]`` alert listing risky steps
(deletes, limit changes), warnings, one collapsible ``<details>`` per step with a table of
its field changes, then unmanaged objects and ignored fields. The whole comment stays within
``limit`` characters (GitHub refuses comments over 65,536): blocks are kept whole, and the
steps that do not fit are summarised in one line (``... and 412 more objects: ...``).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final

from apimctl import kinds
from apimctl.plans.model import ACTIONS, WRITE_ONLY_NOTE, Impact, Plan, Step
from apimctl.plans.replay import Replay
from apimctl.render.style import (
    SYMBOLS,
    FieldLine,
    Redactor,
    Risk,
    duplicate_line,
    field_lines,
    format_value,
    plural,
    risks,
    safe_target,
)

DEFAULT_LIMIT: Final = 60_000
MIN_LIMIT: Final = 2_000
MAX_CELL: Final = 150
"""Longer values are cut in tables (with an ellipsis)."""
GROUP_FROM: Final = 20
"""Plans of more steps than this are shown grouped by service and package."""
MAX_ROWS: Final = 40
"""Rows per step table at most; the rest are counted in a last row."""
RESERVE: Final = 700
"""Room kept for the closing summary line and the compact unmanaged/ignored lines."""

_BACKTICKS = re.compile(r"`+")


def render_plan(plan: Plan, *, limit: int = DEFAULT_LIMIT, saved: str | None = None) -> str:
    """The plan as Markdown of at most ``limit`` characters (``limit`` >= 2,000). A plan of
    more than :data:`GROUP_FROM` steps is shown grouped by service and package; ``saved``
    names the file holding the whole plan (``plan --out``), said when steps are left out."""
    if limit < MIN_LIMIT:
        raise ValueError(f"markdown limit must be at least {MIN_LIMIT} characters, got {limit}")
    redactor = Redactor(plan)
    doc = _Document(limit, redactor)
    doc.add(_head(plan, redactor))
    doc.add(_risk_alert(risks(plan, redactor), _cutting(plan), plan.affected_keys(), redactor,
                        doc.room() - RESERVE))
    doc.add(replay_alert(plan.replay, redactor, doc.room() - RESERVE))
    doc.add(_warnings([redactor.text(w) for w in plan.warnings], doc.room() - RESERVE))
    doc.add(_duplicates(plan, redactor, doc.room() - RESERVE))
    tail = _tail(plan, redactor, (doc.room() - RESERVE) // 4)
    shown = 0
    steps = grouped(plan.steps) if len(plan.steps) > GROUP_FROM else [(None, s) for s in plan.steps]
    heading = None
    for group, step in steps:
        block = _details(step, redactor)
        if group is not None and group != heading:
            block = f"#### {group[0]} {code(_cut(redactor.text(group[1]), MAX_CELL))}\n\n{block}"
        if not doc.fits(block, reserve=RESERVE + len(tail) + 2):
            break
        doc.add(block)
        heading = group
        shown += 1
    doc.add(_more([s for _, s in steps[shown:]], saved))
    doc.add(tail)
    text = doc.text()
    if len(text) <= limit:
        return text
    # Only reachable with a limit close to the minimum and a long head: fall back to the bare
    # summary, which always fits.
    return redactor.text("\n\n".join([_head(plan, redactor), _more(plan.steps)]).strip() + "\n")


class _Document:
    """Parts joined by blank lines, measured after secret scrubbing.

    Free text is scrubbed before it is escaped (an escaped secret would no longer match); the
    finished parts are scrubbed once more here.
    """

    def __init__(self, limit: int, redactor: Redactor) -> None:
        self.limit = limit
        self.redactor = redactor
        self.parts: list[str] = []
        self.size = 0

    def room(self) -> int:
        """Characters still free (the size counts a separator after every part)."""
        return self.limit - self.size

    def fits(self, part: str, *, reserve: int = 0) -> bool:
        return self.size + len(self.redactor.text(part)) + 2 + reserve <= self.limit

    def add(self, part: str) -> None:
        if not part:
            return
        part = self.redactor.text(part)
        self.parts.append(part)
        self.size += len(part) + 2

    def text(self) -> str:
        return "\n\n".join(self.parts) + "\n"


def _head(plan: Plan, redactor: Redactor) -> str:
    counts = plan.summary()
    lines = ["## apimctl plan", ""]
    if plan.target:
        dialect = f" (dialect {code(plan.dialect)}: {_inline(plan.dialect_reason)})" if plan.dialect else ""
        lines += [f"Target: {code(_cut(redactor.text(safe_target(plan.target)), 200))}{dialect}", ""]
    if plan.has_changes:
        lines.append(
            f"**Plan:** {counts['create']} to create, {counts['update']} to update, "
            f"{counts['delete']} to delete."
        )
    else:
        lines.append("**No changes.** The area matches the manifests.")
    lines += [
        "",
        "| Create | Update | Delete | Unmanaged |",
        "|---:|---:|---:|---:|",
        f"| {counts['create']} | {counts['update']} | {counts['delete']} | {counts['unmanaged']} |",
    ]
    return "\n".join(lines)


def _cutting(plan: Plan) -> list[tuple[Step, Impact]]:
    """The impact lines of changes that cut off or tighten keys, in plan order."""
    return [(step, item) for step in plan.steps for item in step.impact if item.guarded]


def _risk_alert(items: list[Risk], cutting: list[tuple[Step, Impact]], affected: int,
                redactor: Redactor, budget: int) -> str:
    if not items and not cutting:
        return ""
    deletes = sum(1 for r in items if r.path is None)
    limits = len(items) - deletes
    what = [f"deletes {plural(deletes, 'object')}"] if deletes else []
    what += [f"changes {plural(limits, 'limit')}"] if limits else []
    if cutting:
        what.append(f"has {plural(len(cutting), 'change')} that cut off or tighten keys "
                    f"({plural(affected, 'key')} in all)")
    intro = f"> [!WARNING]\n> This plan {' and '.join(what)}. Review before applying.\n>"
    lines = [f"> - {_risk_line(r, redactor.text(r.key))}" for r in items]
    lines += [f"> - {step.kind} {code(_cut(redactor.text(step.key), MAX_CELL))}: "
              f"{_inline(_cut(redactor.text(item.text), 500))}" for step, item in cutting]
    return "\n".join([intro, *_capped(lines, budget - len(intro) - 1, lambda n: f"> - ... and {n} more")])


def replay_alert(found: Replay | None, redactor: Redactor, budget: int, *, against: str = "the plan") -> str:
    """What recorded callers would see (``--replay``): a warning when some answer changes
    (``against``: what the changes are blamed on, the plan or the drift)."""
    if found is None:
        return ""
    apart = (f"{plural(found.unknown_keys, 'call')} with a key the area does not know, "
             f"{plural(found.unmatched, 'call')} no endpoint matched and {plural(found.bad, 'bad record')} "
             f"are not counted against {against}.")
    if not found.changed:
        return f"Replayed {plural(found.calls, 'recorded call')}: none would get another answer. {apart}"
    intro = (f"> [!WARNING]\n> Replayed {plural(found.calls, 'recorded call')}: {found.changed} would get "
             f"another answer. {apart}\n>")
    lines = []
    for group in found.ordered():
        examples = ", ".join(code(_cut(redactor.text(e), MAX_CELL)) for e in group.examples)
        lines.append(f"> - {code(_cut(redactor.text(group.change), MAX_CELL))}: {plural(group.calls, 'call')}, "
                     f"{plural(len(group.keys), 'key')}, {plural(len(group.applications), 'application')}: "
                     f"{code(group.before)} → {code(group.after)} (decided by {group.step}); e.g. {examples}")
    return "\n".join([intro, *_capped(lines, budget - len(intro) - 1, lambda n: f"> - ... and {n} more")])


def _risk_line(risk: Risk, key: str) -> str:
    if risk.path is None:
        return f"delete {risk.kind} {code(_cut(key, MAX_CELL))}"
    before, after = (code(_cut(format_value(v), MAX_CELL)) for v in (risk.before, risk.after))
    return f"{risk.kind} {code(_cut(key, MAX_CELL))}: {code(risk.path)} {before} → {after}"


def _warnings(warnings: Sequence[str], budget: int) -> str:
    if not warnings:
        return ""
    intro = "**Warnings:**\n"
    lines = [f"- {_inline(_cut(w, 500))}" for w in warnings]
    return intro + "\n".join(_capped(lines, budget - len(intro), lambda n: f"- ... and {n} more"))


def _duplicates(plan: Plan, redactor: Redactor, budget: int) -> str:
    """Live copies sharing one identity: what is kept and what repair deletes."""
    if not plan.duplicates:
        return ""
    lines = [f"- {_inline(_cut(redactor.text(duplicate_line(d)), 500))}" for d in plan.duplicates]
    return "\n".join(["**Duplicates** (live copies sharing one identity):", "",
                      *_capped(lines, budget, lambda n: f"- … and {n} more")])


def _details(step: Step, redactor: Redactor) -> str:
    lines = field_lines(step, redactor)
    if step.action == "create":
        count, table = plural(len(lines), "field"), _create_table(lines)
    elif step.action == "update":
        count, table = plural(len(lines), "change"), _update_table(lines)
    else:
        count = ""
        table = f"Deleted on apply (live id {code(step.id)})." if step.id else "Deleted on apply."
    title = f"{SYMBOLS[step.action]} {step.action} {step.kind} {redactor.text(step.key)}"
    title += f" ({count})" if count else ""
    if step.impact:
        table += "\n\n**Impact:**\n\n" + "\n".join(
            f"- {'⚠️ ' if i.guarded else ''}{_inline(_cut(redactor.text(i.text), 500))}" for i in step.impact)
    return f"<details><summary>{html.escape(title)}</summary>\n\n{table}\n\n</details>"


def _create_table(lines: list[FieldLine]) -> str:
    rows = [f"| {cell(line.path)} | {cell(format_value(line.after))} |" for line in lines]
    return "\n".join(["| Field | Value |", "|---|---|", *_rows(rows, 2)])


def _update_table(lines: list[FieldLine]) -> str:
    if not lines:
        return "No field changes."
    rows = [
        f"| {cell(line.path)} | {_inline(_cut(line.words, 500))} | |" if line.words and line.named else
        f"| {cell(line.path)} | {cell(format_value(line.before))} | {cell(format_value(line.after))} |"
        for line in lines
    ]
    return "\n".join(["| Path | Before | After |", "|---|---|---|", *_rows(rows, 3)])


def _rows(rows: list[str], columns: int) -> list[str]:
    if len(rows) <= MAX_ROWS:
        return rows
    rest = len(rows) - MAX_ROWS + 1
    return [*rows[: MAX_ROWS - 1], "| " + f"... and {rest} more |" + " |" * (columns - 1)]


def grouped(steps: Sequence[Step]) -> list[tuple[tuple[str, str] | None, Step]]:
    """The steps by the top-level object they belong to (a service with its endpoints and
    error sets, a package with its plans), groups in the order they first appear."""
    order: dict[tuple[str, str], int] = {}
    out = []
    for step in steps:
        kind = kinds.get(step.kind)
        group = (kind.parent, kinds.split_first(step.key)[0] or step.key) if kind.parent else (step.kind, step.key)
        order.setdefault(group, len(order))
        out.append((group, step))
    return sorted(out, key=lambda pair: order[pair[0]] if pair[0] else 0)


def _more(steps: Sequence[Step], saved: str | None = None) -> str:
    """``... and 412 more objects: 400 updates, 12 creates`` for the steps not shown, and
    where the whole plan is."""
    if not steps:
        return ""
    counts = Counter(step.action for step in steps)
    order = sorted(ACTIONS, key=lambda a: (-counts[a], ACTIONS.index(a)))
    parts = [plural(counts[a], a) for a in order if counts[a]]
    whole = (f"the whole plan is in {code(saved)}" if saved
             else "the whole plan: `apimctl plan --format json`")
    return (f"... and {plural(len(steps), 'more object')}: {', '.join(parts)} (not shown: comment "
            f"length limit; {whole}).")


def _tail(plan: Plan, redactor: Redactor, budget: int) -> str:
    """Unmanaged objects and ignored fields: listed when they fit ``budget``, else counted."""
    full = "\n\n".join(p for p in (_unmanaged(plan, redactor), _ignored(plan, redactor),
                                    _write_only(plan, redactor)) if p)
    if len(full) <= budget:
        return full
    lines = []
    if plan.unmanaged:
        lines.append(f"**Unmanaged:** {plural(len(plan.unmanaged), 'object')} left alone "
                     "(use `--prune` to delete; list omitted for length).")
    if plan.ignored:
        lines.append(f"**Ignored:** {plural(len(plan.ignored), 'accepted out-of-band change')} "
                     "(list omitted for length).")
    if plan.write_only:
        lines.append(f"**Write-only secrets:** {plural(len(plan.write_only), 'field')} "
                     f"{WRITE_ONLY_NOTE} (list omitted for length).")
    return "\n\n".join(lines)


def _write_only(plan: Plan, redactor: Redactor) -> str:
    if not plan.write_only:
        return ""
    lines = [f"**Write-only secrets:** {WRITE_ONLY_NOTE}.", ""]
    for item in plan.write_only:
        target = code(redactor.text(f"{item.address}:{item.path}"))
        lines.append(f"- {target}: {'sent by this plan' if item.sent else 'not compared, not sent'}")
    return "\n".join(lines)


def _unmanaged(plan: Plan, redactor: Redactor) -> str:
    if not plan.unmanaged:
        return ""
    title = html.escape(f"Unmanaged: {plural(len(plan.unmanaged), 'object')} (left alone; use --prune to delete)")
    items = "\n".join(f"- {u.kind} {code(redactor.text(u.key))}" for u in plan.unmanaged)
    return f"<details><summary>{title}</summary>\n\n{items}\n\n</details>"


def _ignored(plan: Plan, redactor: Redactor) -> str:
    if not plan.ignored:
        return ""
    lines = ["**Ignored** (accepted out-of-band changes, not planned):", ""]
    for entry in plan.ignored:
        reason = redactor.text(entry.get("reason") or "")
        target = code(redactor.text(entry.get("target", "?")))
        lines.append(f"- {target}: {_inline(reason)}" if reason else f"- {target}")
    return "\n".join(lines)


def _capped(lines: list[str], budget: int, more: Callable[[int], str]) -> list[str]:
    """As many of ``lines`` as fit ``budget`` characters, then a line counting the rest."""
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        rest = len(lines) - i - 1
        reserve = len(more(rest)) + 1 if rest else 0
        if used + len(line) + 1 + reserve > budget:
            return [*kept, more(len(lines) - i)]
        kept.append(line)
        used += len(line) + 1
    return kept


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _inline(text: str) -> str:
    """Free text on one line of Markdown, with markup characters escaped."""
    text = " ".join(text.split())
    return re.sub(r"([\\`*_{}\[\]<>#|!~])", r"\\\1", text)


def code(text: str) -> str:
    """``text`` as a code span, whatever backticks it contains (CommonMark fencing rules)."""
    text = " ".join(text.splitlines()) if "\n" in text or "\r" in text else text
    runs = [len(m.group()) for m in _BACKTICKS.finditer(text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(text: str) -> str:
    """A value for a table cell: cut to :data:`MAX_CELL`, a code span, ``|`` escaped."""
    return code(_cut(text, MAX_CELL)).replace("|", "\\|")
