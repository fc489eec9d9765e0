"""Duplicates: live objects, or nested items of one object, that share one identity.

The platform lets some of them happen (two maintenance events named ``Upgrade``, two methods
``GET`` in one endpoint, after a retried create or a hand-made copy). Planning no longer fails
on them: :mod:`apimctl.planning.matching` keeps one copy (the one pinned by ``id:``, else the
oldest by ``created``, else the first listed), the :class:`~apimctl.planning.steps.Builder`
reports every group in ``Plan.duplicates`` and, with ``--repair-duplicates``, deletes the
other copies: whole objects as delete steps, nested items as a change of the owner's update
(``methods[GET] (duplicates)``: before the ids found, after the one kept), which apply's
collection writes carry out (:mod:`apimctl.applying.collections`).

Without repair nothing guesses: :func:`check_duplicates` refuses an apply that would write to
an object whose copies are not told apart by an ``id:`` pin.

Duplicates left alone are changes still due: :func:`pending` is what ``plan
--detailed-exitcode`` counts with the steps (exit 2), so a CI gate sees them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.kinds.ops import as_list
from apimctl.plans.model import DUPLICATES, Change, Duplicate, Plan, Step
from apimctl.platform import parse_datetime

PINNED = "pinned by id"
REPAIR_HINT = ("apply --repair-duplicates deletes the extra copies (keeping the one shown), "
               "or pin one with `id:`")


def keeper(items: Sequence[Mapping[str, Any]], pin: str | None = None) -> tuple[int, str]:
    """Index of the copy to keep among raw ``items`` and why: the pinned id, else the oldest
    by ``created``, else the first listed."""
    if pin is not None:
        for i, item in enumerate(items):
            if str(item.get("id")) == pin:
                return i, PINNED
    # compared as instants, not as text: ``...:00Z`` (no milliseconds) is later than
    # ``...:00.500Z`` written the same second, though it sorts after it as text
    created = [parse_datetime(item.get("created")) for item in items]
    if all(moment is not None for moment in created):
        oldest = min(range(len(items)), key=lambda i: (created[i], i))
        return oldest, f"oldest (created {items[oldest].get('created')})"
    return 0, "first listed"


def _groups(items: list[Mapping[str, Any]], key_field: str | None
            ) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    """Items sharing one identity (``key_field``, or the id for lists of references)."""
    by_key: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        ident = item.get(key_field) if key_field else item.get("id")
        if ident not in (None, ""):
            by_key.setdefault(str(ident), []).append(item)
    for ident, group in by_key.items():
        if len(group) > 1:
            shown = ident if key_field else str(group[0].get("name") or ident)
            yield shown, group


def _paths(kind: Kind) -> tuple[str, ...]:
    """The keyed lists and sets of ``kind``, sorted (made when asked: only for the live
    objects whose nested items the reader found duplicated, :attr:`LiveObject.keeps_lists`;
    none in an area without duplicates)."""
    return tuple(sorted(set(kind.keyed) | set(kind.compare.sets)))


def _visit(kind: Kind, raw: Mapping[str, Any], schema: str, shown: str
           ) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    """Duplicate groups of the keyed lists (and lists of references) under ``raw``."""
    for path in _paths(kind):
        prefix, _, name = path.rpartition(".")
        if prefix != schema or name not in raw:
            continue
        items = [i for i in as_list(raw.get(name)) if isinstance(i, Mapping)]
        key_field = kind.keyed.get(path)
        if key_field is None and not any("id" in i for i in items):
            continue  # a set of plain values (domains): not items with an identity
        at = f"{shown}.{name}" if shown else name
        for ident, group in _groups(items, key_field):
            yield f"{at}[{ident}]", group
        if key_field is None:
            continue
        for item in items:  # deeper keyed lists (a method's response filters)
            yield from _visit(kind, item, path, f"{at}[{item.get(key_field)}]")


def nested_duplicates(kind: Kind, key: str, raw: Mapping[str, Any],
                      repair: bool) -> list[Duplicate]:
    """Every group of nested items of one live object that share an identity."""
    out = []
    for path, group in _visit(kind, raw, "", ""):
        index, reason = keeper(group)
        ids = tuple(str(i.get("id", "")) for i in group)
        if len(set(ids)) < len(ids) and len(set(ids)) == 1:
            reason = f"listed {len(ids)} times"
        out.append(Duplicate(kind.name, key, ids, ids[index], reason, path, repair))
    return out


def repair_changes(found: Sequence[Duplicate]) -> list[Change]:
    """The owner's changes that delete the extra copies of its nested items."""
    return [Change(f"{d.path}{DUPLICATES}", list(d.ids), [d.keep]) for d in found]


def pending(plan: Plan) -> list[Duplicate]:
    """The groups of duplicates the plan leaves alone (``--repair-duplicates`` deletes them)."""
    return [d for d in plan.duplicates if not d.repair]


def warning(plan: Plan) -> str | None:
    """The plan's warning line about the duplicates it found, if any."""
    left = pending(plan)
    if not left:
        return None
    return f"the area holds {len(left)} group(s) of duplicates (see Duplicates): {REPAIR_HINT}"


def _top(path: str) -> str:
    return re.split(r"[.\[ ]", path, maxsplit=1)[0]


def guesses(plan: Plan) -> list[str]:
    """Steps that would write to an object whose copies nothing tells apart (no repair, no
    pin): apply must not pick one."""
    open_ = [d for d in plan.duplicates if not d.repair and d.reason != PINNED]
    out = []
    for step in plan.steps:
        for dup in open_:
            if step.address != dup.address:
                continue
            if dup.path and not any(_top(c.path) == _top(dup.path) for c in step.changes):
                continue  # the step leaves that collection alone
            out.append(f"{step.action} {step.address}: {dup.where} has {len(dup.ids)} copies "
                       f"(ids {', '.join(dup.ids)})")
    return out


def check_duplicates(plan: Plan) -> None:
    """Refuse, before anything is written, a plan that would have to guess between copies."""
    found = guesses(plan)
    if found:
        raise PlanError("the plan writes to objects the area holds more than once:\n  "
                        + "\n  ".join(found) + f"\n{REPAIR_HINT}; nothing was written")


def is_repair(step: Step) -> bool:
    """A step that only deletes duplicates (shown as such by renderers)."""
    return bool(step.changes) and all(c.path.endswith(DUPLICATES) for c in step.changes)
