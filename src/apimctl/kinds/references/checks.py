"""Offline checks of the references the manifests make (pure, no I/O).

:func:`objects` walks every object the manifest document declares (:class:`Declared`), and
:func:`check` checks every reference (:func:`apimctl.kinds.references.refs_of`) against
them: :class:`Finding` says where, what and how bad. How references are found and keys are
built is :mod:`apimctl.kinds.references`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from apimctl.kinds import BY_NAME, KINDS, children_of
from apimctl.kinds.base import Kind
from apimctl.kinds.findings import Finding, identity
from apimctl.kinds.references import Path, Ref, covered, did_you_mean, refs_of

_DEFAULT_UNKNOWN = {
    "global": "unknown {label} '{key}'; declare it under {manifest_key}",
    "parent": "unknown {label} '{name}' (this {parent_label} declares: {listed})",
    "within": "unknown {label} '{key}'",
}
_HOST_UNKNOWN = "{name} is not under any declared {label} (declared: {listed})"
_HOST_UNMANAGED = ("{manifest_key} are not managed in these manifests: {name} must be under an "
                   "active {label} of the area")




class Declared(NamedTuple):
    """One object the manifests declare: its kind, path, entry, key and parent entry."""

    kind: Kind
    path: Path
    entry: Any
    name: str | None
    parent_key: str | None
    parent: Mapping[str, Any] | None


def objects(doc: Mapping[str, Any]) -> Iterator[Declared]:
    """Every object of every kind the manifest document ``doc`` declares, parents first."""
    for kind in KINDS:
        if kind.top_level:
            yield from _declared(kind, doc, (), None, None)


_CHILDREN: Mapping[str, tuple[Kind, ...]] = {kind.name: children_of(kind) for kind in KINDS}


def _declared(kind: Kind, holder: Mapping[str, Any], base: Path, parent_key: str | None,
              parent: Mapping[str, Any] | None) -> Iterator[Declared]:
    entries = holder.get(kind.manifest_key)
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        path = (*base, kind.manifest_key, index)
        name = identity(entry, kind.identity)
        yield Declared(kind, path, entry, name, parent_key, parent)
        if _is_mapping(entry):
            for child in _CHILDREN[kind.name]:
                if child.manifest_key in entry:
                    yield from _declared(child, entry, path, name, entry)


def check(doc: Mapping[str, Any], declared: Sequence[Declared] | None = None) -> list[Finding]:
    """Check every reference of the manifest document ``doc`` against what it declares
    (``declared``: ``objects(doc)``, when the caller has them already).

    A top-level kind is checked always (a read-only one only when the manifests list it); a
    child kind (and a reference within the parent) only when its parent declares that list,
    since a list the manifests omit is left alone on the live side. A compound reference whose
    parent is unknown reports the parent. Hosts must be under a declared domain (a warning,
    once per host, when the manifests do not manage domains). One pass over the objects: the
    names each kind declares are indexed first, and what a reference is checked against (a
    parent's list, the declared domains) is worked out once.
    """
    objs = list(objects(doc)) if declared is None else declared
    run = _Checker(doc, objs)
    for obj in objs:
        if not _is_mapping(obj.entry):
            continue
        parent_key = obj.parent_key if obj.parent is None or obj.parent_key is not None else ""
        for ref in refs_of(obj.kind, obj.entry, parent_key):
            reference = ref.reference
            if reference.scope == "host" and run.hosts.get((reference.kind, ref.name)):
                continue  # a host already found covered: most references of a large area
            target = BY_NAME.get(ref.kind)
            if target is not None:  # else not a registered kind: nothing to check it against
                run.reference(obj, target, ref)
    return list(run.found.values())


@dataclass
class _Checker:
    """One run of :func:`check`: the declared names, and the findings so far."""

    doc: Mapping[str, Any]
    declared: Sequence[Declared]
    names: dict[str, dict[str, None]] = field(default_factory=dict)
    firsts: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)  # first top-level entry by key
    children: dict[tuple[str, str], dict[str, None]] = field(default_factory=dict)  # (kind, parent key) -> names
    found: dict[tuple[Path, str], Finding] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set)
    in_parent: dict[tuple[int, str], dict[str, None]] = field(default_factory=dict)  # (parent, kind) -> names
    domains: dict[str, list[str]] = field(default_factory=dict)  # host kind -> declared names
    hosts: dict[tuple[str, str], bool] = field(default_factory=dict)  # (kind, host) -> covered

    def __post_init__(self) -> None:
        for obj in self.declared:
            if obj.name is None:
                continue
            if obj.kind.top_level:
                self.names.setdefault(obj.kind.name, {})[obj.name] = None
                if _is_mapping(obj.entry):
                    self.firsts.setdefault((obj.kind.name, obj.name), obj.entry)
            elif obj.parent is not None and obj.parent_key is not None:
                first = self.firsts.get((obj.kind.parent or "", obj.parent_key))
                if first is obj.parent:
                    self.children.setdefault((obj.kind.name, obj.parent_key), {})[obj.name] = None

    def add(self, finding: Finding) -> None:
        self.found.setdefault((finding.path, finding.message), finding)

    def reference(self, obj: Declared, target: Kind, ref: Ref) -> None:
        if ref.by_host:
            self.host(target, ref, obj.path)
        elif ref.reference.scope == "parent":
            self.in_own_parent(obj, target, ref)
        elif ref.reference.within is not None:
            self.compound(target, ref, obj.path)
        elif target.top_level and _checkable(self.doc, target) and ref.name not in self.names.get(target.name, {}):
            self.add(Finding((*obj.path, *ref.path), _message(ref, target, ref.name)
                             + did_you_mean(ref.name, self.names.get(target.name, {}))))

    def in_own_parent(self, obj: Declared, target: Kind, ref: Ref) -> None:
        """A name within the document's own parent (an endpoint's error set)."""
        if obj.parent is None or not isinstance(obj.parent.get(target.manifest_key), list):
            return
        key = (id(obj.parent), target.name)  # the parent outlives the run: its id stays its own
        declared = self.in_parent.get(key)
        if declared is None:
            declared = self.in_parent[key] = {}
            for entry in obj.parent[target.manifest_key]:
                name = identity(entry, target.identity)
                if name is not None:
                    declared.setdefault(name, None)
        if ref.name not in declared:
            self.add(Finding((*obj.path, *ref.path),
                             _message(ref, target, ref.name, ", ".join(declared) or "none")))

    def compound(self, target: Kind, ref: Ref, base: Path) -> None:
        """``PARENT/NAME``: the parent must be declared; the name only when the parent lists them."""
        parent_kind = BY_NAME[target.parent] if target.parent else None
        if parent_kind is None or ref.parent is None or ref.parent_path is None:
            return
        if ref.parent not in self.names.get(parent_kind.name, {}):
            if _checkable(self.doc, parent_kind):
                self.add(Finding((*base, *ref.parent_path),
                                 _DEFAULT_UNKNOWN["global"].format(label=parent_kind.label, key=ref.parent,
                                                                   manifest_key=parent_kind.manifest_key)
                                 + did_you_mean(ref.parent, self.names.get(parent_kind.name, {}))))
            return
        parent = self.firsts.get((parent_kind.name, ref.parent))
        if parent is None or not isinstance(parent.get(target.manifest_key), list):
            return
        if ref.name not in self.children.get((target.name, ref.parent), {}):
            self.add(Finding((*base, *ref.path), _message(ref, target, ref.key)
                             + did_you_mean(ref.name, self.children.get((target.name, ref.parent), {}))))

    def host(self, target: Kind, ref: Ref, base: Path) -> None:
        declared = self.domains.get(target.name)
        if declared is None:
            entries = self.doc.get(target.manifest_key)
            declared = self.domains[target.name] = [
                name.lower().rstrip(".") for name in
                (identity(e, target.identity) for e in (entries if isinstance(entries, list) else []))
                if name is not None]
        known = self.hosts.get((target.name, ref.name))
        if known is None:
            known = self.hosts[(target.name, ref.name)] = covered(ref.name, declared)
        if known:
            return
        where = (*base, *ref.path)
        fields = {"name": ref.name, "label": target.label, "manifest_key": target.manifest_key}
        if target.manifest_key in self.doc:
            self.add(Finding(where, _HOST_UNKNOWN.format(listed=", ".join(declared) or "none", **fields)))
        elif ref.name.lower() not in self.warned:
            self.warned.add(ref.name.lower())
            self.add(Finding(where, _HOST_UNMANAGED.format(**fields), "warning"))


def _checkable(doc: Mapping[str, Any], kind: Kind) -> bool:
    return not kind.read_only or isinstance(doc.get(kind.manifest_key), list)


def _message(ref: Ref, target: Kind, key: str, listed: str = "") -> str:
    scope = "within" if ref.reference.within is not None else ref.reference.scope
    parent = BY_NAME[target.parent] if target.parent else None
    template = ref.reference.unknown or _DEFAULT_UNKNOWN[scope]
    return template.format(label=target.label, key=key, name=ref.name, listed=listed,
                           manifest_key=target.manifest_key,
                           parent_label=parent.label if parent else "")


__all__ = ["Declared", "Finding", "check", "identity", "objects"]


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)`` for the entries of every declared object: a dict nearly
    always, told without the abstract class's check (ten times the cost)."""
    return type(value) is dict or isinstance(value, Mapping)
