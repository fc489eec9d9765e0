"""Steps: matched pairs become creates, updates and deletes, with fingerprints and secrets.

Called by :mod:`apimctl.planning.build` (the ``Builder``); :func:`literal_secrets` by the plan
command before a plan is saved.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.kinds import references as refs
from apimctl.kinds.dialects import SPEC, Dialect
from apimctl.planning.comparing import Comparer
from apimctl.planning.desired import Desired, ManifestLike
from apimctl.planning.diff import diff, flatten, ignored
from apimctl.planning.duplicates import nested_duplicates, repair_changes, warning
from apimctl.planning.matching import Match, written
from apimctl.planning.rules import NOT_PRUNABLE, IgnoreRule, PruneRule, RotateRule
from apimctl.plans.model import (
    Change,
    Duplicate,
    Fingerprint,
    Plan,
    Step,
    Unmanaged,
    WriteOnly,
    address,
)
from apimctl.state.live import LiveObject, LiveState

# What ``Step.desired`` holds for a secret written as a literal value rather than a ``${VAR}``
# reference: the value itself never leaves memory, so a saved plan cannot carry it.
LITERAL_SECRET = "(sensitive)"

# --- steps -----------------------------------------------------------------------------------


class Builder:
    """Turns matched pairs into steps, unmanaged entries, fingerprints and secret values."""

    def __init__(self, manifest: ManifestLike, live: LiveState, match_: Match,
                 rules: list[IgnoreRule], *, repair: bool = False, dialect: Dialect = SPEC) -> None:
        self.manifest = manifest
        self.dialect = dialect  # the target's (SUPPLEMENT §10): its defaults and vocabulary
        self.repair = repair  # --repair-duplicates: delete the extra copies
        self.live = live
        self.match = match_
        self.rules = rules
        self.plan = Plan()
        self.steps: dict[str, Step] = {}
        self.desired_at = {obj.address: obj for obj, _ in match_.pairs}
        self.renames = {f"{live.kind}:{live.key}": obj.key for obj, live in match_.pairs
                        if live is not None and live.key != obj.key}
        self.renamed_docs: dict[int, dict[str, Any]] = {}
        self.rotate: list[RotateRule] = []  # --rotate-secrets / --rotate
        self.live_at: dict[str, LiveObject] = {}
        # ids of live copies that duplicate a matched object (kept one excluded)
        self.extra_copies: dict[str, Duplicate] = {}
        # whether each pair is unchanged, however that is found (:mod:`apimctl.planning.comparing`)
        self.comparer = Comparer(match_.pairs, live, match_.live_of, dialect,
                                 renamed=bool(self.renames))

    def live_doc(self, live: LiveObject) -> dict[str, Any]:
        """The live document with its references renamed as the manifests rename them."""
        cached = self.renamed_docs.get(id(live))
        if cached is None:
            cached = refs.rename(live.kind, live.doc, live.parent_key, self.renames)
            self.renamed_docs[id(live)] = cached
        return cached

    def write_only_changes(self, obj: Desired, changes: list[Change]) -> list[Change]:
        """Write-only secrets cannot be compared; they are written (and shown as sensitive)
        whenever the block holding them is written, or when ``--rotate-secrets``/``--rotate``
        names them. Every declared one is listed in ``Plan.write_only`` with whether it is sent."""
        extra = []
        for path, parts, holder in _write_only(obj.kind):
            value: Any = obj.doc
            for part in parts:
                value = value.get(part) if isinstance(value, Mapping) else None
            if value in (None, ""):
                continue
            touched = any(c.path == holder or c.path.startswith(holder + ".") for c in changes)
            rotated = any(r.applies(obj.kind.name, obj.key, path) for r in self.rotate)
            sent = touched or rotated
            if sent:
                extra.append(Change(path, None, None, sensitive=True))
            self.plan.write_only.append(WriteOnly(obj.kind.name, obj.key, path, sent))
        return extra

    # -- desired documents with secrets as references

    def step_doc(self, obj: Desired) -> dict[str, Any]:
        doc = {k: copy.deepcopy(v) for k, v in obj.doc.items() if k not in kinds.META_FIELDS}
        for field_path in sorted(obj.kind.compare.secret):
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

    def tell_apart(self) -> None:
        """Start telling the pairs apart now (:meth:`Comparer.start`): a large plan's are
        told meanwhile."""
        self.comparer.start()

    def build(self, prune: Mapping[str, PruneRule]) -> None:
        self._object_duplicates()
        missing = []
        for index, (obj, live) in enumerate(self.match.pairs):
            if obj.kind.read_only:  # a data source: only checked to exist
                if live is None:
                    missing.append(f"{obj.where()}: {obj.kind.label} '{obj.name}' does not exist "
                                   f"in the area ({obj.kind.manifest_key} are read only: apimctl "
                                   "never creates one)")
                continue
            self._pair(index, obj, live)
        if missing:
            raise PlanError("; ".join(missing))
        self._leftovers(prune)
        hint = warning(self.plan)
        if hint:
            self.plan.warnings.append(hint)

    def _object_duplicates(self) -> None:
        for obj, copies, kept, reason in self.match.duplicates:
            if obj.kind.read_only:
                continue
            ids = tuple(c.id for c in copies)
            dup = Duplicate(obj.kind.name, obj.key, ids, kept.id, reason, repair=self.repair)
            if dup in self.plan.duplicates:
                continue
            self.plan.duplicates.append(dup)
            self.extra_copies.update({i: dup for i in dup.extra})

    def _pair(self, index: int, obj: Desired, live: LiveObject | None) -> None:
        """The step of matched pair ``index``, if any."""
        parent_addr = obj.parent.address if obj.parent else None
        if live is None:
            self._create(obj, self.comparer.desired_form(obj), parent_addr)
            return
        changes: list[Change] = []
        if not self.comparer.unchanged(index, obj, live):
            changes = diff(obj.kind, *self.comparer.diff_forms(obj, live, self.live_doc(live)))
        changes = self._apply_ignores(obj, changes)
        nested = nested_duplicates(obj.kind, obj.key, live.raw, self.repair) if live.keeps_lists else []
        self.plan.duplicates.extend(nested)
        if self.repair:
            changes += repair_changes(nested)
        changes += self.write_only_changes(obj, changes)
        if not changes:
            return
        self.add(Step("update", obj.kind.name, obj.key, live.id, parent_addr,
                      live.parent_id, tuple(changes), desired=self.step_doc(obj)))
        self.live_at[obj.address] = live
        self._touch(obj.kind, obj.key, live, obj.parent)

    def _create(self, obj: Desired, want: dict[str, Any], parent_addr: str | None) -> None:
        parent_live = self.match.live_of.get(parent_addr) if parent_addr else None
        created = flatten(obj.kind, written(obj, want))
        self.add(Step("create", obj.kind.name, obj.key, None, parent_addr,
                      parent_live.id if parent_live else None,
                      tuple(created + self.write_only_changes(obj, created)),
                      desired=self.step_doc(obj)))
        if parent_live is not None and obj.parent is not None:
            self._fingerprint(obj.parent.kind.name, obj.parent.key, parent_live)

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
        if kind.write.covered_by_parent and parent is not None:
            parent_live = self.match.live_of.get(parent.address)
            if parent_live is not None:
                self._fingerprint(parent.kind.name, parent.key, parent_live)
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
            if kind.read_only:  # a data source: never unmanaged, never pruned
                continue
            if live.id in self.extra_copies and (self.repair or kind.top_level):
                self._extra_copy(kind, live, prune[kind.name] if kind.top_level else None)
                continue
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

    def _extra_copy(self, kind: Kind, live: LiveObject, rule: PruneRule | None) -> None:
        """A live copy of a declared object: deleted with ``--repair-duplicates`` (or when
        pruning covers it, as before); otherwise left alone, listed under duplicates only."""
        dup = self.extra_copies[live.id]
        if not self.repair and not (rule is not None and rule.prunes(live.name) and kind.write.deletable):
            return
        owner = self.desired_at.get(address(kind.name, dup.key))
        parent = owner.parent if owner is not None else None
        key = self._free_key(kind, live.key, live)
        self.add(Step("delete", kind.name, key, live.id, parent.address if parent else None,
                      live.parent_id))
        self.live_at[address(kind.name, key)] = live
        self._touch(kind, key, live, parent)

    def _unmanaged(self, kind: Kind, live: LiveObject, rule: PruneRule) -> None:
        if not rule.prunes(live.name):
            self.plan.unmanaged.append(Unmanaged(kind.name, live.key, live.id))
            return
        if not kind.write.deletable:
            self.plan.unmanaged.append(Unmanaged(kind.name, live.key, live.id))
            self.plan.warnings.append(f"{address(kind.name, live.key)} {NOT_PRUNABLE}: "
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


def _write_only(kind: Kind) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """The kind's write-only paths, sorted: each with its parts and its holder's path."""
    return _split_paths(kind.compare.write_only)


@functools.cache
def _split_paths(paths: frozenset[str]) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    return tuple((p, tuple(p.split(".")), p.rpartition(".")[0]) for p in sorted(paths))


def literal_secrets(plan: Plan) -> list[str]:
    """``address#field`` of every secret a step holds only as a literal (not a reference):
    such a plan cannot be saved for ``apply --plan``, which resolves references only."""
    found = []
    for step in plan.steps:
        for field_path in sorted(kinds.get(step.kind).compare.secret):
            value: Any = step.desired
            for part in field_path.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            if value == LITERAL_SECRET:
                found.append(f"{step.address}#{field_path}")
    return found
