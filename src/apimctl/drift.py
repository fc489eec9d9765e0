"""Drift detection: what was changed in the area outside git, and, where the platform tells, by
whom and when.

``apimctl drift`` (``apimctl.cli.drift``) calls :func:`drift` with a :class:`DriftRequest`: the
manifests are read (and ``--target``/``--ignore`` checked) before the client is opened, then
:func:`detect_drift` reads the area. Drift is the plan of the
manifests against the live state (:func:`apimctl.planning.build.build_plan`, the same rules as
``plan``: ignores from ``settings.ignore`` and ``--ignore``, pruning from ``settings.prune``)
read from the other side: each step is a difference between git and the area.

- an update: fields of a declared object changed in the area (``cors.maxAge``: git 60,
  live 120);
- a create: a declared object is missing from the area (deleted outside git);
- a delete: an object exists in the area inside a collection the manifests declare exactly
  (an endpoint added by hand), or a top-level object the manifests prune;
- duplicates: a declared object, or nested items of one (methods, response filters, error
  messages, entitlements, an event's endpoints), held more than once in the area
  (``Plan.duplicates``; ``apply --repair-duplicates`` deletes the extra copies).

Unmanaged top-level objects are listed but are not drift (with ``prune``, or where
``settings.prune`` covers them, they are: apply would delete them).

Attribution comes from what the platform records: a service's ``editorHandle`` and
``updated`` (which move with every write to the service or anything in it, so they cover its
endpoints and error sets: ``ROLES.editor_recorded``, ``Kind.write.covered_by_parent``), and
``updated`` of plans, packages, roles and maintenance events. ``editorHandle`` is read with
one extra list call per 1,000 services, made only when a difference involves a service.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.planning import ManifestLike, PlanOptions, ignore_rules, parse_target, read_and_plan
from apimctl.planning.command import Keep, Notice, keep_nothing, quiet, read_manifests
from apimctl.planning.impact import attach_impact
from apimctl.plans.drift import Attribution, Difference, DriftReport, IgnoreNote
from apimctl.plans.model import Plan, Step
from apimctl.state.live import Lister, LiveObject, LiveState
from apimctl.state.normalise import canonical_datetime

EDITOR_FIELDS = "id,name,editorHandle,updated,revisionNumber"


@dataclass(frozen=True)
class Editor:
    """What the platform records of a service's last write."""

    who: str | None
    when: str | None
    revision: int | None


def _when(value: Any) -> str | None:
    return canonical_datetime(str(value)) if value not in (None, "") else None


def _parent_key(step: Step) -> str:
    """The key of the step's parent: from the step's parent address, else from its key (split
    at the first unescaped ``/``: service ``a/b`` owns ``a\\/b/E``)."""
    if step.parent:
        return step.parent.partition(":")[2]
    return kinds.split_first(step.key)[0] or step.key


def _owner(step: Step) -> tuple[str, str] | None:
    """The (kind, key) whose records say who touched the step's object: its parent's when
    the parent's records cover it (``Kind.write.covered_by_parent``)."""
    kind = kinds.get(step.kind)
    if kind.write.covered_by_parent and kind.parent is not None:
        return kind.parent, _parent_key(step)
    if step.action == "create" and kind.parent is not None:
        return kind.parent, _parent_key(step)
    if step.action == "create":
        return None  # a missing top-level object: the platform keeps no record of the delete
    return step.kind, step.key


def attribute(steps: Sequence[Step], live: LiveState,
              editors: Mapping[tuple[str, str], Editor]) -> list[Difference]:
    """A :class:`Difference` per step, with the attribution the live records give
    (``editors``: by kind name and id, :func:`read_editors`)."""
    objects: dict[tuple[str, str], LiveObject] = {
        (o.kind, o.key): o for k in kinds.KINDS for o in live.of(k.name)}
    out = []
    for step in steps:
        owner = _owner(step)
        obj = objects.get(owner) if owner else None
        if owner is None or obj is None:
            out.append(Difference(step))
            continue
        source = f"{owner[0]}:{owner[1]}"
        editor = editors.get((owner[0], obj.id))
        if editor is not None:
            att = Attribution(source, editor.who, editor.when or _when(obj.updated),
                              editor.revision if editor.revision is not None else obj.revision)
        else:
            att = Attribution(source, None, _when(obj.updated), obj.revision)
        out.append(Difference(step, att))
    return out


async def read_editors(client: Lister, recorded: Iterable[Kind]) -> dict[tuple[str, str], Editor]:
    """``editorHandle``, ``updated`` and ``revisionNumber`` of every object of the ``recorded``
    kinds (``ROLES.editor_recorded``), by kind name and id."""
    out = {}
    for kind in recorded:
        rows = await client.list_all(kind.collection_path(), [("fields", EDITOR_FIELDS)],
                                     page_size=1000)
        for row in rows:
            rev = row.get("revisionNumber")
            handle = row.get("editorHandle")
            out[kind.name, str(row.get("id"))] = Editor(
                str(handle) if handle not in (None, "") else None, _when(row.get("updated")),
                int(rev) if isinstance(rev, int) else None)
    return out


def report(manifest: ManifestLike, plan: Plan, live: LiveState,
           editors: Mapping[tuple[str, str], Editor], *, ignores: Sequence[str] = (),
           target: str = "") -> DriftReport:
    """The drift report of ``plan``, made of ``manifest`` against ``live`` (pure)."""
    settings = manifest.doc.get("settings") or {}
    rules = [IgnoreNote(f"{r.kind}:{r.key}:{r.path}", r.reason)
             for r in ignore_rules(settings, ignores)]
    return DriftReport(plan, attribute(plan.steps, live, editors), rules, target)


def _needs_editors(plan: Plan) -> list[Kind]:
    """The kinds whose editors the differences of ``plan`` are attributed to."""
    owners = {o[0] for o in map(_owner, plan.steps) if o is not None}
    return [k for k in (kinds.ROLES.editor_recorded,) if k.name in owners]


async def detect_drift(client: Lister, manifest: ManifestLike, *, ignores: Sequence[str] = (),
                       targets: Sequence[str] = (), target: str = "",
                       prune: bool = False, impact: str | None = None) -> DriftReport:
    """Read the area and report how it differs from ``manifest``.

    Costs the live read of ``plan`` plus, only when a difference involves a service (or its
    endpoints or error sets), one list call per 1,000 services for ``editorHandle``; and,
    with ``impact`` (``--impact``) when an out-of-band change governs calls, the read of the
    package keys it concerns (:mod:`apimctl.planning.impact`, each change read from git's
    value to the live one).
    """
    for text in targets:
        parse_target(text)
    # ``prune`` makes every undeclared top-level object drift, as ``apply --prune`` would
    # delete it
    plan, live = await read_and_plan(client, manifest, PlanOptions(
        prune=prune, targets=tuple(targets), ignores=tuple(ignores)))
    first = report(manifest, plan, live, {}, ignores=ignores, target=target)
    if impact is not None:
        await attach_impact(client, first.plan, live, impact, reverse=True)
        first.differences = attribute(first.plan.steps, live, {})
    recorded = _needs_editors(first.plan)
    if not recorded:
        return first
    editors = await read_editors(client, recorded)
    first.differences = attribute(first.plan.steps, live, editors)
    return first


@dataclass(frozen=True)
class DriftRequest:
    """The inputs of one drift check. ``target`` names the area in the report."""

    paths: tuple[str, ...]
    overlays: tuple[str, ...] = ()
    ignores: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    prune: bool = False
    target: str = ""
    impact: str | None = "auto"  # --impact; None: no caller impact


async def drift(request: DriftRequest, connect: Callable[[], AbstractAsyncContextManager[Lister]],
                *, notice: Notice = quiet, keep: Keep = keep_nothing) -> DriftReport:
    """The drift report of ``request``'s manifests against the area ``connect()`` opens a
    client to. Bad input is refused before the client is opened; warnings go to ``notice``,
    the manifests to ``keep``."""
    manifest = read_manifests(request.paths, request.overlays, request.targets, request.ignores,
                              notice, keep=keep)
    async with connect() as client:
        return await detect_drift(client, manifest, ignores=request.ignores,
                                  targets=request.targets, target=request.target,
                                  prune=request.prune, impact=request.impact)
