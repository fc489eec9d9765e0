"""The rules that shape a plan beyond the manifests: prune, ignore, rotate and target.

``settings.prune``/``--prune`` decide which unmanaged objects are deleted,
``settings.ignore``/``--ignore`` accept out-of-band changes to fields, ``--rotate-secrets``/
``--rotate`` send write-only secrets that cannot be compared, ``--target`` limits a plan to
some objects and what they need. Called by :mod:`apimctl.planning.build`.

Keys in these texts are escaped as plan output shows them (a ``/`` inside a name is ``\\/``,
a ``\\`` is ``\\\\``); a pattern is matched (fnmatch) against the escaped key.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.kinds import Kind
from apimctl.kinds.references import did_you_mean
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


ROTATE_ALL = "*:*:*"
"""The ``--rotate`` text ``--rotate-secrets`` stands for: every write-only field."""


@dataclass(frozen=True)
class RotateRule:
    """``KIND:KEY:PATH`` of write-only secrets to send although nothing else of their block
    changed (each part may be an fnmatch pattern; :data:`ROTATE_ALL` is every one)."""

    kind: str
    key: str
    path: str

    @classmethod
    def parse(cls, text: str) -> RotateRule:
        kind, sep, rest = text.partition(":")
        key, sep2, path = rest.rpartition(":")
        if not sep or not sep2 or not key or not path:
            raise PlanError(f"--rotate {text!r}: expected KIND:NAME:FIELD_PATH, e.g. "
                            "endpoint:Weather/Forecast:systemDomainAuthentication.password")
        if text != ROTATE_ALL:
            _check_kind(kind, f"--rotate {text!r}")
        return cls(kind, key, path)

    def applies(self, kind: str, key: str, path: str) -> bool:
        return all(have == want or fnmatch.fnmatchcase(have, want)
                   for have, want in ((kind, self.kind), (key, self.key), (path, self.path)))


def rotate_rules(texts: Sequence[str]) -> list[RotateRule]:
    return [RotateRule.parse(text) for text in texts]


def _check_kind(kind: str, what: str) -> Kind:
    if kind not in kinds.BY_NAME:
        raise PlanError(f"{what}: unknown kind {kind!r}{did_you_mean(kind, kinds.BY_NAME)} "
                        f"(known: {', '.join(kinds.BY_NAME)})")
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
    # children by their parent's key (escaped: service "a/b" is "a\/b")
    parent = kinds.get(step.kind).parent
    if parent != kind:
        return False
    owner = step.parent.partition(":")[2] if step.parent else kinds.split_first(step.key)[0] or ""
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


def targeted(targets: Sequence[tuple[str, str]], kind: str, key: str) -> bool:
    """Whether the object ``kind:key`` is one of ``targets`` or inside one."""
    return any(_contains(t, Step("update", kind, key)) for t in targets)


def check_ignores(rules: Sequence[IgnoreRule], known: set[tuple[str, str]]) -> None:
    """Refuse an ignore rule that matches no declared or live object, or names a field its
    kind does not have: a typo would otherwise accept nothing, silently."""
    for rule in rules:
        where = "--ignore" if rule.reason == "--ignore" else "settings.ignore"
        text = f"{where} {rule.kind}:{rule.key}:{rule.path}"
        if not any(k == rule.kind and (n == rule.key or fnmatch.fnmatchcase(n, rule.key))
                   for k, n in known):
            hint = (r" (inside a name, / is written \/ and \ is written \\)"
                    if "/" in rule.key or "\\" in rule.key else "")
            raise PlanError(f"{text} matches no declared or live {rule.kind}{hint}"
                            + _closest(rule.kind, rule.key, known))
        kind = kinds.BY_NAME[rule.kind]
        fields = {f.partition(".")[0] for f in (*kind.fields, *kind.nested, *kind.compare.secret)}
        head = rule.path.replace("[", ".").partition(".")[0]
        if head and not any(fnmatch.fnmatchcase(f, head) for f in fields):
            raise PlanError(f"{text}: a {rule.kind} has no field {head!r}"
                            f"{did_you_mean(head, fields)} "
                            f"(fields: {', '.join(sorted(fields - {'id', 'created', 'updated'}))})")


def check_targets(targets: Sequence[tuple[str, str]], known: set[tuple[str, str]]) -> None:
    for kind, key in targets:
        hit = any(k == kind and (n == key or fnmatch.fnmatchcase(n, key)) for k, n in known)
        if not hit:
            hint = (r" (inside a name, / is written \/ and \ is written \\)"
                    if "/" in key or "\\" in key else "")
            raise PlanError(f"--target {kind}:{key} matches no declared or live object{hint}"
                            + _closest(kind, key, known))


def _closest(kind: str, key: str, known: set[tuple[str, str]]) -> str:
    """`` (did you mean 'KIND:KEY'?)``: the closest address of the same kind, else of any."""
    for candidates in ([(k, n) for k, n in known if k == kind], list(known)):
        keys = sorted({n for _, n in candidates})
        close = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
        if close:
            found = min(k for k, n in candidates if n == close[0])
            return f" (did you mean '{found}:{close[0]}'?)"
    return ""
