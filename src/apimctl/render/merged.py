"""The plans of several areas as ONE pull-request comment: ``apimctl show --merge``.

Layout: a title with the totals, a ``> [!CAUTION]`` alert naming every area apply would refuse
(or that has no plan), a table of the areas (counts, keys cut off or tightened, the gates
apply holds), then each area's plan (:func:`apimctl.render.markdown.render_plan`, without its
title) folded in one ``<details>`` block. The comment stays within ``limit`` characters:
while it is longer, the largest fold is rendered shorter (its steps cut as a long plan's
are), and a fold that cannot shrink further gives way to a line saying where the whole plan
is (``artifacts``: the workflow run's artifacts). The table is never cut unless it alone is
over the limit.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from apimctl.plans.model import Plan
from apimctl.render.markdown import DEFAULT_LIMIT, MIN_LIMIT, code, render_plan
from apimctl.render.style import plural

GITHUB_LIMIT: Final = 65_536
"""The longest comment GitHub accepts."""
_TITLE = re.compile(r"\A## apimctl plan\n\n")


@dataclass(frozen=True)
class AreaReview:
    """One area of the review: its saved plan (``None`` when the area has none: its plan job
    failed or was refused) and the gates apply holds for it."""

    name: str
    source: str  # the plan file, named where the whole plan is
    plan: Plan | None
    refusals: tuple[str, ...] = ()  # why apply would refuse the plan (``--max-deletes 0: ...``)
    allowances: tuple[str, ...] = ()  # the gates it passes (``--max-deletes 5``)
    order: int = field(default=0, compare=False)

    @property
    def refused(self) -> bool:
        return self.plan is None or bool(self.refusals)


def render_merged(areas: Sequence[AreaReview], *, limit: int = DEFAULT_LIMIT,
                  artifacts: str | None = None) -> str:
    """One Markdown comment for the plans of ``areas`` (in the order given), of at most
    ``limit`` characters (``limit`` >= 2,000)."""
    if limit < MIN_LIMIT:
        raise ValueError(f"markdown limit must be at least {MIN_LIMIT} characters, got {limit}")
    head = "\n\n".join(p for p in (_title(areas), _alert(areas), _table(areas)) if p)
    folds = {a.name: _fold(a, _inner(a, limit)) for a in areas if a.plan is not None}
    final: set[str] = set()
    note = _cut_note(artifacts)
    while _size(head, folds, note if final or _shortened(folds) else "") > limit:
        open_folds = [a for a in areas if a.name in folds and a.name not in final]
        if not open_folds:
            break
        biggest = max(open_folds, key=lambda a: len(folds[a.name]))
        excess = _size(head, folds, note) - limit
        room = len(folds[biggest.name]) - excess - len(_fold(biggest, ""))
        if room >= MIN_LIMIT:
            folds[biggest.name] = _fold(biggest, _inner(biggest, room))
        else:
            folds[biggest.name] = _fold(biggest, _pointer(biggest, artifacts))
            final.add(biggest.name)
    cut = bool(final) or _shortened(folds)
    parts = [head, *(folds[a.name] for a in areas if a.name in folds), note if cut else ""]
    text = "\n\n".join(p for p in parts if p) + "\n"
    return text if len(text) <= limit else _table_only(areas, limit, note)


def _size(head: str, folds: dict[str, str], note: str) -> int:
    return len("\n\n".join(p for p in (head, *folds.values(), note) if p)) + 1


def _shortened(folds: dict[str, str]) -> bool:
    return any("(not shown: comment length limit" in f for f in folds.values())


def _title(areas: Sequence[AreaReview]) -> str:
    plans = [a.plan for a in areas if a.plan is not None]
    totals = {action: sum(p.summary()[action] for p in plans) for action in ("create", "update", "delete")}
    changing = sum(1 for p in plans if p.has_changes)
    lines = [f"## apimctl plan: {plural(len(areas), 'area')}", ""]
    if changing:
        lines.append(f"**{plural(changing, 'area')} to change:** {totals['create']} to create, "
                     f"{totals['update']} to update, {totals['delete']} to delete.")
    else:
        lines.append("**No changes.** Every area planned matches its manifests.")
    return "\n".join(lines)


def _alert(areas: Sequence[AreaReview]) -> str:
    refused = [a for a in areas if a.refused]
    if not refused:
        return ""
    lines = [f"> [!CAUTION]\n> Apply would stop at {_name(refused[0].name)}: "
             f"{plural(len(refused), 'area')} cannot be applied as planned.\n>"]
    for area in refused:
        why = "; ".join(area.refusals) if area.plan is not None else _NO_PLAN
        lines.append(f"> - {_name(area.name)}: {_escape(why)}")
    return "\n".join(lines)


_NO_PLAN = "no plan: the area's plan job failed or was refused (see its log)"


def _table(areas: Sequence[AreaReview]) -> str:
    rows = ["| Area | Create | Update | Delete | Unmanaged | Keys cut off or tightened | Gates |",
            "|---|---:|---:|---:|---:|---:|---|"]
    rows += [_row(a) for a in areas]
    return "\n".join(rows)


def _row(area: AreaReview) -> str:
    if area.plan is None:
        return f"| {_name(area.name)} | — | — | — | — | — | ⛔ {_escape(_NO_PLAN)} |"
    counts = area.plan.summary()
    gates = ("⛔ refused: " + "; ".join(area.refusals) if area.refusals
             else "✅ " + ", ".join(area.allowances) if area.allowances else "—")
    return (f"| {_name(area.name)} | {counts['create']} | {counts['update']} | {counts['delete']} "
            f"| {counts['unmanaged']} | {keys_cut(area.plan)} | {_escape(gates)} |")


def keys_cut(plan: Plan) -> str:
    """The keys the plan cuts off or tightens, as the table shows them: a count, ``unknown``
    (the impact could not be made) or ``not made`` (``--impact never``, or no impact in
    the file)."""
    info = plan.impact
    if info is None or info.mode == "never":
        return "not made"
    return "unknown" if info.unknown else str(plan.affected_keys())


def _inner(area: AreaReview, limit: int) -> str:
    """The area's plan without its title; a cut one names its file (the artifacts are named
    once, in the note under the folds)."""
    assert area.plan is not None
    return _TITLE.sub("", render_plan(area.plan, limit=limit, saved=area.source)).strip()


def _fold(area: AreaReview, body: str) -> str:
    assert area.plan is not None
    counts = area.plan.summary()
    state = (f"{counts['create']} to create, {counts['update']} to update, {counts['delete']} to delete"
             if area.plan.has_changes else "no changes")
    mark = "⛔ " if area.refusals else ""
    summary = html.escape(f"{mark}{area.name}: {state}")
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _pointer(area: AreaReview, artifacts: str | None) -> str:
    where = f"{code(area.source)}" + (f" ({_where(artifacts)})" if artifacts else "")
    return f"Not shown (comment length limit): the whole plan is in {where}."


def _cut_note(artifacts: str | None) -> str:
    where = _where(artifacts) if artifacts else "the saved plan files"
    return (f"Some plans are cut to keep this comment under GitHub's {GITHUB_LIMIT:,} characters; "
            f"the whole plans: {where}.")


def _where(artifacts: str) -> str:
    if re.fullmatch(r"https?://[^\s()<>]+", artifacts):
        return f"[the workflow run's artifacts]({artifacts})"
    return code(artifacts)


def _table_only(areas: Sequence[AreaReview], limit: int, note: str) -> str:
    """Only reachable with more areas than a comment holds rows for: the title, the alert
    and as many rows as fit, the rest counted."""
    head = "\n\n".join(p for p in (_title(areas), _alert(areas)) if p)
    table = _table(areas).splitlines()
    kept = table[:2]
    for row in table[2:]:
        if len(head) + sum(len(r) + 1 for r in (*kept, row)) + len(note) + 200 > limit:
            break
        kept.append(row)
    rest = len(table) - len(kept)
    more = f"... and {plural(rest, 'more area')} (not shown: comment length limit)." if rest else ""
    text = "\n\n".join(p for p in (head, "\n".join(kept), more, note) if p) + "\n"
    return text[:limit]


def _name(name: str) -> str:
    return f"**{_escape(name)}**"


def _escape(text: str) -> str:
    text = " ".join(html.escape(text, quote=False).split())
    return re.sub(r"([\\`*_{}\[\]#|!~])", r"\\\1", text)
