"""The rules that shape a plan beyond the manifests: prune, ignore and target.

``settings.prune``/``--prune`` decide which unmanaged objects are deleted,
``settings.ignore``/``--ignore`` accept out-of-band changes to fields, ``--target`` limits a
plan to some objects and what they need. Called by :mod:`apimctl.planning.build`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.plans.model import Step

NOT_PRUNABLE = "is not declared but cannot be pruned"

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


def check_targets(targets: Sequence[tuple[str, str]], known: set[tuple[str, str]]) -> None:
    for kind, key in targets:
        hit = any(k == kind and (n == key or fnmatch.fnmatchcase(n, key)) for k, n in known)
        if not hit:
            raise PlanError(f"--target {kind}:{key} matches no declared or live object")
