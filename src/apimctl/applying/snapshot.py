"""Has the area changed since the plan was made? A light read under the lease tells.

:func:`apimctl.applying.command.apply` plans before it takes the area's lease (a refused,
cancelled or empty apply writes nothing), so under the lease it must know whether another
apply changed the area meanwhile: if so the plan is made again, and what the other apply did
is not done twice. Reading and planning the whole area a second time would double the cost of
``apply``; a :class:`Snapshot` instead keeps, per top-level kind, a digest of every object's
fingerprint fields (:func:`snapshot_fields`: id, identity, ``updated``, ``revisionNumber``,
``status``, and the same of its child objects; the whole object for a kind without
``updated``), taken from the read the plan was made from. Under the lease the area is listed
again with only those fields (the same Σ⌈N/1000⌉ list calls, a small part of the bytes) and
the two digests are compared. A write anywhere in a service moves its ``revisionNumber`` and
``updated`` (SUPPLEMENT §4), a write to a plan its ``updated``: what the fields do not show
is what a saved plan's fingerprints do not show either.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.kinds import Kind
from apimctl.state.live import PAGE_SIZE, Lister

_MARKS = ("id", "updated", "revisionNumber", "status")
_MOD = 1 << 128


def snapshot_fields(kind: Kind) -> tuple[str, ...]:
    """The fields of ``kind``'s read projection that tell a change: those of :data:`_MARKS`
    and the identity, of the object and of its child objects; all of them when the kind's
    objects carry no ``updated`` (they are small: a domain)."""
    if "updated" not in kind.fields:
        return kind.fields
    wanted = [*_MARKS, kind.identity]
    for child in kinds.children_of(kind):
        wanted += [f"{child.manifest_key}.{name}" for name in (*_MARKS, child.identity)]
    return tuple(f for f in kind.fields if f in wanted)


_ENCODE = msgspec.json.Encoder(order="sorted").encode  # one text whatever the key order


def _digest(fields: tuple[str, ...], item: Mapping[str, Any]) -> int:
    """A 128-bit digest of ``item`` projected on ``fields`` (dotted paths one level deep);
    the order of child objects does not count."""
    parts = [_ENCODE({f: item.get(f) for f in fields if "." not in f})]
    nested: dict[str, list[str]] = {}
    for f in fields:
        head, dot, tail = f.partition(".")
        if dot:
            nested.setdefault(head, []).append(tail)
    for head, names in nested.items():
        children = sorted(_ENCODE({n: c.get(n) for n in names})
                          for c in as_list(item.get(head)) if isinstance(c, Mapping))
        parts.append(_ENCODE(head) + b":" + b"\n".join(children))
    text = b"\x00".join(parts)
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "big")


@dataclass
class KindDigest:
    """The objects of one kind, as an order-free digest: how many, and the sum of their digests."""

    kind: Kind
    count: int = 0
    total: int = 0
    fields: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.fields = snapshot_fields(self.kind)

    def add(self, item: Mapping[str, Any]) -> None:
        if kinds.ROLES.reserved(self.kind, item.get(self.kind.identity)):
            return  # the apply lease: never live state, and taken in between
        self.count += 1
        self.total = (self.total + _digest(self.fields, item)) % _MOD

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KindDigest):
            return NotImplemented
        return (self.kind.name, self.count, self.total) == (other.kind.name, other.count, other.total)

    __hash__ = None  # type: ignore[assignment]


# what a snapshot covers: the kinds apply writes (a data source is written by no apply, and
# a plan reads it only when the manifests name it)
_WRITTEN = tuple(k for k in kinds.TOP_LEVEL if not k.read_only)


@dataclass
class Snapshot:
    """The fingerprint of a whole area, per top-level kind name (of the kinds apply writes);
    built object by object (:meth:`add`) while the area is read."""

    kinds: dict[str, KindDigest] = field(
        default_factory=lambda: {k.name: KindDigest(k) for k in _WRITTEN})

    def add(self, kind: Kind, item: Mapping[str, Any]) -> None:
        digest = self.kinds.get(kind.name)
        if digest is not None:
            digest.add(item)

    @classmethod
    def of(cls, raw: Mapping[str, Iterable[Mapping[str, Any]]]) -> Snapshot:
        """The snapshot of raw lists as :func:`apimctl.state.live.read_raw` answers them."""
        snap = cls()
        for kind in kinds.TOP_LEVEL:
            for item in raw.get(kind.name, []):
                snap.add(kind, item)
        return snap

    @classmethod
    async def read(cls, client: Lister, skip: Collection[str] = ()) -> Snapshot:
        """The area's snapshot now: every top-level kind apply writes listed with
        :func:`snapshot_fields`, but those named in ``skip`` (not read: empty, as in the
        snapshot of a read that skipped them)."""
        async def one(kind: Kind) -> list[dict[str, Any]]:
            params = [("fields", ",".join(snapshot_fields(kind)))]
            return await client.list_all(kind.collection_path(), params, page_size=PAGE_SIZE,
                                         page_index=kind.page_index)

        read = [k for k in _WRITTEN if k.name not in skip]
        lists = await asyncio.gather(*(one(k) for k in read))
        return cls.of({k.name: items for k, items in zip(read, lists, strict=True)})
