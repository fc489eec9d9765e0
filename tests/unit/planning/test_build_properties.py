"""Property tests of the planner: executing a plan's steps on a simple in-memory model of the
area yields the desired state, and the order of the steps respects their dependencies."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl import kinds, workers
from apimctl.api.dialect import Detected
from apimctl.planning import PlanOptions, build_plan, comparing
from apimctl.plans.model import Plan
from apimctl.state.live import LiveState, from_raw
from apimctl.state.normalise import Context, normalise

NAMES = st.sampled_from(["a", "b", "c", "d"])
METHODS = st.lists(st.sampled_from(["get", "post", "put"]), max_size=3)


@dataclass
class M:
    doc: dict[str, Any]
    secret_refs: dict[tuple[str | int, ...], str] = field(default_factory=dict)
    validated: bool = False  # never checked offline: planning checks all it needs

    def where(self, path: tuple[str | int, ...]) -> Any:
        return None  # positions unknown


def endpoint(draw: st.DrawFn, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": name, "requestPathAlias": "/" + draw(NAMES)}
    if draw(st.booleans()):
        doc["supportedHttpMethods"] = draw(METHODS)
    if draw(st.booleans()):
        doc["cors"] = {"maxAge": draw(st.integers(0, 3))}
    if draw(st.booleans()):
        doc["methods"] = [{"name": m, "sampleJsonResponse": draw(NAMES)}
                          for m in draw(st.lists(NAMES, unique=True, max_size=2))]
    return doc


@st.composite
def desired_docs(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(NAMES, unique=True, min_size=1, max_size=3))
    spare = [n for n in ["a", "b", "c", "d"] if n not in names]
    services = []
    for name in names:
        svc: dict[str, Any] = {"name": name}
        if spare and draw(st.booleans()):
            svc["previousNames"] = [spare.pop()]  # a rename, when that name is live
        if draw(st.booleans()):
            svc["description"] = draw(NAMES)
        if draw(st.booleans()):
            svc["endpoints"] = [endpoint(draw, e) for e in draw(st.lists(NAMES, unique=True, max_size=3))]
        if draw(st.booleans()):
            svc["errorSets"] = [{"name": s} for s in draw(st.lists(NAMES, unique=True, min_size=1, max_size=2))]
        services.append(svc)
    packages = [{"name": p, "plans": [{"name": q, "rateLimitCeiling": draw(st.integers(0, 2))}
                                      for q in draw(st.lists(NAMES, unique=True, max_size=2))]}
                for p in draw(st.lists(NAMES, unique=True, max_size=2))]
    roles = [{"name": r} for r in draw(st.lists(NAMES, unique=True, max_size=2))]
    return {"services": services, "packages": packages, "roles": roles}


@st.composite
def live_raw(draw: st.DrawFn) -> dict[str, list[dict[str, Any]]]:
    counter = iter(range(10_000))
    services = []
    for name in draw(st.lists(NAMES, unique=True, max_size=3)):
        sid = f"s{next(counter)}"
        eps = []
        for e in draw(st.lists(NAMES, unique=True, max_size=3)):
            doc = endpoint(draw, e)
            eps.append({"id": f"e{next(counter)}", **doc})
        sets = [{"id": f"x{next(counter)}", "name": s, "errorMessages": []}
                for s in draw(st.lists(NAMES, unique=True, min_size=1, max_size=2))]
        services.append({"id": sid, "name": name, "description": draw(NAMES), "endpoints": eps,
                         "errorSets": sets, "revisionNumber": 1})
    packages = [{"id": f"p{next(counter)}", "name": p,
                 "plans": [{"id": f"q{next(counter)}", "name": q, "rateLimitCeiling": draw(st.integers(0, 2))}
                           for q in draw(st.lists(NAMES, unique=True, max_size=2))]}
                for p in draw(st.lists(NAMES, unique=True, max_size=2))]
    roles = [{"id": f"r{next(counter)}", "name": r} for r in draw(st.lists(NAMES, unique=True, max_size=2))]
    return {"service": services, "package": packages, "role": roles}


_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[([^\]]+)\]")


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    tokens = [a or b for a, b in _TOKEN.findall(path)]
    holder = doc
    for tok in tokens[:-1]:
        holder = holder.setdefault(tok, {})
    if value is None and tokens[-1] in holder and path.endswith("]"):
        del holder[tokens[-1]]
    else:
        holder[tokens[-1]] = value


@dataclass
class Entry:
    """One object of the in-memory area: kind, parent id, normal form."""

    kind: str
    parent: str | None
    doc: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.doc.get(kinds.get(self.kind).identity))


def first_sets(live: LiveState) -> dict[str, str]:
    out: dict[str, str] = {}
    for es in live.of("errorSet"):
        out.setdefault(es.parent_id or "", es.name)
    return out


def model_of(live: LiveState) -> dict[str, Entry]:
    """The live area by id, each object in its normal form."""
    firsts = first_sets(live)
    return {obj.id: Entry(obj.kind, obj.parent_id,
                          normalise(kinds.get(obj.kind), obj.doc, Context(firsts.get(obj.parent_id or ""))))
            for kind in kinds.KINDS for obj in live.of(kind.name)}


def execute(plan: Plan, model: dict[str, Entry], want: dict[str, dict[str, Any]]) -> None:
    """Run the steps in order as a simple API would, checking their order on the way."""
    done: set[str] = set()
    created: dict[str, str] = {}
    for n, step in enumerate(plan.steps):
        assert set(step.depends_on) <= done, f"{step.address} runs before {step.depends_on}"
        if step.action == "create":
            parent = step.parent_id or (created.get(step.parent) if step.parent else None)
            assert step.parent is None or parent in model, f"{step.address} before its parent"
            created[step.address] = f"new-{n}"
            model[f"new-{n}"] = Entry(step.kind, parent, dict(want[step.address]))
        elif step.action == "update":
            assert step.id in model, f"{step.address} is gone before its update"
            for change in step.changes:
                set_path(model[step.id].doc, change.path, change.after)
        else:
            assert step.id in model, f"{step.address} is gone before its delete"
            for child in [i for i, e in model.items() if e.parent == step.id]:
                del model[child]  # the API deletes what a deleted object contains
            del model[step.id]
        done.add(step.address)


def find(model: dict[str, Entry], address: str) -> Entry | None:
    kind_name, key = address.split(":", 1)
    kind = kinds.get(kind_name)
    parent_key, name = kinds.split_key(kind, key)
    for entry in model.values():
        if entry.kind != kind_name or entry.name != name:
            continue
        if kind.parent is None:
            return entry
        parent = model.get(entry.parent or "")
        if parent is not None and parent.name == parent_key:
            return entry
    return None


def matched_service(svc: dict[str, Any], live: LiveState) -> str | None:
    by_name = {o.name: o.id for o in live.of("service")}
    for name in [svc["name"], *svc.get("previousNames", [])]:
        if name in by_name:
            return by_name[name]
    return None


def expected(doc: dict[str, Any], live: LiveState) -> dict[str, dict[str, Any]]:
    firsts = first_sets(live)
    out: dict[str, dict[str, Any]] = {}
    for svc in doc["services"]:
        out[f"service:{svc['name']}"] = normalise(kinds.SERVICE, svc)
        sets = [s["name"] for s in svc.get("errorSets", [])]
        default = sets[0] if sets else firsts.get(matched_service(svc, live) or "", "Default")
        for es in svc.get("errorSets", []):
            out[f"errorSet:{svc['name']}/{es['name']}"] = normalise(kinds.ERROR_SET, es)
        for ep in svc.get("endpoints", []):
            out[f"endpoint:{svc['name']}/{ep['name']}"] = normalise(kinds.ENDPOINT, ep, Context(default))
    for pkg in doc["packages"]:
        out[f"package:{pkg['name']}"] = normalise(kinds.PACKAGE, pkg)
        for plan in pkg["plans"]:
            out[f"plan:{pkg['name']}/{plan['name']}"] = normalise(kinds.PLAN, plan)
    for role in doc["roles"]:
        out[f"role:{role['name']}"] = normalise(kinds.ROLE, role)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(desired_docs(), live_raw(), st.booleans())
def test_executing_the_plan_yields_the_desired_state(doc: dict[str, Any],
                                                     raw: dict[str, list[dict[str, Any]]],
                                                     prune: bool) -> None:
    live = from_raw(raw)
    plan = build_plan(M(doc), live, PlanOptions(prune=prune))
    model = model_of(live)
    want = expected(doc, live)
    execute(plan, model, want)
    for addr, normal in want.items():
        got = find(model, addr)
        assert got is not None, f"{addr} missing after the plan ran"
        for name, value in normal.items():
            assert got.doc.get(name) == value, (addr, name)
    declared = {(a.split(":", 1)[0], a.split(":", 1)[1]) for a in want}
    for entry in model.values():
        kind = kinds.get(entry.kind)
        parent = model.get(entry.parent or "")
        key = entry.name if parent is None else f"{parent.name}/{entry.name}"
        if (entry.kind, key) in declared:
            continue
        if kind.parent is None:  # unmanaged top-level objects stay only without pruning
            assert not prune, f"{entry.kind}:{key} survived --prune"
        else:  # children not declared survive only when their collection is not declared
            owner = next((o for o in doc["services"] + doc["packages"]
                          if parent is not None and o["name"] == parent.name), None)
            assert owner is None or kind.manifest_key not in owner, f"{entry.kind}:{key} kept"
    if not prune:
        assert all(u.id in model for u in plan.unmanaged)
    replan = build_plan(M(doc), live, PlanOptions(prune=prune))
    assert [s.to_json() for s in replan.steps] == [s.to_json() for s in plan.steps]


def as_listed(doc: dict[str, Any], draw: st.DrawFn) -> dict[str, list[dict[str, Any]]]:
    """The desired objects as the API lists them (ids added), some fields changed."""
    counter = iter(range(10_000))

    def live(entry: dict[str, Any], children: tuple[str, ...] = ()) -> dict[str, Any]:
        out = {k: v for k, v in entry.items() if k not in ("previousNames", *children)}
        if draw(st.integers(0, 4)) == 0:
            out["description"] = "changed"
        return {"id": f"i{next(counter)}", **out}

    services = [{**live(s, ("endpoints", "errorSets")),
                 "endpoints": [live(e) for e in s.get("endpoints", [])],
                 "errorSets": [live(e) for e in s.get("errorSets", [{"name": "Default"}])]}
                for s in doc["services"]]
    packages = [{**live(p, ("plans",)), "plans": [live(q) for q in p["plans"]]}
                for p in doc["packages"]]
    return {"service": services, "package": packages, "role": [live(r) for r in doc["roles"]]}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(desired_docs(), st.data(), st.booleans(), st.sampled_from(["spec", "mashery"]))
def test_unchanged_objects_told_by_digest_plan_as_when_diffed(
        doc: dict[str, Any], data: st.DataObject, prune: bool, dialect: str) -> None:
    """The live model's normal-form digests only spare work: a plan made with them is the plan
    made by normalising and diffing every pair."""
    raw = data.draw(st.one_of(live_raw(), st.builds(lambda: None).map(
        lambda _: as_listed(doc, data.draw))))
    detected = Detected(dialect, "test")
    fast = build_plan(M(doc), from_raw(copy.deepcopy(raw)), PlanOptions(prune=prune), dialect=detected)
    slow = build_plan(M(doc), from_raw(copy.deepcopy(raw), normal_forms=False),
                      PlanOptions(prune=prune), dialect=detected)
    assert fast.to_json() == slow.to_json()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(desired_docs(), st.data(), st.booleans(), st.sampled_from(["spec", "mashery"]))
def test_pairs_told_unchanged_in_the_worker_plan_as_when_diffed(
        doc: dict[str, Any], data: st.DataObject, prune: bool, dialect: str) -> None:
    """The worker's verdicts (``apimctl.planning.comparing``) only spare work: a plan that
    took them is the plan made by normalising and diffing every pair here."""
    raw = data.draw(st.one_of(live_raw(), st.builds(lambda: None).map(
        lambda _: as_listed(doc, data.draw))))
    detected = Detected(dialect, "test")
    answers: list[object] = []
    result = workers.result

    def recorded(future):  # type: ignore[no-untyped-def]
        answers.append(result(future))
        return answers[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(workers.ENV, raising=False)
        patch.setattr(workers, "_unavailable", False)
        patch.setattr(comparing, "APART_FROM", 0)
        patch.setattr(comparing, "BATCH", 2)
        patch.setattr(workers.FromBothEnds, "patient", True)  # every verdict sent is taken
        patch.setattr(workers, "result", recorded)
        told = build_plan(M(doc), from_raw(copy.deepcopy(raw)), PlanOptions(prune=prune), dialect=detected)
    slow = build_plan(M(doc), from_raw(copy.deepcopy(raw), normal_forms=False),
                      PlanOptions(prune=prune), dialect=detected)
    assert told.to_json() == slow.to_json()
    assert None not in answers  # every verdict asked for came from the worker
