"""Build the :class:`~apimctl.plans.model.Plan` that turns the live state into the manifests.

``apimctl plan``, ``apply``, ``drift`` and ``export`` call :func:`make_plan` (reads the live
state through the client, then :func:`build_plan`, which is pure and never prints).

How a plan is made:

1. **Desired objects** are taken from the manifests, kind by kind as :mod:`apimctl.kinds`
   lists them; child kinds (endpoints, error sets, plans) become objects of their own.
2. **Identity**: each desired object is matched to a live object in the same parent by its
   natural key; ``id:`` pins it to a live id; ``previousNames`` find it under an old name
   (a rename is an update with a ``name`` change, never delete + create). Two live objects
   with one name are an error that asks for an ``id`` pin.
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
   first for creates and updates, children and referrers first for deletes), ties broken by
   action, kind order and key so that plans are deterministic.
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
import graphlib
import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.planning.diff import diff, flatten, ignored
from apimctl.plans.model import Change, Fingerprint, Plan, Step, Unmanaged, address
from apimctl.state.live import Lister, LiveObject, LiveState, read_live
from apimctl.state.normalise import Context, normalise

Path = tuple[str | int, ...]

# What ``Step.desired`` holds for a secret written as a literal value rather than a ``${VAR}``
# reference: the value itself never leaves memory, so a saved plan cannot carry it.
LITERAL_SECRET = "(sensitive)"
_NOT_PRUNABLE = "is not declared but cannot be pruned"


class ManifestLike(Protocol):
    """What the planner reads of :class:`apimctl.manifests.Manifest`."""

    @property
    def doc(self) -> dict[str, Any]: ...

    @property
    def secret_refs(self) -> dict[tuple[str | int, ...], str]: ...


@dataclass
class Desired:
    """One object the manifests declare (``doc`` in manifest shape, without child kinds)."""

    kind: Kind
    key: str
    name: str
    doc: dict[str, Any]
    path: Path
    parent: Desired | None = None
    pin: str | None = None
    previous: tuple[str, ...] = ()
    declared: frozenset[str] = frozenset()
    origin: str = ""  # file:line:col where the manifests declare it, when known

    @property
    def address(self) -> str:
        return address(self.kind.name, self.key)

    def where(self) -> str:
        """``file:line:col: services[0].endpoints[1]`` (the path alone when not located)."""
        path = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in self.path)
        path = path.replace(".[", "[")
        return f"{self.origin}: {path}" if self.origin else path


@dataclass(frozen=True)
class IgnoreRule:
    """``KIND:KEY:PATH`` (key and path may be fnmatch patterns) and why it is accepted."""

    kind: str
    key: str
    path: str
    reason: str

    @classmethod
    def parse(cls, text: str, reason: str) -> IgnoreRule:
        kind, sep, rest = text.partition(":")
        key, sep2, path = rest.rpartition(":")
        if not sep or not sep2 or not key or not path:
            raise PlanError(f"ignore target {text!r}: expected KIND:NAME:FIELD_PATH")
        _check_kind(kind, f"ignore target {text!r}")
        return cls(kind, key, path, reason)

    def applies(self, kind: str, key: str) -> bool:
        return kind == self.kind and (key == self.key or fnmatch.fnmatchcase(key, self.key))


def _check_kind(kind: str, what: str) -> Kind:
    if kind not in kinds.BY_NAME:
        raise PlanError(f"{what}: unknown kind {kind!r} (known: {', '.join(kinds.BY_NAME)})")
    return kinds.BY_NAME[kind]


def parse_target(text: str) -> tuple[str, str]:
    """``"endpoint:Weather/Forecast"`` -> ``("endpoint", "Weather/Forecast")``."""
    kind, sep, key = text.partition(":")
    if not sep or not key:
        raise PlanError(f"--target {text!r}: expected KIND:NAME, e.g. service:Weather")
    _check_kind(kind, f"--target {text!r}")
    return kind, key


# --- desired objects -------------------------------------------------------------------------


def _locator(manifest: ManifestLike) -> Callable[[Path], str]:
    """``file:line:col`` of a manifest path, when the manifest knows positions."""
    where = getattr(manifest, "where", None)

    def locate(path: Path) -> str:
        pos = where(path) if callable(where) else None
        if pos is None or not getattr(pos, "file", ""):
            return ""
        return f"{pos.file}:{pos.line}:{pos.col}"

    return locate


def _desired_objects(doc: Mapping[str, Any],
                     locate: Callable[[Path], str] = lambda _: "") -> dict[str, list[Desired]]:
    out: dict[str, list[Desired]] = defaultdict(list)

    def visit(kind: Kind, items: Any, path: Path, parent: Desired | None) -> None:
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, Mapping):
                continue
            name = str(item.get(kind.identity, ""))
            child_keys = {kinds.get(c).manifest_key: kinds.get(c) for c in kind.children}
            obj = Desired(
                kind=kind,
                key=kind.key_of(name, parent.key if parent else None),
                name=name,
                doc={k: v for k, v in item.items() if k not in child_keys},
                path=(*path, i),
                parent=parent,
                pin=str(item["id"]) if item.get("id") not in (None, "") else None,
                previous=tuple(str(p) for p in item.get("previousNames") or ()),
                declared=frozenset(k for k in child_keys if k in item),
                origin=locate((*path, i)),
            )
            out[kind.name].append(obj)
            for key, child in child_keys.items():
                if key in item:
                    visit(child, item[key], (*path, i, key), obj)

    for kind in kinds.TOP_LEVEL:
        visit(kind, doc.get(kind.manifest_key), (kind.manifest_key,), None)
    return out


# --- settings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruneRule:
    """Whether unmanaged objects of one kind are deleted: all, none, or by name patterns."""

    enabled: bool
    patterns: tuple[str, ...] = ()

    def prunes(self, name: str) -> bool:
        if not self.enabled:
            return False
        return not self.patterns or any(fnmatch.fnmatchcase(name, p) for p in self.patterns)


def prune_rules(settings: Mapping[str, Any], prune: bool) -> dict[str, PruneRule]:
    """Per top-level kind, from ``--prune`` (everything) or ``settings.prune``."""
    raw = settings.get("prune", False)
    rules: dict[str, PruneRule] = {}
    for kind in kinds.TOP_LEVEL:
        value = raw.get(kind.manifest_key, False) if isinstance(raw, Mapping) else raw
        if prune or value is True:
            rules[kind.name] = PruneRule(True)
        elif isinstance(value, list):
            rules[kind.name] = PruneRule(bool(value), tuple(str(p) for p in value))
        else:
            rules[kind.name] = PruneRule(False)
    return rules


def ignore_rules(settings: Mapping[str, Any], cli: Sequence[str]) -> list[IgnoreRule]:
    rules = []
    for entry in settings.get("ignore") or []:
        if isinstance(entry, Mapping) and entry.get("target"):
            rules.append(IgnoreRule.parse(str(entry["target"]), str(entry.get("reason", ""))))
    rules.extend(IgnoreRule.parse(text, "--ignore") for text in cli)
    return rules


# --- matching --------------------------------------------------------------------------------


@dataclass
class Match:
    """The outcome of identity matching for every kind."""

    pairs: list[tuple[Desired, LiveObject | None]] = field(default_factory=list)
    live_of: dict[str, LiveObject | None] = field(default_factory=dict)  # desired address ->
    unmatched: list[LiveObject] = field(default_factory=list)


def _pick(candidates: list[LiveObject], obj: Desired, name: str) -> LiveObject | None:
    if len(candidates) > 1:
        ids = ", ".join(c.id for c in candidates)
        raise PlanError(
            f"{obj.where()}: {len(candidates)} live {obj.kind.name} objects are named {name!r} "
            f"(ids {ids}); add `id:` to pin the one this manifest manages"
        )
    return candidates[0] if candidates else None


@dataclass
class _Scope:
    """The live objects of one kind under one parent, by id and by (folded) name."""

    by_id: dict[str, LiveObject] = field(default_factory=dict)
    by_name: dict[str, list[LiveObject]] = field(default_factory=lambda: defaultdict(list))

    def add(self, obj: LiveObject) -> None:
        self.by_id[obj.id] = obj
        self.by_name[kinds.get(obj.kind).identity_of(obj.name)].append(obj)


_EMPTY_SCOPE = _Scope()


def _match_one(obj: Desired, scope: _Scope) -> LiveObject | None:
    if obj.pin is not None:
        found = scope.by_id.get(obj.pin)
        if found is None:
            raise PlanError(f"{obj.where()}: id {obj.pin!r} pins {obj.kind.name} {obj.key!r} "
                            "to no live object")
        return found
    fold = obj.kind.identity_of
    found = _pick(scope.by_name.get(fold(obj.name), []), obj, obj.name)
    for old in obj.previous:
        if found is not None:
            break
        found = _pick(scope.by_name.get(fold(old), []), obj, old)
    return found


def match(desired: Mapping[str, list[Desired]], live: LiveState) -> Match:
    """Pair each desired object with its live object (or ``None`` when it must be created)."""
    result = Match()
    for kind in kinds.KINDS:
        scopes: dict[str | None, _Scope] = defaultdict(_Scope)
        for obj in live.of(kind.name):
            scopes[obj.parent_id].add(obj)
        claimed: dict[str, Desired] = {}
        seen_keys: dict[str, Desired] = {}
        for want in desired.get(kind.name, []):
            if kind.identity_of(want.key) in seen_keys:
                raise PlanError(f"{want.where()}: {kind.name} {want.key!r} is declared twice")
            seen_keys[kind.identity_of(want.key)] = want
            parent_live = result.live_of.get(want.parent.address) if want.parent else None
            if want.parent is not None and parent_live is None:
                found = None
            else:
                scope_id = parent_live.id if parent_live is not None else None
                found = _match_one(want, scopes.get(scope_id, _EMPTY_SCOPE))
            if found is not None:
                if found.id in claimed:
                    raise PlanError(f"{want.where()}: {kind.name} {want.key!r} and "
                                    f"{claimed[found.id].key!r} both match live id {found.id}")
                claimed[found.id] = want
            result.pairs.append((want, found))
            result.live_of[want.address] = found
        result.unmatched.extend(o for o in live.of(kind.name) if o.id not in claimed)
    return result


def _written(obj: Desired, want: Mapping[str, Any]) -> dict[str, Any]:
    """The normalised fields the manifest wrote (keyed collections: the members it listed)."""
    out: dict[str, Any] = {}
    for name, value in want.items():
        if name not in obj.doc:
            continue
        if name in obj.kind.keyed and isinstance(value, Mapping):
            key_field = obj.kind.keyed[name]
            listed = {str(i.get(key_field)) if isinstance(i, Mapping) else str(i)
                      for i in obj.doc[name] or []}
            value = {k: v for k, v in value.items() if k in listed}
        out[name] = value
    return out


# --- steps -----------------------------------------------------------------------------------


class _Builder:
    """Turns matched pairs into steps, unmanaged entries, fingerprints and secret values."""

    def __init__(self, manifest: ManifestLike, live: LiveState, match_: Match,
                 rules: list[IgnoreRule]) -> None:
        self.manifest = manifest
        self.live = live
        self.match = match_
        self.rules = rules
        self.plan = Plan()
        self.steps: dict[str, Step] = {}
        self.first_live_set = self._first_live_error_sets()
        self.declared_sets: dict[str, list[str]] = defaultdict(list)
        for obj, _ in match_.pairs:
            if obj.kind.name == "errorSet" and obj.parent is not None:
                self.declared_sets[obj.parent.address].append(obj.name)
        self.desired_at = {obj.address: obj for obj, _ in match_.pairs}
        self.renames = {f"{live.kind}:{live.key}": obj.key for obj, live in match_.pairs
                        if live is not None and live.key != obj.key}
        self.translated: dict[int, dict[str, Any]] = {}
        self.live_at: dict[str, LiveObject] = {}

    def _first_live_error_sets(self) -> dict[str, str]:
        first: dict[str, str] = {}
        for es in self.live.of("errorSet"):
            if es.parent_id is not None:
                first.setdefault(es.parent_id, es.name)
        return first

    def context(self, obj: Desired, live: LiveObject | None) -> tuple[Context, Context]:
        """Normalisation contexts (desired side, live side): an endpoint's default error set."""
        if obj.kind.name != "endpoint" or obj.parent is None:
            return Context(), Context()
        live_first = self.first_live_set.get(live.parent_id or "") if live else None
        declared = self.declared_sets.get(obj.parent.address)
        if declared:
            return Context(declared[0]), Context(live_first)
        parent_live = self.match.live_of.get(obj.parent.address)
        desired_first = self.first_live_set.get(parent_live.id) if parent_live else "Default"
        return Context(desired_first), Context(live_first)

    def live_doc(self, live: LiveObject) -> dict[str, Any]:
        """The live document with its references renamed as the manifests rename them."""
        cached = self.translated.get(id(live))
        if cached is None:
            cached = translate(live.kind, live.doc, live.parent_key, self.renames)
            self.translated[id(live)] = cached
        return cached

    def write_only_changes(self, obj: Desired, changes: list[Change]) -> list[Change]:
        """Write-only secrets cannot be compared; they are written (and shown as sensitive)
        whenever the object holding them is written."""
        extra = []
        for path in sorted(obj.kind.write_only):
            holder = path.rpartition(".")[0]
            value: Any = obj.doc
            for part in path.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            touched = any(c.path == holder or c.path.startswith(holder + ".") for c in changes)
            if value not in (None, "") and touched:
                extra.append(Change(path, None, None, sensitive=True))
        return extra

    # -- desired documents with secrets as references

    def step_doc(self, obj: Desired) -> dict[str, Any]:
        doc = {k: copy.deepcopy(v) for k, v in obj.doc.items() if k not in kinds.META_FIELDS}
        for field_path in sorted(obj.kind.secret):
            parts = field_path.split(".")
            holder: Any = doc
            for part in parts[:-1]:
                holder = holder.get(part) if isinstance(holder, Mapping) else None
            if not isinstance(holder, dict) or parts[-1] not in holder:
                continue
            value = holder[parts[-1]]
            ref = self.manifest.secret_refs.get((*obj.path, *parts))
            if isinstance(value, str) and value:
                self.plan.secret_values[f"{obj.address}#{field_path}"] = value
            holder[parts[-1]] = ref if ref is not None else LITERAL_SECRET
        return doc

    def add(self, step: Step) -> None:
        self.steps[step.address] = step

    def build(self, prune: Mapping[str, PruneRule]) -> None:
        for obj, live in self.match.pairs:
            self._pair(obj, live)
        self._leftovers(prune)

    def _pair(self, obj: Desired, live: LiveObject | None) -> None:
        desired_ctx, live_ctx = self.context(obj, live)
        want = normalise(obj.kind, obj.doc, desired_ctx)
        parent_addr = obj.parent.address if obj.parent else None
        parent_live = self.match.live_of.get(parent_addr) if parent_addr else None
        if live is None:
            created = flatten(obj.kind, _written(obj, want))
            self.add(Step("create", obj.kind.name, obj.key, None, parent_addr,
                          parent_live.id if parent_live else None,
                          tuple(created + self.write_only_changes(obj, created)),
                          desired=self.step_doc(obj)))
            if parent_live is not None and obj.parent is not None:
                self._fingerprint(obj.parent.kind.name, obj.parent.key, parent_live)
            return
        have = normalise(obj.kind, self.live_doc(live), live_ctx)
        changes = diff(obj.kind, have, want)
        changes = self._apply_ignores(obj, changes)
        if not changes:
            return
        changes += self.write_only_changes(obj, changes)
        self.add(Step("update", obj.kind.name, obj.key, live.id, parent_addr,
                      live.parent_id, tuple(changes), desired=self.step_doc(obj)))
        self.live_at[obj.address] = live
        self._touch(obj.kind, obj.key, live, obj.parent)

    def _apply_ignores(self, obj: Desired, changes: list[Change]) -> list[Change]:
        rules = [r for r in self.rules if r.applies(obj.kind.name, obj.key)]
        if not rules or not changes:
            return changes
        kept = changes
        for rule in rules:
            kept, skipped = ignored(kept, [rule.path])
            for change in skipped:
                self.plan.ignored.append({"target": f"{obj.address}:{change.path}",
                                          "reason": rule.reason})
        return kept

    def _touch(self, kind: Kind, key: str, live: LiveObject, parent: Desired | None) -> None:
        """Record the fingerprint covering a touched live object."""
        if kind.parent == "service" and parent is not None:
            parent_live = self.match.live_of.get(parent.address)
            if parent_live is not None:
                self._fingerprint("service", parent.key, parent_live)
                return
        self._fingerprint(kind.name, key, live)

    def _fingerprint(self, kind: str, key: str, live: LiveObject) -> None:
        self.plan.fingerprints[address(kind, key)] = Fingerprint(
            kind, key, live.id, live.updated, live.revision)

    def _leftovers(self, prune: Mapping[str, PruneRule]) -> None:
        declared_parents = {(d.kind.name, self.match.live_of[d.address].id): d  # type: ignore[union-attr]
                            for d, live in self.match.pairs if live is not None}
        for live in self.match.unmatched:
            kind = kinds.get(live.kind)
            if kind.top_level:
                self._unmanaged(kind, live, prune[kind.name])
                continue
            parent = declared_parents.get((kind.parent or "", live.parent_id or ""))
            if parent is None or kind.manifest_key not in parent.declared:
                continue  # the parent is unmanaged, or its collection is not declared
            key = self._free_key(kind, kind.key_of(live.name, parent.key), live)
            self.add(Step("delete", kind.name, key, live.id, parent.address, live.parent_id))
            self.live_at[address(kind.name, key)] = live
            self._touch(kind, key, live, parent)

    def _unmanaged(self, kind: Kind, live: LiveObject, rule: PruneRule) -> None:
        if not rule.prunes(live.name):
            self.plan.unmanaged.append(Unmanaged(kind.name, live.key, live.id))
            return
        if not kind.deletable:
            self.plan.unmanaged.append(Unmanaged(kind.name, live.key, live.id))
            self.plan.warnings.append(f"{address(kind.name, live.key)} {_NOT_PRUNABLE}: "
                                      f"the API offers no delete for {kind.manifest_key}")
            return
        key = self._free_key(kind, live.key, live)
        self.add(Step("delete", kind.name, key, live.id))
        self.live_at[address(kind.name, key)] = live
        self._fingerprint(kind.name, key, live)

    def _free_key(self, kind: Kind, key: str, live: LiveObject) -> str:
        """The key of a delete step: the live key, made unique with the id when a declared
        object (pinned by ``id``) or another deleted duplicate already uses that address."""
        addr = address(kind.name, key)
        if addr in self.steps or addr in self.desired_at or addr in self.plan.fingerprints:
            return f"{key} (id {live.id})"
        return key


def literal_secrets(plan: Plan) -> list[str]:
    """``address#field`` of every secret a step holds only as a literal (not a reference):
    such a plan cannot be saved for ``apply --plan``, which resolves references only."""
    found = []
    for step in plan.steps:
        for field_path in sorted(kinds.get(step.kind).secret):
            value: Any = step.desired
            for part in field_path.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            if value == LITERAL_SECRET:
                found.append(f"{step.address}#{field_path}")
    return found


# --- renames in live references ---------------------------------------------------------------


def _renamed_name(renames: Mapping[str, str], kind: str, key: str) -> str:
    """The name of a child object (``PARENT/NAME`` key) as the manifests call it."""
    return renames.get(f"{kind}:{key}", key).partition("/")[2]


def translate(kind: str, doc: Mapping[str, Any], parent_key: str | None,
              renames: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with the names it references replaced by their new names, for objects that the
    manifests rename (``previousNames``): a rename alone changes no reference."""
    out = dict(doc)
    if not renames:
        return out
    if kind in ("service", "plan") and isinstance(out.get("roles"), list):
        out["roles"] = [renames.get(f"role:{r}", r) for r in out["roles"]]
    if kind == "endpoint" and isinstance(out.get("errorSet"), str) and parent_key is not None:
        out["errorSet"] = _renamed_name(renames, "errorSet", f"{parent_key}/{out['errorSet']}")
    if kind == "plan" and isinstance(out.get("services"), list):
        out["services"] = [_renamed_entitlement(svc, renames) for svc in out["services"]]
    if kind == "maintenanceEvent" and isinstance(out.get("endpoints"), list):
        pairs = []
        for ep in out["endpoints"]:
            key = renames.get(f"endpoint:{ep.get('service')}/{ep.get('endpoint')}")
            if key is not None:
                service, _, endpoint = key.partition("/")
                ep = {"service": service, "endpoint": endpoint}
            pairs.append(ep)
        out["endpoints"] = pairs
    return out


def _renamed_entitlement(svc: Mapping[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    old = str(svc.get("name"))
    endpoints = [{**ep, "name": _renamed_name(renames, "endpoint", f"{old}/{ep.get('name')}")}
                 for ep in svc.get("endpoints") or []]
    return {**svc, "name": renames.get(f"service:{old}", old), "endpoints": endpoints}


# --- dependencies ----------------------------------------------------------------------------


def references(kind: str, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` (manifest shape) refers to by name, domains excepted."""
    refs: set[str] = set()
    if kind in ("service", "plan"):
        refs |= {address("role", str(r)) for r in doc.get("roles") or [] if isinstance(r, str)}
    if kind == "endpoint" and isinstance(doc.get("errorSet"), str) and parent_key is not None:
        refs.add(address("errorSet", f"{parent_key}/{doc['errorSet']}"))
    if kind == "plan":
        for svc in doc.get("services") or []:
            if not isinstance(svc, Mapping):
                continue
            refs.add(address("service", str(svc.get("name"))))
            for ep in svc.get("endpoints") or []:
                name = ep.get("name") if isinstance(ep, Mapping) else ep
                refs.add(address("endpoint", f"{svc.get('name')}/{name}"))
    if kind == "maintenanceEvent":
        for ep in doc.get("endpoints") or []:
            if isinstance(ep, Mapping):
                refs.add(address("endpoint", f"{ep.get('service')}/{ep.get('endpoint')}"))
    return refs


def _adds_methods(step: Step) -> bool:
    """An endpoint update that creates methods: plans entitled to them must wait for it."""
    return step.kind == "endpoint" and step.action == "update" and any(
        c.path.startswith("methods[") and c.before is None for c in step.changes)


def _hosts(doc: Mapping[str, Any]) -> list[str]:
    hosts = []
    for name in ("publicDomains", "systemDomains"):
        for item in doc.get(name) or []:
            host = item.get("address") if isinstance(item, Mapping) else item
            if isinstance(host, str):
                hosts.append(host.lower())
    return hosts


def _domain_steps(hosts: Iterable[str], domains: Mapping[str, str]) -> set[str]:
    """Domain steps whose domain covers one of ``hosts`` (equal, or a parent domain of it)."""
    out = set()
    for host in hosts:
        parts = host.split(".")
        for i in range(len(parts)):
            found = domains.get(".".join(parts[i:]))
            if found:
                out.add(found)
    return out


def dependencies(steps: Mapping[str, Step], desired_at: Mapping[str, Desired],
                 live_docs: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """``depends_on`` of every step: parents and referenced objects that are created (or
    renamed) before the steps that need them; children and former referrers before deletes
    (and new error sets before old ones go, since a service keeps at least one)."""
    # what must exist under the referenced name first: creates, and renames
    prerequisites = {a for a, s in steps.items() if s.action == "create"
                     or (s.action == "update" and any(c.path == "name" for c in s.changes))
                     or _adds_methods(s)}
    domains = {s.key.lower(): a for a, s in steps.items() if s.kind == "domain" and a in prerequisites}
    deps: dict[str, set[str]] = {a: set() for a in steps}
    for addr, step in steps.items():
        if step.action == "delete":
            continue
        obj = desired_at[addr]
        parent_key = obj.parent.key if obj.parent else None
        wanted = references(step.kind, obj.doc, parent_key) | _domain_steps(_hosts(obj.doc), domains)
        if step.parent:
            wanted.add(step.parent)
        deps[addr] |= {w for w in wanted if w in prerequisites and w != addr}
    for addr, live_doc in live_docs.items():  # referrers of what is deleted go first
        step = steps[addr]
        parent_key = step.parent.partition(":")[2] if step.parent else None
        for ref in references(step.kind, live_doc, parent_key):
            if ref in steps and steps[ref].action == "delete" and ref != addr:
                deps[ref].add(addr)
    for addr, step in steps.items():
        parent = step.parent or ""
        if step.action == "delete" and parent in steps and steps[parent].action == "delete":
            deps[parent].add(addr)
        if step.action == "delete" and step.kind == "errorSet":
            deps[addr] |= {a for a, s in steps.items() if s.kind == "errorSet"
                           and s.action == "create" and s.parent == step.parent}
    return {a: tuple(sorted(d)) for a, d in deps.items()}


def _rank(step: Step) -> tuple[int, int, str]:
    order = kinds.ORDER[step.kind]
    if step.action == "delete":
        return (1, -order, step.key)
    return (0, order, step.key)


def order(steps: Mapping[str, Step]) -> list[Step]:
    """Steps in an order that respects ``depends_on``; among ready steps, creates and updates
    parent kinds first, then deletes child kinds first, by key."""
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter(
        {a: s.depends_on for a, s in steps.items()})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = " -> ".join(str(a) for a in exc.args[1])
        raise PlanError(f"the plan's steps depend on each other in a cycle: {cycle}") from None
    ready = [(_rank(steps[a]), a) for a in sorter.get_ready()]
    heapq.heapify(ready)
    out: list[Step] = []
    while ready:
        _, addr = heapq.heappop(ready)
        out.append(steps[addr])
        sorter.done(addr)
        for nxt in sorter.get_ready():
            heapq.heappush(ready, (_rank(steps[nxt]), nxt))
    return out


# --- targets ---------------------------------------------------------------------------------


def _contains(target: tuple[str, str], step: Step) -> bool:
    kind, key = target
    if step.kind == kind and (step.key == key or fnmatch.fnmatchcase(step.key, key)):
        return True
    # children by their parent's address: names may contain "/" (service "a/b")
    parent = kinds.get(step.kind).parent
    if parent != kind:
        return False
    owner = step.parent.partition(":")[2] if step.parent else step.key.partition("/")[0]
    return owner == key or fnmatch.fnmatchcase(owner, key)


def select(steps: Sequence[Step], targets: Sequence[tuple[str, str]]) -> list[Step]:
    """The targeted steps, what they contain, and every step they depend on (transitively)."""
    by_addr = {s.address: s for s in steps}
    keep = {s.address for s in steps if any(_contains(t, s) for t in targets)}
    todo = list(keep)
    while todo:
        for dep in by_addr[todo.pop()].depends_on:
            if dep in by_addr and dep not in keep:
                keep.add(dep)
                todo.append(dep)
    return [s for s in steps if s.address in keep]


def _check_targets(targets: Sequence[tuple[str, str]], known: set[tuple[str, str]]) -> None:
    for kind, key in targets:
        hit = any(k == kind and (n == key or fnmatch.fnmatchcase(n, key)) for k, n in known)
        if not hit:
            raise PlanError(f"--target {kind}:{key} matches no declared or live object")


# --- entry points ----------------------------------------------------------------------------


def build_plan(manifest: ManifestLike, live: LiveState, *, prune: bool = False,
               targets: Sequence[str] = (), ignores: Sequence[str] = (),
               max_deletes: int | None = None) -> Plan:
    """The plan turning ``live`` into what ``manifest`` declares (pure: no I/O)."""
    doc = manifest.doc
    settings = doc.get("settings") or {}
    desired = _desired_objects(doc, _locator(manifest))
    if not any(desired.get(k.name) for k in kinds.TOP_LEVEL):
        raise PlanError("the manifests declare no objects: refusing to plan, since an empty "
                        "input would mean deleting everything (check the paths given)")
    parsed_targets = [parse_target(t) for t in targets]
    rules = ignore_rules(settings, ignores)
    matched = match(desired, live)
    builder = _Builder(manifest, live, matched, rules)
    builder.build(prune_rules(settings, prune))
    deps = dependencies(builder.steps, builder.desired_at,
                        {a: builder.live_doc(o) for a, o in builder.live_at.items()})
    steps = {a: _with_deps(s, deps[a]) for a, s in builder.steps.items()}
    plan = builder.plan
    plan.steps = order(steps)
    if parsed_targets:
        known = {(d.kind.name, d.key) for ds in desired.values() for d in ds}
        known |= {(o.kind, o.key) for k in kinds.KINDS for o in live.of(k.name)}
        _check_targets(parsed_targets, known)
        plan.steps = select(plan.steps, parsed_targets)
        kept = [u for u in plan.unmanaged
                if any(u.kind == k and fnmatch.fnmatchcase(u.key, n) for k, n in parsed_targets)]
        left_out = tuple(f"{address(u.kind, u.key)} {_NOT_PRUNABLE}" for u in plan.unmanaged
                         if u not in kept)
        plan.unmanaged = kept
        plan.warnings = [w for w in plan.warnings if not w.startswith(left_out)]
        plan.warnings.append(f"only {', '.join(targets)} (--target) and what they need were planned; "
                             "other differences are not shown")
    _keep_relevant(plan)
    _check_deletes(plan, max_deletes)
    return plan


def _with_deps(step: Step, deps: tuple[str, ...]) -> Step:
    return Step(step.action, step.kind, step.key, step.id, step.parent, step.parent_id,
                step.changes, deps, step.desired)


def _keep_relevant(plan: Plan) -> None:
    """Fingerprints and secret values of the steps that remain (targets may drop some)."""
    addrs = {s.address for s in plan.steps} | {s.parent for s in plan.steps if s.parent}
    plan.fingerprints = {a: f for a, f in plan.fingerprints.items() if a in addrs}
    plan.secret_values = {k: v for k, v in plan.secret_values.items()
                          if k.partition("#")[0] in addrs}
    plan.unmanaged.sort(key=lambda u: (kinds.ORDER[u.kind], u.key))


def _check_deletes(plan: Plan, max_deletes: int | None) -> None:
    deletes = [s.address for s in plan.steps if s.action == "delete"]
    if max_deletes is not None and len(deletes) > max_deletes:
        shown = ", ".join(deletes[:10]) + (", ..." if len(deletes) > 10 else "")
        raise PlanError(f"the plan deletes {len(deletes)} objects, more than --max-deletes "
                        f"{max_deletes} allows: {shown}")


async def make_plan(client: Lister, manifest: ManifestLike, *, prune: bool = False,
                    targets: Sequence[str] = (), ignores: Sequence[str] = (),
                    max_deletes: int | None = None) -> Plan:
    """Read the live state through ``client`` and plan the manifests against it."""
    for text in targets:  # fail on a bad target before any call is made
        parse_target(text)
    live = await read_live(client)
    return build_plan(manifest, live, prune=prune, targets=targets, ignores=ignores,
                      max_deletes=max_deletes)

