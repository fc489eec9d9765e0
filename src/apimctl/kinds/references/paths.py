"""References between objects, driven by each kind's :attr:`Kind.references` (pure, no I/O).

The functions here take the :class:`Kind` itself and read no registry, so the operations of
the kinds (:mod:`apimctl.kinds.ops`) use them without importing :data:`apimctl.kinds.KINDS`;
:mod:`apimctl.kinds.references` is the same API for callers holding a kind's name.

One place knows how a document in manifest shape refers to other objects; the stages ask it:

- :func:`refs_of` enumerates the references a document makes (:class:`Ref`: where the name
  is, the referenced kind and key);
- :func:`rename` rewrites them as the manifests rename objects (``previousNames``), and
  :func:`resolve` as a write body carries them (names to ids, through a hook the applying side
  passes; hosts to ``{"address": ...}``); :func:`rewrite` is the setter both use;
- :func:`addresses` and :func:`hosts` are what planning orders steps by;
- :mod:`apimctl.kinds.references.checks` checks them offline against the objects the
  manifests declare.

How a key is built from a reference: ``Reference.scope`` (``global``: the name; ``parent``:
``PARENT/NAME`` within the document's parent; ``host``: a host name, covered by a domain equal
to it or a parent domain of it) and ``Reference.within`` (compound references: the field
naming the referenced object's parent, in the same list item).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from apimctl.kinds.base import Kind, Reference, join_key, split_first, unescape_name

Path = tuple[str | int, ...]

class Ref(NamedTuple):
    """One reference a document makes (a named tuple: documents make hundreds of thousands).

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



@functools.cache
def _segments(field: str) -> tuple[tuple[str, bool], ...]:
    """``services[].endpoints[].name`` -> ``(("services", True), ("endpoints", True), ("name", False))``."""
    out = []
    for part in field.split("."):
        is_list = part.endswith("[]")
        out.append((part[:-2] if is_list else part, is_list))
    return tuple(out)


_Compiled = tuple[tuple[Reference, tuple[tuple[str, bool], ...]], ...]
# by the id of a kind's entry: the entry (kept, so the id is never another's) and its
# references with their fields split into segments, made once per entry
_COMPILED: dict[int, tuple[Kind, _Compiled]] = {}


def _references_of(kind: Kind) -> _Compiled:
    found = _COMPILED.get(id(kind))
    if found is None:
        compiled = tuple((reference, _segments(reference.field)) for reference in kind.references)
        found = _COMPILED[id(kind)] = (kind, compiled)
    return found[1]


def _walk(node: Any, segs: tuple[tuple[str, bool], ...], path: Path,
          items: tuple[tuple[Path, Any], ...]) -> Iterator[tuple[Path, str, tuple[tuple[Path, Any], ...]]]:
    """(path, name, enclosing list items) of every string the field's segments reach."""
    name, is_list = segs[0]
    rest = segs[1:]
    # a dict nearly always: told without the abstract class's check (ten times the cost,
    # once per field of every reference of every object)
    if not (type(node) is dict or isinstance(node, Mapping)) or name not in node:
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
        elif rest and (type(item) is dict or isinstance(item, Mapping)):
            yield from _walk(item, rest, at, inner)


def _within(ref_items: tuple[tuple[Path, Any], ...], within: str) -> tuple[Path, Any] | None:
    """The path and value of the ``within`` field in the enclosing list item it shares."""
    depth, tail = _within_plan(within)
    if depth == 0 or depth > len(ref_items):
        return None
    item_path, item = ref_items[depth - 1]
    value: Any = item
    for name in tail:
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return (*item_path, *tail), value


def _own_field(out: list[Ref], reference: Reference, field: str, is_list: bool, value: Any,
               parent: str | None) -> None:
    """What :func:`_walk` finds for a one-segment field (``errorSet``, ``roles[]``), directly."""
    if not is_list:
        if isinstance(value, str):
            own: Path = (field,)
            out.append(Ref(reference, own, own, value, parent))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                path = (field, index)
                out.append(Ref(reference, path, path, item, parent))


@functools.cache
def _within_plan(within: str) -> tuple[int, tuple[str, ...]]:
    """How many list levels ``within`` goes down, and the fields below the last one."""
    segs = _segments(within)
    return sum(1 for _, is_list in segs if is_list), tuple(name for name, is_list in segs if not is_list)


def refs_of(kind: Kind, doc: Mapping[str, Any], parent_key: str | None = None) -> list[Ref]:
    """The references ``doc`` (one object of ``kind``, manifest shape) makes, in the order of
    the kind's ``references``; names that are not strings are left out, and so are references
    within the parent when ``parent_key`` is ``None``."""
    out: list[Ref] = []
    if not (type(doc) is dict or isinstance(doc, Mapping)):
        return out
    for reference, segs in _references_of(kind):
        first, is_list = segs[0]
        if first not in doc:
            continue  # most references are absent from most objects
        if len(segs) == 1 and reference.within is None:  # a field of the document itself
            if reference.scope == "parent" and parent_key is None:
                continue
            _own_field(out, reference, first, is_list, doc[first],
                       parent_key if reference.scope == "parent" else None)
            continue
        for path, name, items in _walk(doc, segs, (), ()):
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


def rename(kind: Kind, doc: Mapping[str, Any], parent_key: str | None,
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


def resolve(kind: Kind, doc: Mapping[str, Any], parent_key: str | None,
            id_of: Callable[[Ref], str | int | None]) -> dict[str, Any]:
    """``doc`` with its references as a write body carries them: a host becomes
    ``{"address": host}``; any other name the fields of ``Reference.body`` (``id`` from
    ``id_of``, left out when it returns ``None``, and ``name``), in place of the name. A name
    held in a field of a list item (``services[].name``; both fields of a compound reference's
    item) gives the item those fields first, in place of the naming fields, its other fields
    kept (``{"id": ..., "name": ..., "endpoints": [...]}``). A reference with an ``id_field``
    is that field holding the bare id, in place of the name (``null`` for a ``null`` name)."""
    values: list[tuple[Path, Any]] = []
    moved: list[Path] = []  # names whose id goes into a field of its own
    for ref in refs_of(kind, doc, parent_key):
        if ref.by_host:
            values.append((ref.path, {"address": ref.name}))
            continue
        found = id_of(ref)
        if ref.reference.id_field is not None:
            values.append(((*ref.path[:-1], ref.reference.id_field), found))
            moved.append(ref.path)
            continue
        body: dict[str, Any] = {}
        for carried in ref.reference.body:
            if carried == "id" and found is not None:
                body["id"] = found
            elif carried == "name":
                body["name"] = ref.name
        if ref.item == ref.path:  # the name itself, or a string item standing for it
            values.append((ref.path, body))
            continue
        drop = {ref.path[-1]}
        if ref.parent_path is not None and ref.parent_path[:-1] == ref.item:
            drop.add(ref.parent_path[-1])
        values.append((ref.item, Merge(body, frozenset(drop))))
    for reference, segs in _references_of(kind):  # a null name: a null id
        if reference.id_field is not None and len(segs) == 1 and doc.get(segs[0][0], "") is None:
            values.append(((reference.id_field,), None))
            moved.append((segs[0][0],))
    out = rewrite(doc, values)
    for path in moved:  # their containers are copies: rewrite copied them for the id
        holder: Any = out
        for part in path[:-1]:
            holder = holder[part]
        holder.pop(path[-1], None)
    return out


# --- what planning orders by ----------------------------------------------------------------


def addresses(kind: Kind, doc: Mapping[str, Any], parent_key: str | None) -> set[str]:
    """Addresses of the objects ``doc`` refers to by name (hosts excepted)."""
    return {r.address for r in refs_of(kind, doc, parent_key) if not r.by_host}


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` when one known name is close to ``name`` (a typo), else ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def host_part(address: str) -> str:
    """The host of an address, without a port: an address may carry one
    (``backend.example.com:443``, SUPPLEMENT §10.10.2), and the domain rules of ``/domains``
    apply to the host part."""
    host, sep, port = address.rpartition(":")
    return host if sep and host and port.isdigit() else address


def hosts(kind: Kind, doc: Mapping[str, Any]) -> list[str]:
    """The host names ``doc`` refers to, lower-cased and without a port (a body's
    ``{"address": ...}`` too)."""
    out: list[str] = []
    for reference in kind.references:
        if reference.scope != "host":
            continue
        # a string item is the shorthand of an object's last field: both forms are read
        for _, name, _ in _walk(doc, _segments(reference.field + ".address"), (), ()):
            out.append(host_part(name.lower()))
    return out


def parent_domains(host: str) -> list[str]:
    """``a.b.example.com`` -> itself and every parent domain, down to ``com``."""
    parts = host.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def covered(host: str, domains: Iterable[str]) -> bool:
    """Whether ``host`` (an address: its port aside) is one of ``domains`` (lower-case) or under
    one of them."""
    host = host_part(host.lower()).rstrip(".")
    return any(host == d or host.endswith("." + d) for d in domains)


__all__ = [
    "Merge", "Path", "Ref", "addresses", "covered", "did_you_mean", "host_part", "hosts",
    "parent_domains", "refs_of", "rename", "resolve", "rewrite",
]
