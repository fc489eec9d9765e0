"""``apimctl rollback RUN_ID``: the plan that undoes a journaled apply.

From the run's journal (:mod:`apimctl.applying.journal`) and the area as it is now,
:func:`plan_rollback` makes an ordinary :class:`~apimctl.plans.model.Plan`, shown, saved and
applied like any other (``apply --plan``, whose stale check the plan's fingerprints feed):

- each object the run created is deleted (its children go with it: only the topmost created
  object of a tree is deleted), the ones that used others first;
- each field the run changed is set back to its value before the run (the changes of the
  run's update steps, inverted);
- each object the run deleted is created again, with the children that went with it, from
  the image the journal kept of it before the first write (its references by name, so they
  point to the new ids); it gets a new id, and its write-only secrets cannot come back
  (:attr:`Rollback.lost` says so).

The steps of a run that stopped (partial) are undone as far as they were written; a step that
started and recorded no end (a crash) is undone when the area shows it happened.

Before anything, every object the run touched (and only those) is read again and compared
with what the run left, the way apply's convergence check compares
(:func:`apimctl.applying.converge.remaining_changes`): an object gone, replaced, or that no
longer matches the run's step was changed by someone else since; the rollback is refused,
naming each, unless ``force``. A change whose values the journal does not hold (a secret:
it holds ``(sensitive)``) cannot be restored identical, and is said so.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from apimctl import kinds, sensitive
from apimctl.applying import converge
from apimctl.applying.bodies import SECRET_PATHS, StepError, env_mapping
from apimctl.applying.calls import Client
from apimctl.applying.converge import Seen
from apimctl.applying.journal import Run
from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.planning.diff import flatten
from apimctl.plans.model import Change, Plan, Step
from apimctl.state.normalise import normalise

_TOKEN = re.compile(r"\[([^\]]*)\]|\.?([^.\[]+)")


@dataclass
class Rollback:
    """The inverse plan of a run, what cannot come back identical, and what changed since."""

    plan: Plan
    lost: list[str] = field(default_factory=list)  # what cannot come back identical, and why
    changed: list[str] = field(default_factory=list)  # objects changed after the run


def path_tokens(path: str) -> list[tuple[str, bool]]:
    """``methods[GET].notes`` -> ``[(methods, False), (GET, True), (notes, False)]`` (``True``:
    a key of a keyed collection)."""
    return [(m.group(1), True) if m.group(1) is not None else (m.group(2), False)
            for m in _TOKEN.finditer(path)]


def known_ids(run: Run) -> dict[str, str]:
    """The ids the run knew: of the objects its plan named, and of those it created."""
    ids: dict[str, str] = {}
    for step in run.plan.steps:
        if step.id:
            ids[step.address] = step.id
        if step.parent and step.parent_id:
            ids.setdefault(step.parent, step.parent_id)
    ids.update(run.created)
    return ids


async def plan_rollback(client: Client, run: Run, *, force: bool = False,
                        env: Mapping[str, str] | None = None) -> Rollback:
    """The plan undoing ``run`` (see the module docstring), reading again only the objects
    the run touched; refused with :class:`~apimctl.errors.PlanError` when one was changed
    since, unless ``force``."""
    ids = known_ids(run)
    written = [s for s in run.plan.steps
               if (s.address in run.done or s.address in run.begun) and not s.temporary]
    raw = await converge.read_again(client, converge.wanted(written, ids))
    found = converge.found_in(raw, ids)
    environ = env_mapping(env)
    created = {s.address for s in written if s.action == "create"}
    out = Rollback(Plan(target=run.area, dialect=run.plan.dialect, dialect_reason="the run's dialect"))
    for step in written:
        obj = found.of(step, ids)
        if step.address in run.begun and not _happened(run, step, obj, environ):
            continue  # started, no end recorded, and the area shows nothing of it
        out.changed += _changed_since(run, step, obj, environ)
        if step.action == "create" and obj is not None:
            if not kinds.get(step.kind).write.deletable:
                out.lost.append(f"{step.address}: created by the run; a {step.kind} cannot be deleted "
                                "through the management API: remove it by hand")
            elif step.parent not in created:  # a child goes with its parent
                out.plan.steps.append(_undo_create(step, obj, ids))
        elif step.action == "update" and obj is not None:
            undo, lost = _undo_update(step, obj)
            out.lost += lost
            if undo is not None:
                out.plan.steps.append(undo)
        elif step.action == "delete":
            made, lost = _recreate(step, run.deleted.get(step.address))
            out.plan.steps += made
            out.lost += lost
    if out.changed and not force:
        raise PlanError(f"run {run.run_id} cannot be rolled back: changed after the run:\n  "
                        + "\n  ".join(out.changed) + "\nnothing was written (--force rolls back anyway)")
    _order(out.plan, run.plan)
    return out


def _happened(run: Run, step: Step, obj: Seen | None, env: Mapping[str, str]) -> bool:
    if step.action == "create":
        return obj is not None
    if step.action == "delete":
        return obj is None
    return obj is not None and _differs(run, step, obj, env) is None


def _differs(run: Run, step: Step, obj: Seen, env: Mapping[str, str]) -> str | None:
    try:
        return converge.remaining_changes(run.plan, step, obj, env)
    except StepError:  # a secret variable no longer set: the fields that are not secret
        plain = Step(step.action, step.kind, step.key, step.id, step.parent, step.parent_id,
                     step.changes, step.depends_on, _without_secrets(step))
        return converge.remaining_changes(run.plan, plain, obj, env)


def _without_secrets(step: Step) -> dict[str, Any]:
    desired = copy.deepcopy(step.desired or {})
    for path in SECRET_PATHS.get(step.kind, ()):
        head, _, rest = path.partition(".")
        if not rest:
            desired.pop(head, None)
        elif isinstance(desired.get(head), dict):
            desired[head].pop(rest, None)
    return desired


def _changed_since(run: Run, step: Step, obj: Seen | None, env: Mapping[str, str]) -> list[str]:
    """How the object differs from what ``step`` left (empty: as the run left it)."""
    if step.action == "delete":
        return [f"{step.address}: deleted by the run, and exists again"] if obj is not None else []
    if obj is None:
        return [f"{step.address}: no longer exists (or was replaced)"]
    why = _differs(run, step, obj, env)
    return [] if why is None else [f"{step.address}: changed since the run ({why})"]


def _undo_create(step: Step, obj: Seen, ids: Mapping[str, str]) -> Step:
    parent_id = (ids.get(step.parent) if step.parent else None) or step.parent_id
    return Step("delete", step.kind, step.key, id=obj.id, parent=step.parent, parent_id=parent_id)


def _recreate(step: Step, images: list[dict[str, Any]] | None) -> tuple[list[Step], list[str]]:
    """The creates bringing back what ``step`` deleted (the object and the children that went
    with it), from the images the journal kept; what cannot come back identical."""
    if not images:
        return [], [f"{step.address}: deleted by the run, and the journal holds no image of it: "
                    "apply its manifests to recreate it"]
    lost = [f"{step.address}: recreated with a new id (references to it are rewired by name)"]
    made: list[Step] = []
    for image in images:
        kind = kinds.get(str(image["kind"]))
        doc = {k: v for k, v in dict(image["doc"]).items()
               if k not in {c.manifest_key for c in kinds.children_of(kind)}}
        for path in SECRET_PATHS.get(kind.name, ()):
            head, _, rest = path.partition(".")
            holder = doc.get(head) if rest else doc
            name = rest or head
            if isinstance(holder, dict) and holder.get(name) == sensitive.MASK:
                del holder[name]
                lost.append(f"{kind.name}:{image['key']}: {path} is a secret the journal does not "
                            "hold: set it again from the manifests (apply them)")
        parent = image.get("parent")
        made.append(Step("create", kind.name, str(image["key"]), parent=parent,
                         depends_on=(parent,) if parent else (), desired=doc,
                         changes=tuple(flatten(kind, normalise(kind, doc)))))
    return made, lost


def _undo_update(step: Step, obj: Seen) -> tuple[Step | None, list[str]]:
    """The update setting ``step``'s fields back, and the changes that cannot be."""
    desired = copy.deepcopy(step.desired or {})
    undone: list[Change] = []
    lost: list[str] = []
    for change in step.changes:
        if change.sensitive:
            lost.append(f"{step.address}: {change.path} is a secret the journal does not hold; "
                        "it is sent from the manifests' variables as they are now")
            undone.append(Change(change.path, change.after, change.before, True))
        elif _set(kinds.get(step.kind), desired, change.path, change.before):
            undone.append(Change(change.path, change.after, change.before))
        else:
            lost.append(f"{step.address}: {change.path} cannot be set back automatically; "
                        f"set it to {change.before!r} by hand")
    if not undone:
        return None, lost
    return Step("update", step.kind, step.key, id=obj.id, parent=step.parent,
                parent_id=step.parent_id, changes=tuple(undone),
                desired=desired), lost


def _set(kind: Kind, desired: dict[str, Any], path: str, value: Any) -> bool:
    """Set ``path`` (a change's path) of a manifest-shaped object to ``value`` (``None``: take
    it away): a keyed collection (``methods[GET]``) is a list there, its items found by their
    key field. ``False`` when the path cannot be followed."""
    tokens = path_tokens(path)
    here: Any = desired
    schema = ""
    for i, (token, keyed) in enumerate(tokens):
        last = i == len(tokens) - 1
        if keyed:
            field_name = kind.keyed.get(schema)
            if field_name is None or not isinstance(here, list):
                return False
            at = next((n for n, item in enumerate(here)
                       if isinstance(item, dict) and str(item.get(field_name)) == token), None)
            if last:
                if value is None:
                    if at is not None:
                        del here[at]
                else:
                    item = ({field_name: token, **_fields(kind, schema, value)} if isinstance(value, dict)
                            else value)
                    if at is None:
                        here.append(item)
                    else:
                        here[at] = item
                return True
            if at is None:
                return False
            here = here[at]
            continue
        schema = f"{schema}.{token}" if schema else token
        if not isinstance(here, dict):
            return False
        if last:
            if value is None and i:
                here.pop(token, None)
            else:
                here[token] = _listed(kind, schema, value)
            return True
        nxt = here.get(token)
        if nxt is None:
            nxt = [] if schema in kind.keyed else {}
            here[token] = nxt
        here = nxt
    return False


def _listed(kind: Kind, schema: str, value: Any) -> Any:
    """``value`` (a normal form at ``schema``) in manifest shape: keyed collections, maps in
    the normal form, are lists of items carrying their key."""
    if not isinstance(value, dict):
        return copy.deepcopy(value)
    field_name = kind.keyed.get(schema)
    if field_name is None:
        return _fields(kind, schema, value)
    return [{field_name: key, **_fields(kind, schema, item)} if isinstance(item, dict) else item
            for key, item in value.items()]


def _fields(kind: Kind, schema: str, value: dict[str, Any]) -> dict[str, Any]:
    return {name: _listed(kind, f"{schema}.{name}", sub) for name, sub in value.items()}


def _after_what_they_name(creates: list[Step]) -> list[Step]:
    """The recreates, each waiting for those of the kinds it may name (a maintenance event for
    the endpoints it lists, a plan for the services it grants)."""
    out = []
    for step in creates:
        named = {r.kind for r in kinds.get(step.kind).references}
        needs = tuple(o.address for o in creates
                      if o is not step and (o.kind in named or _names_parent(named, o)))
        out.append(replace(step, depends_on=(*step.depends_on, *needs)))
    return out


def _names_parent(named: set[str], step: Step) -> bool:
    parent = kinds.get(step.kind).parent
    return parent is not None and parent in named


def _order(plan: Plan, run_plan: Plan) -> None:
    """Deletes in the reverse of the order the run created them (what used an object goes
    first), then the restoring updates; each delete waits for the deletes of what used it."""
    deletes = [s for s in plan.steps if s.action == "delete"]
    creates = _after_what_they_name([s for s in plan.steps if s.action == "create"])
    recreated = tuple(s.address for s in creates)  # what an update may name again
    updates = [Step(s.action, s.kind, s.key, s.id, s.parent, s.parent_id, s.changes,
                    (*s.depends_on, *recreated), s.desired) for s in plan.steps if s.action == "update"]
    position = {s.address: i for i, s in enumerate(run_plan.steps)}
    deletes.sort(key=lambda s: -position.get(s.address, 0))
    deleted = {s.address for s in deletes}
    parents = {s.address: s.parent for s in run_plan.steps}

    def deleted_with(addr: str | None) -> str | None:
        while addr is not None and addr not in deleted:
            addr = parents.get(addr)
        return addr

    users: dict[str, set[str]] = {}
    for step in run_plan.steps:
        user = deleted_with(step.address)
        for needed in step.depends_on:
            target = deleted_with(needed)
            if user is not None and target is not None and target != user:
                users.setdefault(target, set()).add(user)
    restored = tuple(s.address for s in updates)  # an object stops being used before it goes
    ordered = [Step(s.action, s.kind, s.key, s.id, s.parent, s.parent_id, s.changes,
                    (*restored, *sorted(users.get(s.address, ()))), s.desired) for s in deletes]
    steps = [*creates, *updates, *ordered]
    known = {s.address for s in steps}
    plan.steps[:] = [replace(s, depends_on=tuple(d for d in dict.fromkeys(s.depends_on) if d in known))
                     for s in steps]
