"""References between objects, driven by each kind's :attr:`Kind.references` (pure, no I/O).

One place knows how a document in manifest shape refers to other objects; the stages ask it:

- :func:`refs_of` enumerates the references a document makes (:class:`Ref`: where the name
  is, the referenced kind and key);
- :func:`rename` rewrites them as the manifests rename objects (``previousNames``), and
  :func:`resolve` as a write body carries them (names to ids, through a hook the applying side
  passes; hosts to ``{"address": ...}``); :func:`rewrite` is the setter both use;
- :func:`addresses` and :func:`hosts` are what planning orders steps by;
- :func:`check` checks them offline against the objects the manifests declare
  (:func:`objects` walks those).

How a key is built from a reference: ``Reference.scope`` (``global``: the name; ``parent``:
``PARENT/NAME`` within the document's parent; ``host``: a host name, covered by a domain equal
to it or a parent domain of it) and ``Reference.within`` (compound references: the field
naming the referenced object's parent, in the same list item).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from apimctl.kinds import BY_NAME, KINDS, children_of
from apimctl.kinds.base import Kind, Reference, join_key, split_first, unescape_name

Path = tuple[str | int, ...]

_DEFAULT_UNKNOWN = {
    "global": "unknown {label} '{key}'; declare it under {manifest_key}",
    "parent": "unknown {label} '{name}' (this {parent_label} declares: {listed})",
    "within": "unknown {label} '{key}'",
}
_HOST_UNKNOWN = "{name} is not under any declared {label} (declared: {listed})"
_HOST_UNMANAGED = ("{manifest_key} are not managed in these manifests: {name} must be under an "
                   "active {label} of the area")


@dataclass(frozen=True)
class Ref:
    """One reference a document makes.

    ``path``: where the name is (the list item itself for a string shorthand); ``item``: the
    innermost list item holding it (``path`` when not in a list); ``parent``: the referenced
    object's parent name (scope ``parent``: the document's parent key; compound references:
    the value at ``parent_path``).
    """

    reference: Reference
    path: Path
    item: Path
    name: str
    parent: str | None = None
    parent_path: Path | None = None

    @property
    def kind(self) -> str:
        return self.reference.kind

    @property
    def key(self) -> str:
        if self.parent is None:
            return join_key(None, self.name)
        # a compound reference's parent is a name from the document; scope parent's a key
        parent = join_key(None, self.parent) if self.reference.within is not None else self.parent
        return join_key(parent, self.name)

    @property
    def address(self) -> str:
        return f"{self.kind}:{self.key}"

    @property
    def by_host(self) -> bool:
        return self.reference.scope == "host"


def _kind(kind: Kind | str) -> Kind:
    return kind if isinstance(kind, Kind) else BY_NAME[kind]


def _segments(field: str) -> list[tuple[str, bool]]:
    """``services[].endpoints[].name`` -> ``[("services", True), ("endpoints", True), ("name", False)]``."""
    out = []
    for part in field.split("."):
        is_list = part.endswith("[]")
        out.append((part[:-2] if is_list else part, is_list))
    return out


def _walk(node: Any, segs: list[tuple[str, bool]], path: Path,
          items: tuple[tuple[Path, Any], ...]) -> Iterator[tuple[Path, str, tuple[tuple[Path, Any], ...]]]:
    """(path, name, enclosing list items) of every string the field's segments reach."""
    name, is_list = segs[0]
    rest = segs[1:]
    if not isinstance(node, Mapping) or name not in node:
        return
    value = node[name]
    here = (*path, name)
    if not is_list:
        if not rest:
            if isinstance(value, str):
                yield here, value, items
        else:
            yield from _walk(value, rest, here, items)
        return
    if not isinstance(value, list):
        return
    for index, item in enumerate(value):
        at = (*here, index)
        inner = (*items, (at, item))
        if isinstance(item, str) and len(rest) <= 1 and not (rest and rest[0][1]):
            yield at, item, inner  # the item itself, or the shorthand for its last field
        elif rest and isinstance(item, Mapping):
            yield from _walk(item, rest, at, inner)


def _within(ref_items: tuple[tuple[Path, Any], ...], within: str) -> tuple[Path, Any] | None:
    """The path and value of the ``within`` field in the enclosing list item it shares."""
    segs = _segments(within)
    depth = sum(1 for _, is_list in segs if is_list)
    if depth == 0 or depth > len(ref_items):
        return None
    item_path, item = ref_items[depth - 1]
    tail = [name for name, is_list in segs if not is_list]
    value: Any = item
    for name in tail:
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return (*item_path, *tail), value


def refs_of(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None = None) -> list[Ref]:
    """The references ``doc`` (one object of ``kind``, manifest shape) makes, in the order of
    the kind's ``references``; names that are not strings are left out, and so are references
    within the parent when ``parent_key`` is ``None``."""
    out: list[Ref] = []
    for reference in _kind(kind).references:
        for path, name, items in _walk(doc, _segments(reference.field), (), ()):
            item = items[-1][0] if items else path
            if reference.within is not None:
                found = _within(items, reference.within)
                if found is None or not isinstance(found[1], str):
                    continue
                out.append(Ref(reference, path, item, name, found[1], found[0]))
            elif reference.scope == "parent":
                if parent_key is None:
                    continue
                out.append(Ref(reference, path, item, name, parent_key))
            else:
                out.append(Ref(reference, path, item, name))
    return out


# --- rewriting ------------------------------------------------------------------------------


def rewrite(doc: Mapping[str, Any], values: Iterable[tuple[Path, Any]]) -> dict[str, Any]:
    """A copy of ``doc`` with the value at each path replaced (a :class:`Merge` is merged into
    the mapping there); only the containers on those paths are copied (``doc`` itself is left
    as it is)."""
    out = dict(doc)
    copied: set[int] = {id(out)}
    for path, value in values:
        node: Any = out
        for part in path[:-1]:
            child = node[part]
            if id(child) not in copied:
                child = list(child) if isinstance(child, list) else dict(child)
                copied.add(id(child))
                node[part] = child
            node = child
        last = path[-1]
        node[last] = value.into(node[last]) if isinstance(value, Merge) else value
    return out


@dataclass(frozen=True)
class Merge:
    """A reference's body fields put first in a list item, in place of the item's ``drop``
    fields (the names the body stands for)."""

    body: Mapping[str, Any]
    drop: frozenset[str | int]

    def into(self, item: Any) -> Any:
        if not isinstance(item, Mapping):
            return dict(self.body)
        return {**self.body, **{k: v for k, v in item.items() if k not in self.drop}}


def rename(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None,
           renames: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with the names it references replaced by their new names; ``renames`` maps old
    addresses (``endpoint:Weather/Forecast``) to new keys. Hosts are never renamed; the parent
    part of a compound reference is written only when no reference of its own covers it."""
    if not renames:
        return dict(doc)
    refs = [r for r in refs_of(kind, doc, parent_key) if not r.by_host]
    own = {r.path for r in refs}
    values: list[tuple[Path, Any]] = []
    for ref in refs:
        new = renames.get(ref.address)
        if new is None:
            continue
        parent, name = split_first(new)
        if ref.parent is None or parent is None:
            values.append((ref.path, unescape_name(new)))
            continue
        values.append((ref.path, unescape_name(name)))
        if ref.parent_path is not None and ref.parent_path not in own:
            values.append((ref.parent_path, unescape_name(parent)))
    return rewrite(doc, values)


def resolve(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None,
            id_of: Callable[[Ref], str | None]) -> dict[str, Any]:
    """``doc`` with its references as a write body carries them: a host becomes
    ``{"address": host}``; any other name the fields of ``Reference.body`` (``id`` from
    ``id_of``, left out when it returns ``None``, and ``name``), in place of the name. A name
    held in a field of a list item (``services[].name``; both fields of a compound reference's
    item) gives the item those fields first, in place of the naming fields, its other fields
    kept (``{"id": ..., "name": ..., "endpoints": [...]}``)."""
    values: list[tuple[Path, Any]] = []
    for ref in refs_of(kind, doc, parent_key):
        if ref.by_host:
            values.append((ref.path, {"address": ref.name}))
            continue
        found = id_of(ref)
        body: dict[str, Any] = {}
        for field in ref.reference.body:
            if field == "id" and found is not None:
                body["id"] = found
            elif field == "name":
                body["name"] = ref.name
        if ref.item == ref.path:  # the name itself, or a string item standing for it
            values.append((ref.path, body))
            continue
        drop = {ref.path[-1]}
        if ref.parent_path is not None and ref.parent_path[:-1] == ref.item:
            drop.add(ref.parent_path[-1])
        values.append((ref.item, Merge(body, frozenset(drop))))
    return rewrite(doc, values)


# --- what planning orders by ----------------------------------------------------------------


def addresses(kind: Kind | str, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` refers to by name (hosts excepted)."""
    return {r.address for r in refs_of(kind, doc, parent_key) if not r.by_host}


def hosts(kind: Kind | str, doc: Mapping[str, Any]) -> list[str]:
    """The host names ``doc`` refers to, lower-cased (a body's ``{"address": ...}`` too)."""
    out: list[str] = []
    for reference in _kind(kind).references:
        if reference.scope != "host":
            continue
        # a string item is the shorthand of an object's last field: both forms are read
        for _, name, _ in _walk(doc, _segments(reference.field + ".address"), (), ()):
            out.append(name.lower())
    return out


def parent_domains(host: str) -> list[str]:
    """``a.b.example.com`` -> itself and every parent domain, down to ``com``."""
    parts = host.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def covered(host: str, domains: Iterable[str]) -> bool:
    """Whether ``host`` is one of ``domains`` (lower-case) or under one of them."""
    host = host.lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in domains)


# --- offline checks -------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """One object the manifests declare: its kind, path, entry, key and parent entry."""

    kind: Kind
    path: Path
    entry: Any
    name: str | None
    parent_key: str | None
    parent: Mapping[str, Any] | None


def identity(entry: Any, field: str) -> str | None:
    """An entry's identity: the field's value, or the entry itself for string shorthands."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping):
        value = entry.get(field)
        return value if isinstance(value, str) else None
    return None


def objects(doc: Mapping[str, Any]) -> Iterator[Declared]:
    """Every object of every kind the manifest document ``doc`` declares, parents first."""
    for kind in KINDS:
        if kind.top_level:
            yield from _declared(kind, doc, (), None, None)


def _declared(kind: Kind, holder: Mapping[str, Any], base: Path, parent_key: str | None,
              parent: Mapping[str, Any] | None) -> Iterator[Declared]:
    entries = holder.get(kind.manifest_key)
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        path = (*base, kind.manifest_key, index)
        name = identity(entry, kind.identity)
        yield Declared(kind, path, entry, name, parent_key, parent)
        if isinstance(entry, Mapping):
            for child in children_of(kind):
                yield from _declared(child, entry, path, name, entry)


@dataclass(frozen=True)
class Finding:
    """A problem an offline check found: where, what, and how bad."""

    path: Path
    message: str
    severity: str = "error"


def check(doc: Mapping[str, Any]) -> list[Finding]:
    """Check every reference of the manifest document ``doc`` against what it declares.

    A top-level kind is checked always (a read-only one only when the manifests list it); a
    child kind (and a reference within the parent) only when its parent declares that list,
    since a list the manifests omit is left alone on the live side. A compound reference whose
    parent is unknown reports the parent. Hosts must be under a declared domain (a warning,
    once per host, when the manifests do not manage domains).
    """
    declared = list(objects(doc))
    names: dict[str, dict[str, None]] = {}
    firsts: dict[tuple[str, str], Mapping[str, Any]] = {}  # first top-level entry by key
    children: dict[tuple[str, str], dict[str, None]] = {}  # (kind, parent key) -> names
    for obj in declared:
        if obj.name is None:
            continue
        if obj.kind.top_level:
            names.setdefault(obj.kind.name, {})[obj.name] = None
            if isinstance(obj.entry, Mapping):
                firsts.setdefault((obj.kind.name, obj.name), obj.entry)
        elif obj.parent is not None and obj.parent_key is not None:
            first = firsts.get((obj.kind.parent or "", obj.parent_key))
            if first is obj.parent:
                children.setdefault((obj.kind.name, obj.parent_key), {})[obj.name] = None

    found: dict[tuple[Path, str], Finding] = {}
    warned: set[str] = set()

    def add(finding: Finding) -> None:
        found.setdefault((finding.path, finding.message), finding)

    for obj in declared:
        if not isinstance(obj.entry, Mapping):
            continue
        parent_key = obj.parent_key if obj.parent is None or obj.parent_key is not None else ""
        for ref in refs_of(obj.kind, obj.entry, parent_key):
            target = BY_NAME.get(ref.kind)
            if target is None:  # not a registered kind: nothing to check it against
                continue
            where = (*obj.path, *ref.path)
            if ref.by_host:
                _check_host(doc, target, ref, where, add, warned)
            elif ref.reference.scope == "parent":
                _check_in_parent(obj, target, ref, where, add)
            elif ref.reference.within is not None:
                _check_compound(doc, target, ref, obj.path, names, firsts, children, add)
            elif target.top_level and _checkable(doc, target) and ref.name not in names.get(target.name, {}):
                add(Finding(where, _message(ref, target, ref.name)))
    return list(found.values())


def _checkable(doc: Mapping[str, Any], kind: Kind) -> bool:
    return not kind.read_only or isinstance(doc.get(kind.manifest_key), list)


def _message(ref: Ref, target: Kind, key: str, listed: str = "") -> str:
    scope = "within" if ref.reference.within is not None else ref.reference.scope
    parent = BY_NAME[target.parent] if target.parent else None
    template = ref.reference.unknown or _DEFAULT_UNKNOWN[scope]
    return template.format(label=target.label, key=key, name=ref.name, listed=listed,
                           manifest_key=target.manifest_key,
                           parent_label=parent.label if parent else "")


def _check_in_parent(obj: Declared, target: Kind, ref: Ref, where: Path,
                     add: Callable[[Finding], None]) -> None:
    """A name within the document's own parent (an endpoint's error set)."""
    if obj.parent is None or not isinstance(obj.parent.get(target.manifest_key), list):
        return
    declared: dict[str, None] = {}
    for entry in obj.parent[target.manifest_key]:
        name = identity(entry, target.identity)
        if name is not None:
            declared.setdefault(name, None)
    if ref.name not in declared:
        add(Finding(where, _message(ref, target, ref.name, ", ".join(declared) or "none")))


def _check_compound(doc: Mapping[str, Any], target: Kind, ref: Ref, base: Path,
                    names: Mapping[str, Mapping[str, None]],
                    firsts: Mapping[tuple[str, str], Mapping[str, Any]],
                    children: Mapping[tuple[str, str], Mapping[str, None]],
                    add: Callable[[Finding], None]) -> None:
    """``PARENT/NAME``: the parent must be declared; the name only when the parent lists them."""
    parent_kind = BY_NAME[target.parent] if target.parent else None
    if parent_kind is None or ref.parent is None or ref.parent_path is None:
        return
    if ref.parent not in names.get(parent_kind.name, {}):
        if _checkable(doc, parent_kind):
            add(Finding((*base, *ref.parent_path),
                        _DEFAULT_UNKNOWN["global"].format(label=parent_kind.label, key=ref.parent,
                                                          manifest_key=parent_kind.manifest_key)))
        return
    parent = firsts.get((parent_kind.name, ref.parent))
    if parent is None or not isinstance(parent.get(target.manifest_key), list):
        return
    if ref.name not in children.get((target.name, ref.parent), {}):
        add(Finding((*base, *ref.path), _message(ref, target, ref.key)))


def _check_host(doc: Mapping[str, Any], target: Kind, ref: Ref, where: Path,
                add: Callable[[Finding], None], warned: set[str]) -> None:
    entries = doc.get(target.manifest_key)
    declared = [name.lower().rstrip(".") for name in
                (identity(e, target.identity) for e in (entries if isinstance(entries, list) else []))
                if name is not None]
    if covered(ref.name, declared):
        return
    fields = {"name": ref.name, "label": target.label, "manifest_key": target.manifest_key}
    if target.manifest_key in doc:
        add(Finding(where, _HOST_UNKNOWN.format(listed=", ".join(declared) or "none", **fields)))
    elif ref.name.lower() not in warned:
        warned.add(ref.name.lower())
        add(Finding(where, _HOST_UNMANAGED.format(**fields), "warning"))


__all__ = [
    "Declared", "Finding", "Merge", "Ref", "addresses", "check", "covered", "hosts", "identity", "objects",
    "parent_domains", "refs_of", "rename", "resolve", "rewrite",
]
