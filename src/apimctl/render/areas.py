"""``apimctl diff`` as text, JSON and Markdown.

The JSON document is described in ``docs/diff-format.md`` and by ``schemas/diff.schema.json``
(``format_version`` 1). In every format a secret field shows as ``(sensitive)``, whatever its
values, a field a side leaves at its default as ``(default)`` (JSON: the side's key is
absent), and every string passes through the scrubber (:mod:`apimctl.sensitive`), so a value
read from the environment never shows.
"""

from __future__ import annotations

import json
from typing import Any

from apimctl import sensitive
from apimctl.plans.comparison import DEFAULT, STATUSES, Comparison, FieldDifference, Side
from apimctl.render.style import SENSITIVE_TEXT

FORMAT_VERSION = 1
_DEFAULT_TEXT = "(default)"
_HEADINGS = {"different": "different", "source-only": "only in {source}", "target-only": "only in {target}"}


def render_diff(comparison: Comparison, fmt: str) -> str:
    """The comparison in ``fmt`` (text, json or markdown), ending with a newline."""
    if fmt == "json":
        return json.dumps(diff_document(comparison), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _markdown(comparison)
    return _text(comparison)


def diff_document(comparison: Comparison) -> dict[str, Any]:
    """The JSON document :func:`render_diff` prints, as Python data."""
    return {
        "format_version": FORMAT_VERSION,
        "source": _side(comparison.source),
        "target": _side(comparison.target),
        "summary": {"identical": comparison.identical,
                    **{s.replace("-", "_"): comparison.count(s) for s in STATUSES}},
        "objects": [
            {"address": d.address, "kind": d.kind, "key": d.key, "status": d.status,
             "fields": [_field(f) for f in d.fields]}
            for d in comparison.differences],
    }


def _side(side: Side) -> dict[str, Any]:
    return {"name": side.name, "from": _scrub(side.label), "dialect": side.dialect}


def _field(change: FieldDifference) -> dict[str, Any]:
    out: dict[str, Any] = {"path": change.path, "sensitive": change.sensitive}
    for name, value in (("source", change.source), ("target", change.target)):
        if value is not DEFAULT:
            out[name] = SENSITIVE_TEXT if change.sensitive else _scrub(value)
    return out


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return sensitive.scrub(value)
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _shown(change: FieldDifference, value: Any) -> str:
    if value is DEFAULT:
        return _DEFAULT_TEXT
    if change.sensitive:
        return SENSITIVE_TEXT
    return json.dumps(_scrub(value), ensure_ascii=False)


def _summary(comparison: Comparison) -> str:
    if not comparison.differs:
        return f"No differences: {comparison.identical} objects identical."
    return (f"{comparison.count('different')} different, {comparison.count('source-only')} only in "
            f"{comparison.source.name}, {comparison.count('target-only')} only in {comparison.target.name}, "
            f"{comparison.identical} identical.")


def _title(comparison: Comparison) -> str:
    return (f"{comparison.source.name} ({_scrub(comparison.source.label)}) -> "
            f"{comparison.target.name} ({_scrub(comparison.target.label)})")


def _text(comparison: Comparison) -> str:
    lines = [f"Comparing {_title(comparison)}", ""]
    names = {"source": comparison.source.name, "target": comparison.target.name}
    for diff in comparison.differences:
        if diff.status == "different":
            lines.append(f"  ~ {diff.address}")
            lines += [f"      {f.path}: {_shown(f, f.source)} -> {_shown(f, f.target)}" for f in diff.fields]
        else:
            mark = "-" if diff.status == "source-only" else "+"
            lines.append(f"  {mark} {diff.address} ({_HEADINGS[diff.status].format(**names)})")
    if comparison.differs:
        lines.append("")
    lines.append(_summary(comparison))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(comparison: Comparison) -> str:
    source, target = comparison.source.name, comparison.target.name
    lines = [f"### apimctl diff: {_cell(_title(comparison))}", "", f"**{_summary(comparison)}**", ""]
    if comparison.differs:
        lines += [f"| Object | Field | {_cell(source)} | {_cell(target)} |", "|---|---|---|---|"]
        for diff in comparison.differences:
            if diff.status != "different":
                where = source if diff.status == "source-only" else target
                lines.append(f"| `{_cell(diff.address)}` | | {'present' if where == source else ''} | "
                             f"{'present' if where == target else ''} |")
                continue
            for change in diff.fields:
                lines.append(f"| `{_cell(diff.address)}` | `{_cell(change.path)}` | "
                             f"{_cell(_shown(change, change.source))} | {_cell(_shown(change, change.target))} |")
        lines.append("")
    return "\n".join(lines) + "\n"
