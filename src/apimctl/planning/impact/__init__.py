"""Caller impact: who each change of a plan affects, from the area's live package keys.

``plan``, ``apply`` and ``drift`` call :func:`attach_impact` once the plan is built, with the
live state it was built from. It runs the rules of :mod:`apimctl.planning.impact.rules` twice:
first with a recorder, which notes the plans whose keys the changes need (and whether their
owners are needed: applications and members); then, if any, the keys of those plans are read
once (:func:`apimctl.state.keys.read_keys`: ``⌈keys/1000⌉`` list calls, or
``⌈applications/1000⌉`` when owners are needed) and the rules run again over them. The lines
go into each step's ``impact``; how they were made into ``Plan.impact``.

Modes (``--impact``): ``auto`` (the default) reads keys only when some change governs calls,
and turns a failed read into a warning; ``always`` reads the keys of every plan even when
nothing needs them and fails when the read fails; ``never`` reads nothing (what goes with a
delete is still said: it needs no read). A plan with nothing that governs calls makes no call.

Drift (``reverse=True``) reads its plan the other way round: each update's change is what
happened outside git, from the manifests' value to the live one, so its impact is computed on
the change reversed; an object added outside git is told by its keys.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from apimctl.errors import ApimctlError, PlanError
from apimctl.planning.impact.rules import count, impacts_of
from apimctl.planning.impact.world import Known, Recorder, World
from apimctl.plans.model import Change, Impact, ImpactRead, Plan, Step
from apimctl.speed import collector_paused
from apimctl.state.keys import KeyRead, PageReader, read_keys
from apimctl.state.live import LiveState

MODES: Final = ("auto", "always", "never")


async def attach_impact(client: object, plan: Plan, live: LiveState, mode: str = "auto", *,
                        reverse: bool = False) -> None:
    """Add the impact lines of ``plan``'s steps (in place) and record how they were made."""
    if mode not in MODES:
        raise PlanError(f"--impact must be one of {', '.join(MODES)}, not {mode!r}")
    world = World(live)
    steps = [_reversed(s) for s in plan.steps] if reverse else list(plan.steps)
    recorder = Recorder()
    for step in steps:
        impacts_of(step, world, recorder)
    wanted = world.all_plan_ids() if mode == "always" else recorder.plan_ids
    read: KeyRead | None = None
    if mode != "never" and (wanted or mode == "always"):
        try:
            if not isinstance(client, PageReader):
                raise PlanError("this client cannot read the package keys page by page")
            with collector_paused(promote=True):  # pages of plain dicts, reduced as they come
                read = await read_keys(client, wanted, applications=recorder.owners)
        except ApimctlError as exc:
            if mode == "always":
                raise
            plan.impact = ImpactRead(mode, unknown=str(exc))
            plan.warnings.append(f"the caller impact is unknown: reading the package keys failed: {exc}")
            return
    source = Known(read) if read is not None else None
    lines = {s.address: _lines(s, world, source) for s in steps}
    plan.steps = [dataclasses.replace(s, impact=lines[s.address]) if lines[s.address] else s
                  for s in plan.steps]
    plan.impact = ImpactRead(mode, read is not None, read.calls if read else 0,
                             read.items if read else 0, bool(read and read.applications))


def _lines(step: Step, world: World, keys: Known | None) -> tuple[Impact, ...]:
    """The step's lines: all of them with the keys read, else only those not about keys."""
    if keys is None:
        return tuple(i for i in impacts_of(step, world, Recorder()) if i.keys is None)
    return impacts_of(step, world, keys)


def _reversed(step: Step) -> Step:
    """A drift step as the out-of-band change it stands for: an update from the manifests'
    values to the live ones. Objects added or deleted outside git are not told by keys (a
    create has no impact)."""
    if step.action == "update":
        return dataclasses.replace(step, changes=tuple(Change(c.path, c.after, c.before, c.sensitive)
                                                       for c in step.changes))
    return dataclasses.replace(step, action="create")


def check_affected_keys(plan: Plan, most: int | None) -> None:
    """Refuse, before anything is written, a plan whose changes cut off or tighten more keys
    than ``most`` (``--max-affected-keys``), naming each such change and its count."""
    if most is None or not plan.steps:
        return
    info = plan.impact
    if info is None or info.mode == "never" or info.unknown:
        why = (info.unknown if info is not None and info.unknown
               else "it was not made (--impact never, or a plan saved without it)")
        raise PlanError(f"--max-affected-keys {most} needs the plan's caller impact, and {why}; "
                        "nothing was written")
    affected = plan.affected_keys()
    if affected <= most:
        return
    named = [f"{s.address}{' ' + i.path if i.path else ''}: {i.text}"
             for s in plan.steps for i in s.impact if i.guarded]
    raise PlanError(f"the plan cuts off or tightens {count(affected, 'key')}, more than --max-affected-keys "
                    f"{most}:\n  " + "\n  ".join(named) + "\nnothing was written")
