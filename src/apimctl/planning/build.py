"""Build the :class:`~apimctl.plans.model.Plan` that turns the live state into the manifests.

``apimctl plan``, ``apply`` and ``drift`` call :func:`read_and_plan` (reads the live state
through the client while the desired objects are made, finds the target's dialect, then
:func:`build_plan`, which is pure and never prints); :func:`make_plan` adds the callers each
change affects.

How a plan is made:

1. **Desired objects** are taken from the manifests, kind by kind as :mod:`apimctl.kinds`
   lists them; child kinds (endpoints, error sets, plans) become objects of their own.
2. **Identity**: each desired object is matched to a live object in the same parent by its
   natural key; ``id:`` pins it to a live id; ``previousNames`` find it under an old name
   (a rename is an update with a ``name`` change, never delete + create). Two live objects
   with one name are duplicates (:mod:`apimctl.planning.duplicates`): the pinned one, else
   the oldest, is managed; ``Plan.duplicates`` lists them (and nested items sharing a key),
   and ``repair_duplicates`` deletes the other copies.
3. **Ownership**: a top-level live object no manifest declares is *unmanaged*: listed and left
   alone unless pruning is on (``--prune`` or ``settings.prune``, per kind, optionally limited
   to fnmatch name patterns). Children of a declared object are deleted only when the
   manifest declares that collection (``endpoints: [...]`` is exact; omitted is left alone).
   A deleted live object whose name a pinned object (or another deleted duplicate) already
   uses gets its id in its key (``maintenanceEvent:Upgrade (id 9f2c...)``), so every step
   has an address of its own.
4. **Changes**: both sides are normalised (:mod:`apimctl.state.normalise`) and diffed
   (:mod:`apimctl.planning.diff`); ``settings.ignore`` / ``--ignore`` drop field paths (recorded in
   ``Plan.ignored``).
5. **Order**: ``graphlib.TopologicalSorter`` over ``depends_on`` (parents and referenced objects
   first for creates and updates, children and referrers first for deletes; a step freeing an
   endpoint route before one taking it, with a temporary route to break a swap:
   :mod:`apimctl.planning.routes`), ties broken by action, kind order and key so that plans
   are deterministic.
6. **Fingerprints** of every touched live object: its ``updated`` (and ``revisionNumber`` for
   services). Endpoints and error sets have no revision of their own: the service's
   ``(id, revisionNumber)`` covers them and is recorded under the service's address; likewise
   a created plan records its package.

Secrets: ``Step.desired`` carries the ``${VAR}`` reference text; resolved values go to
``Plan.secret_values`` keyed ``"<address>#<field path>"``. ``systemDomainAuthentication.password``
is write-only (never read back), so it cannot be compared: a changed password alone is not
detected; it is written whenever ``systemDomainAuthentication`` is created or changed.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Awaitable, Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from apimctl import kinds, sensitive
from apimctl.api.dialect import Detected, detect, setting_of
from apimctl.errors import PlanError
from apimctl.kinds.dialects import (
    SPEC_NAME,
    dialect_of,
    translate,
    translated_heads,
    validated_routes_by_method,
)
from apimctl.planning import comparing
from apimctl.planning.desired import Desires, ManifestLike, desired_of
from apimctl.planning.domains import domain_warnings
from apimctl.planning.impact import attach_impact
from apimctl.planning.matching import match
from apimctl.planning.order import dependencies, order
from apimctl.planning.routes import check_routes, route_dependencies
from apimctl.planning.rules import (
    NOT_PRUNABLE,
    check_ignores,
    check_targets,
    ignore_rules,
    parse_target,
    prune_rules,
    rotate_rules,
    select,
    targeted,
)
from apimctl.planning.steps import Builder
from apimctl.plans.model import Plan, Step, address
from apimctl.speed import collector_paused
from apimctl.state.live import Lister, LiveState, read_live, unnamed_sources

# --- entry points ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanOptions:
    """How to plan (the ``plan``, ``apply`` and ``drift`` options).

    ``prune``: delete undeclared top-level objects (``--prune``; ``settings.prune`` too);
    ``targets``: ``KIND:NAME`` patterns, only those and what they need are planned
    (``--target``); ``ignores``: ``KIND:NAME:PATH`` changes left out (``--ignore``);
    ``max_deletes``: refuse a plan deleting more (``--max-deletes``); ``repair_duplicates``:
    delete the extra live copies of declared objects and items; ``rotate``: ``KIND:KEY:PATH``
    patterns of write-only secrets to send (``--rotate``); ``impact``: how the callers each
    change affects are found (``auto``, ``always``, ``never``: ``--impact``; ``None``: not at
    all, :mod:`apimctl.planning.impact`).
    """

    prune: bool = False
    targets: tuple[str, ...] = ()
    ignores: tuple[str, ...] = ()
    max_deletes: int | None = None
    repair_duplicates: bool = False
    rotate: tuple[str, ...] = ()
    impact: str | None = None


def build_plan(manifest: ManifestLike, live: LiveState, options: PlanOptions | None = None, *,
               dialect: Detected | None = None, desired: Desires | None = None) -> Plan:
    """The plan turning ``live`` into what ``manifest`` declares (pure: no I/O; ``options``
    but ``impact``). ``dialect``: the target's (SUPPLEMENT §10; default ``spec``, not
    recorded in the plan): the manifests' values are compared and written in its vocabulary.
    ``desired``: the objects ``manifest`` declares, when made already (:func:`read_and_plan`
    makes them while the area is read)."""
    with collector_paused(promote=True):
        if desired is None:
            desired = desired_of(manifest)
        return _build(manifest, live, options or PlanOptions(), dialect, desired)


class _DesiredAhead:
    """The objects a manifest declares, made when called: what a plan needs of the manifest
    alone, made while the area is read (``read_live``'s ``meanwhile``), then given to
    :func:`build_plan` (``None`` until made)."""

    def __init__(self, manifest: ManifestLike) -> None:
        self.manifest = manifest
        self.desired: Desires | None = None

    def __call__(self) -> None:
        self.desired = desired_of(self.manifest)


def _build(manifest: ManifestLike, live: LiveState, options: PlanOptions,
           dialect: Detected | None, desired: Desires) -> Plan:
    targets, ignores = options.targets, options.ignores
    comparing.prepare()  # a running worker gets ready for the comparisons of a large plan
    doc = manifest.doc
    settings = doc.get("settings") or {}
    table = dialect_of(dialect.name if dialect else SPEC_NAME)
    dropped = _translate(desired, table)
    if not any(desired.get(k.name) for k in kinds.TOP_LEVEL if not k.read_only):
        raise PlanError("the manifests declare no objects: refusing to plan, since an empty "
                        "input would mean deleting everything (check the paths given)")
    parsed_targets = [parse_target(t) for t in targets]
    rules = ignore_rules(settings, ignores)
    routes_held = _routes_held(manifest, table.routes_by_method)
    with _routes_first(desired, table.routes_by_method, routes_held):
        matched = match(desired, live)
        builder = Builder(manifest, live, matched, rules, repair=options.repair_duplicates,
                          dialect=table)
        builder.rotate = rotate_rules(options.rotate)
        builder.tell_apart()  # the worker starts on the last pairs while the routes are checked
    if not routes_held:
        check_routes(desired, table.routes_by_method)
    builder.build(prune_rules(settings, options.prune))
    live_docs = {a: builder.live_doc(o) for a, o in builder.live_at.items()}
    deps = dependencies(builder.steps, builder.desired_at, live_docs)
    builder.steps.update(route_dependencies(builder.steps, builder.desired_at, live_docs, deps,
                                            live, table.routes_by_method))
    steps = {a: _with_deps(s, deps[a]) for a, s in builder.steps.items()}
    plan = builder.plan
    plan.steps = order(steps)
    if dialect is not None:
        plan.dialect, plan.dialect_reason = dialect.name, dialect.reason
    plan.warnings.extend(dropped)
    known: set[tuple[str, str]] = set()  # what ignore rules and targets may name
    if rules or parsed_targets:
        known = {(d.kind.name, d.key) for ds in desired.values() for d in ds}
        known |= {(o.kind, o.key) for k in kinds.KINDS for o in live.of(k.name)}
    check_ignores(rules, known)
    if parsed_targets:
        check_targets(parsed_targets, known)
        plan.steps = select(plan.steps, parsed_targets)
        kept = [u for u in plan.unmanaged
                if any(u.kind == k and fnmatch.fnmatchcase(u.key, n) for k, n in parsed_targets)]
        left_out = tuple(f"{address(u.kind, u.key)} {NOT_PRUNABLE}" for u in plan.unmanaged
                         if u not in kept)
        plan.unmanaged = kept
        plan.write_only = [w for w in plan.write_only if targeted(parsed_targets, w.kind, w.key)]
        plan.warnings = [w for w in plan.warnings if not w.startswith(left_out)]
        plan.warnings.append(f"only {', '.join(targets)} (--target) and what they need were planned; "
                             "other differences are not shown")
    plan.warnings.extend(domain_warnings(desired, live))
    _keep_relevant(plan)
    _check_deletes(plan, options.max_deletes)
    return plan


def _routes_held(manifest: ManifestLike, by_method: bool) -> bool:
    """Whether ``validate`` held the declared endpoints to the target's route rule (unique by
    method when ``by_method``, else by public domain and path) or a stricter one already."""
    settings = manifest.doc.get("settings")
    return manifest.validated and (by_method or not validated_routes_by_method(
        settings if isinstance(settings, dict) else {}))


@contextmanager
def _routes_first(desired: Desires, by_method: bool, held: bool) -> Iterator[None]:
    """Two declared objects claiming one route are refused before anything the block
    refuses: when it fails, the routes are checked first (unless ``held`` already)."""
    try:
        yield
    except Exception:
        if not held:
            check_routes(desired, by_method)
        raise


def _translate(desired: Desires, table: Any) -> list[str]:
    """The desired objects in the target's vocabulary (in place, on copies: the manifest stays
    as loaded); warnings for the fields of real deployments (SUPPLEMENT §10.8) a ``spec``
    target does not have, left out."""
    warnings = []
    for objs in desired.values():
        for obj in objs:
            heads = translated_heads(obj.kind)
            if heads.isdisjoint(obj.doc):
                continue  # no field translation reads: nothing to change
            obj.doc = {k: copy.deepcopy(v) if k in heads else v for k, v in obj.doc.items()}
            for path in translate(obj.kind, obj.doc, table):
                warnings.append(f"{obj.address}: {path} exists only in the mashery dialect; "
                                f"not written to this {table.name} target")
    return warnings


def _with_deps(step: Step, deps: tuple[str, ...]) -> Step:
    return Step(step.action, step.kind, step.key, step.id, step.parent, step.parent_id,
                step.changes, deps, step.desired)


def _keep_relevant(plan: Plan) -> None:
    """Fingerprints and secret values of the steps that remain (targets may drop some)."""
    addrs = {s.address for s in plan.steps} | {s.parent for s in plan.steps if s.parent}
    plan.fingerprints = {a: f for a, f in plan.fingerprints.items() if a in addrs}
    plan.secret_values = {k: v for k, v in plan.secret_values.items()
                          if k.partition("#")[0] in addrs}
    sensitive.register(*plan.secret_values.values())  # never shown, in any line
    plan.unmanaged.sort(key=lambda u: (kinds.ORDER[u.kind], u.key))


def _check_deletes(plan: Plan, max_deletes: int | None) -> None:
    deletes = [s.address for s in plan.steps if s.action == "delete"]
    if max_deletes is not None and len(deletes) > max_deletes:
        shown = ", ".join(deletes[:10]) + (", ..." if len(deletes) > 10 else "")
        objects = "object" if len(deletes) == 1 else "objects"
        raise PlanError(f"the plan deletes {len(deletes)} {objects}, more than --max-deletes "
                        f"{max_deletes} allows: {shown}")


class Reader(Protocol):
    """How an area is read for a plan: :func:`apimctl.state.live.read_live`, or a reader
    wrapping it (``apply`` keeps ids on the way, :mod:`apimctl.applying.reading`)."""

    def __call__(self, client: Lister, *, meanwhile: Callable[[], object] | None,
                 skip: Collection[str]) -> Awaitable[LiveState]: ...


async def read_and_plan(client: Lister, manifest: ManifestLike, options: PlanOptions | None = None,
                        *, read: Reader = read_live, skip: Collection[str] = ()) -> tuple[Plan, LiveState]:
    """The plan of the manifests against the area ``client`` reads, and the live state it was
    made from: what ``plan``, ``apply`` and ``drift`` share. The area is read by ``read``
    (the data sources the manifests do not name left out, and the top-level kinds ``skip``
    names: a resume reads what its steps need) while the desired objects are
    made, in the time this process would wait for the area; then the target's dialect is
    found (:func:`target_dialect`) and the plan built (:func:`build_plan`, ``options`` but
    ``impact``)."""
    ahead = _DesiredAhead(manifest)
    live = await read(client, meanwhile=ahead, skip=unnamed_sources(manifest.doc) | frozenset(skip))
    found = await target_dialect(client, manifest, live)
    return build_plan(manifest, live, options, dialect=found, desired=ahead.desired), live


async def make_plan(client: Lister, manifest: ManifestLike,
                    options: PlanOptions | None = None) -> Plan:
    """Read the live state through ``client`` and plan the manifests against it, with the
    callers each change affects when ``options.impact`` asks for them."""
    opts = options or PlanOptions()
    for text in opts.targets:  # fail on a bad target before any call is made
        parse_target(text)
    made, live = await read_and_plan(client, manifest, opts)
    if opts.impact is not None:
        await attach_impact(client, made, live, opts.impact)
    return made


async def target_dialect(client: Any, manifest: ManifestLike | None, live: LiveState) -> Detected:
    """The dialect of the area ``client`` reads (``--dialect``, ``settings.dialect``, or
    detected: :func:`apimctl.api.dialect.detect`), ``live`` having been read through it."""
    setting = setting_of(manifest.doc) if manifest is not None else None
    return await detect(client, setting, _telling(live))


def _telling(live: LiveState) -> list[dict[str, Any]]:
    """What detection needs of the live objects of the kind that tells (endpoints), one
    document at most: the first with values spelled the ``mashery`` way (found while
    reading), else the first (whether there is any), rather than every document at once."""
    telling = kinds.ROLES.tells_dialect.name
    spelled = live.spelled.get(telling)
    if spelled is not None:
        return [spelled]
    found = live.of(telling)
    return [found[0].doc] if found else []
