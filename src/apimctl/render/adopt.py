"""Render what ``apimctl drift --adopt`` did (:class:`apimctl.plans.adoption.Adoption`) as text, JSON or
Markdown; the Markdown form is the body of the pull request the nightly job opens.

Per change: the object and field, the value git had and the live one now written, the file
and line written (or why not), who changed it and when where the platform records it ("not
recorded" otherwise), and the change's impact on package keys. Secrets are never shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from apimctl.plans.adoption import ADDED, REMOVED, Adopted, Adoption
from apimctl.render.drift import DEFAULT_LIMIT, _cell, _name
from apimctl.render.style import Redactor, format_value, plural, safe_target

NOT_RECORDED = "not recorded"


def render_adoption(adoption: Adoption, fmt: str = "text", *, limit: int = DEFAULT_LIMIT) -> str:
    """The adoption in ``fmt`` (``text``, ``json`` or ``markdown``), ending with a newline."""
    redactor = Redactor(adoption.report.plan)
    renderers: dict[str, Callable[[Adoption], str]] = {
        "text": _text, "json": lambda a: json.dumps(_json(a), indent=2, ensure_ascii=False),
        "markdown": lambda a: _markdown(a, limit)}
    if fmt not in renderers:
        raise ValueError(f"unknown adoption format {fmt!r}")
    out = redactor.text(renderers[fmt](adoption))
    return out if out.endswith("\n") else out + "\n"


def _value(value: Adopted, which: str) -> str:
    if value.sensitive:
        return "(sensitive)"
    return format_value(value.git if which == "git" else value.live)


def who(value: Adopted) -> str:
    """``by alice at 2026-...``; what the area does not record is said to be so."""
    if value.who is None and value.when is None:
        return NOT_RECORDED
    who_ = f"by {value.who}" if value.who else f"by whom {NOT_RECORDED}"
    return f"{who_} at {value.when}" if value.when else f"{who_}, when {NOT_RECORDED}"


def _field(value: Adopted) -> str:
    return f"{value.address} {value.path}".rstrip()


def _what(value: Adopted) -> str:
    if value.status == ADDED:
        return f"+ {value.address}: added in the area, written into the manifests"
    if value.status == REMOVED:
        return f"- {value.address}: deleted in the area, removed from the manifests"
    return f"~ {_field(value)}: git {_value(value, 'git')} -> live {_value(value, 'live')}"


def _path(value: Adopted) -> str:
    return f"`{_cell(value.path)}`" if value.path else "(the object)"


def _cells(value: Adopted) -> tuple[str, str]:
    """(git, live) of a Markdown row."""
    if value.status == ADDED:
        return "(none)", "(added)"
    if value.status == REMOVED:
        return "(declared)", "(deleted)"
    return f"`{_cell(_value(value, 'git'))}`", f"`{_cell(_value(value, 'live'))}`"


def _text(adoption: Adoption) -> str:
    target = adoption.report.target
    where = f" from {safe_target(target)}" if target else ""
    if not adoption.values:
        return f"No drift{where}: nothing to adopt."
    lines = [f"Adopted {plural(len(adoption.adopted), 'change')}{where} into "
             f"{plural(len(adoption.written or adoption.edits), 'file')}.", ""]
    for value in adoption.adopted:
        lines.append(_what(value))
        lines.append(f"    written at {value.where}; last change {who(value)}")
        lines += [f"    impact: {text}" for text in value.impact]
    if adoption.left:
        lines += ["", "Left for a person:"]
        for value in adoption.left:
            at = f" ({value.where})" if value.file else ""
            lines.append(f"  {_field(value)}{at}: {value.why}")
    return "\n".join(lines)


def _json(adoption: Adoption) -> dict[str, object]:
    data = adoption.to_json()
    if data.get("target"):
        data["target"] = safe_target(str(data["target"]))
    return data


def _markdown(adoption: Adoption, limit: int) -> str:
    target = adoption.report.target
    where = f" from `{_cell(safe_target(target))}`" if target else ""
    lines = [f"### Adopt changes made by hand{where}", "",
             f"{plural(len(adoption.adopted), 'value')} changed in the area outside git "
             "written into the manifests where each is defined.", "",
             "| Object | Field | Git | Live | File | Last change | Impact |",
             "|---|---|---|---|---|---|---|"]
    budget = limit - 2000
    cut = 0
    for value in adoption.adopted:
        git, live = _cells(value)
        row = (f"| `{_cell(value.kind)}` {_name(value.key)} | {_path(value)} "
               f"| {git} | {live} "
               f"| `{_cell(value.where)}` | {_cell(who(value))} "
               f"| {_cell('; '.join(value.impact)) or 'none'} |")
        if len(row) + 1 > budget:
            cut += 1
            continue
        lines.append(row)
        budget -= len(row) + 1
    if cut:
        lines.append(f"\n… and {plural(cut, 'more value')} (run `apimctl drift --adopt` to see all).")
    if adoption.left:
        lines += ["", "**Left for a person** (not written):", ""]
        for value in adoption.left[:100]:
            at = f" (`{_cell(value.where)}`)" if value.file else ""
            lines.append(f"- `{_cell(value.kind)}` {_name(value.key)} {_path(value)}{at}: "
                         f"{value.why}")
    return "\n".join(lines)
