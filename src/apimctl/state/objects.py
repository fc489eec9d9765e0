"""The live model: :class:`LiveObject` (one object of the area, its document kept packed) and
:class:`LiveState` (every live object, per kind), and what a live object keeps of the API's
object it was read from (:class:`Kept`, :func:`repeats`).

:mod:`apimctl.state.live` reads an area into these values; planning, drift, export and apply
read them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.kinds import Kind
from apimctl.kinds.dialects import mashery_values
from apimctl.kinds.ops import Context
from apimctl.speed import is_mapping, per_name
from apimctl.state.digests import Digests
from apimctl.state.packing import PLAIN, Packer


class LiveObject:
    """One live object: its key, id, parent, manifest-shaped ``doc`` and fingerprint facts.

    ``doc`` is stored packed and decoded on each access (a new dict every time: change a
    copy, or assign ``doc`` to replace it). ``norm`` holds the digests of the object's
    normal form in ``context`` (:func:`apimctl.state.digests.digests`), ``None`` when not
    made.
    ``raw`` is the API's object as read, only the fields telling copies apart (id, identity,
    ``created``, ``status``; the keyed lists and sets with their items' ids and ``created``
    only when two items of one of them share an identity): duplicates inside keyed lists are
    found there, before the normal form collapses them. Child collections are not kept (they
    are objects of their own).
    """

    __slots__ = ("_packed", "_packer", "_raw", "context", "doc_digest", "id", "key", "kind", "name",
                 "norm", "parent_id", "parent_key", "revision", "updated")

    def __init__(self, kind: str, key: str, id: str, doc: dict[str, Any],
                 parent_key: str | None = None, parent_id: str | None = None,
                 updated: str | None = None, revision: int | None = None, name: str = "",
                 raw: Mapping[str, Any] | tuple[Any, ...] | None = None, *,
                 packer: Packer | None = None, norm: Digests | None = None,
                 context: Context | None = None, digested: bool = False) -> None:
        self.kind = kind
        self.key = key
        self.id = id
        self.parent_key = parent_key
        self.parent_id = parent_id
        self.updated = updated
        self.revision = revision
        self.name = name or str(doc.get(kinds.get(kind).identity, ""))
        self._raw = raw  # a mapping, or the values of the kind's kept fields (``Kept``)
        self.norm = norm
        self.context = context
        self._packer = packer or PLAIN
        self.doc_digest: bytes | None = None
        if digested:
            self._packed, self.doc_digest = self._packer.pack_digested(doc)
        else:
            self._packed = self._packer.pack(doc)

    @property
    def raw(self) -> Mapping[str, Any]:
        kept = self._raw
        if kept is None:
            return {}
        if isinstance(kept, tuple):
            names = kept_of(kinds.get(self.kind)).scalars
            return {n: v for n, v in zip(names, kept, strict=True) if v is not ABSENT}
        return kept

    @property
    def keeps_lists(self) -> bool:
        """Whether :attr:`raw` may hold nested lists: not when the reader found no two items
        of a keyed list or set sharing an identity (it then keeps the kept scalars alone), nor
        when nothing of the raw object was kept."""
        return self._raw is not None and not isinstance(self._raw, tuple)

    @property
    def doc(self) -> dict[str, Any]:
        return self._packer.unpack(self._packed)

    @doc.setter
    def doc(self, value: dict[str, Any]) -> None:
        self._packed = self._packer.pack(value)
        self.norm = self.doc_digest = None

    @property
    def packed(self) -> tuple[bytes, bytes | None] | None:
        """The document as kept: its packed bytes and the preset dictionary they were deflated
        against (``None`` when kept unpacked: it has no encoding)."""
        packed = self._packed
        return (packed, self._packer.zdict) if isinstance(packed, bytes) else None

    @classmethod
    def restored(cls, kind: str, key: str, id: str, packed: bytes | dict[str, Any], packer: Packer,
                 parent_key: str | None, parent_id: str | None, updated: str | None,
                 revision: int | None, name: str, context: Context | None,
                 doc_digest: bytes | None) -> LiveObject:
        """An object as :func:`portable` gave it, its document kept as it was packed."""
        obj = cls.__new__(cls)
        obj.kind, obj.key, obj.id, obj.name = kind, key, id, name
        obj.parent_key, obj.parent_id, obj.updated, obj.revision = parent_key, parent_id, updated, revision
        obj._raw, obj.norm, obj.context, obj.doc_digest = None, None, context, doc_digest
        obj._packer, obj._packed = packer, packed
        return obj

    def _fields(self) -> tuple[Any, ...]:
        return (self.kind, self.key, self.id, self.doc, self.parent_key, self.parent_id,
                self.updated, self.revision, self.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LiveObject):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"LiveObject(kind={self.kind!r}, key={self.key!r}, id={self.id!r}, "
                f"doc={self.doc!r}, parent_key={self.parent_key!r}, parent_id={self.parent_id!r}, "
                f"updated={self.updated!r}, revision={self.revision!r}, name={self.name!r})")


@dataclass(repr=False)
class LiveState:
    """Every live object, per kind, in the order the API listed them; ``spelled``: per kind,
    the first document with values spelled the ``mashery`` way (SUPPLEMENT §10.2), which
    dialect detection looks at rather than at every document again. ``skipped``: the
    top-level kinds not read (data sources nothing asked for); ``refused``: per kind whose
    read was optional and refused by the area, why (such a kind reads as empty)."""

    objects: dict[str, list[LiveObject]] = field(default_factory=dict)
    spelled: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: frozenset[str] = frozenset()
    refused: dict[str, str] = field(default_factory=dict)

    def of(self, kind: str) -> list[LiveObject]:
        return self.objects.get(kind, [])

    def add(self, obj: LiveObject, doc: dict[str, Any] | None = None) -> None:
        """Add ``obj`` (``doc``: its document, when at hand)."""
        self.objects.setdefault(obj.kind, []).append(obj)
        if obj.kind not in self.spelled:
            kind = kinds.BY_NAME.get(obj.kind)
            if kind is not None and kind.compare.vocabularies:
                doc = obj.doc if doc is None else doc
                if mashery_values(kind, doc):
                    self.spelled[obj.kind] = doc

    def count(self) -> int:
        return sum(len(v) for v in self.objects.values())

    def __repr__(self) -> str:  # a summary: asyncio may repr a task's result (the state)
        counts = ", ".join(f"{kind} {len(objs)}" for kind, objs in self.objects.items())
        return f"LiveState({counts})"


# --- what a live object keeps of its raw object ------------------------------------------------


@dataclass(frozen=True)
class Kept:
    """What :attr:`LiveObject.raw` keeps of one kind's raw objects (made once per kind):
    the fields telling copies apart (id, identity, ``created``, ``status``), and the keyed
    lists and sets holding nested items, kept when two items share an identity; ``lists``:
    each of those by path, with the field identifying its items."""

    kind: Kind
    scalars: tuple[str, ...]
    heads: tuple[str, ...]
    lists: tuple[tuple[tuple[str, ...], str], ...]
    repeated: tuple[int, ...]  # the scalars whose texts repeat across objects (shared)


ABSENT: Any = object()  # a kept field the raw object lacks


@per_name
def kept_of(kind: Kind) -> Kept:
    paths = (*kind.keyed, *kind.compare.sets)
    scalars = tuple(sorted({"id", "created", "status", kind.identity}))
    return Kept(kind, scalars, tuple(sorted({p.split(".")[0] for p in paths})),
                 tuple((tuple(p.split(".")), kind.keyed.get(p, "id")) for p in paths),
                 tuple(i for i, name in enumerate(scalars) if name != "id"))


def _lists_at(value: Any, parts: tuple[str, ...]) -> Iterator[list[Any]]:
    """The lists found at a dotted path, through every item of the lists on the way."""
    items = as_list(value.get(parts[0])) if isinstance(value, Mapping) else []
    if len(parts) == 1:
        yield items
        return
    for item in items:
        yield from _lists_at(item, parts[1:])


def repeats(kind: Kind, raw: Mapping[str, Any]) -> bool:
    """Whether a keyed list (by its key field) or a set (by the items' ids) of ``raw`` holds
    two items with one identity, at any depth: the nested duplicates planning reports."""
    for parts, key_field in kept_of(kind).lists:
        head = raw.get(parts[0])
        if not head or (len(parts) == 1 and (not isinstance(head, list) or len(head) < 2)):
            continue  # nothing there, or a single item
        for items in _lists_at(raw, parts):
            if len(items) < 2:
                continue
            found = [item.get(key_field) if is_mapping(item) else None for item in items]
            idents = [str(i) for i in found if i is not None and i != ""]
            if len(set(idents)) < len(idents):
                return True
    return False


# --- a live model sent between processes --------------------------------------------------------

# per object: kind, key, id, packed document, the preset dictionary it was packed against,
# parent key, parent id, updated, revision, name, context, document digest
PortableState = tuple[
    list[tuple[str, str, str, bytes | dict[str, Any], bytes | None, str | None, str | None, str | None,
               int | None, str, Context | None, bytes | None]],
    dict[str, dict[str, Any]], frozenset[str], dict[str, str]]


def portable(state: LiveState) -> PortableState:
    """``state`` as plain data that pickles (its documents still packed: a few dozen bytes
    each), for :func:`from_portable` in another process. Neither :attr:`LiveObject.raw` nor
    the normal forms travel: a model read for export or for comparing areas keeps neither."""
    objects = [(o.kind, o.key, o.id, o._packed, o._packer.zdict, o.parent_key, o.parent_id, o.updated,
                o.revision, o.name, o.context, o.doc_digest)
               for found in state.objects.values() for o in found]
    return objects, state.spelled, state.skipped, state.refused


def from_portable(data: PortableState) -> LiveState:
    """The live model :func:`portable` gave, the objects in the order they were read."""
    objects, spelled, skipped, refused = data
    state = LiveState(spelled=spelled, skipped=skipped, refused=refused)
    packers: dict[bytes | None, Packer] = {None: PLAIN}
    for kind, key, id_, packed, zdict, parent_key, parent_id, updated, revision, name, ctx, found in objects:
        packer = packers.get(zdict) or packers.setdefault(zdict, Packer(zdict))
        obj = LiveObject.restored(kind, key, id_, packed, packer, parent_key, parent_id, updated,
                                  revision, name, ctx, found)
        state.objects.setdefault(kind, []).append(obj)
    return state
