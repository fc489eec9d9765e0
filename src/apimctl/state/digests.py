"""Digests of normal forms: how planning tells an unchanged object without diffing it.

The live model keeps, per object, the digests of its normal form (:func:`digests`, made by
:mod:`apimctl.state.normal_batches` as the area is read); planning compares them with the
desired object's normal form (:func:`unchanged`) and normalises and diffs only the objects
they do not show equal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import msgspec

from apimctl.kinds import Kind
from apimctl.speed import per_name

_ENCODE = msgspec.msgpack.Encoder().encode
_UNSET: Any = object()

Digests = bytes  # one digest per part of a normal form (:func:`digests`)
_DIGEST_SIZE = 32
_NO_DIGEST = bytes(_DIGEST_SIZE)  # a part the form lacks, or that has no encoding


def digest(value: Any) -> bytes | None:
    """The SHA-256 of a normal value's msgpack encoding (keys in order); ``None`` when it
    has no encoding. Equal digests mean equal values: the encoding tells apart every type a
    normal form holds (``1``, ``1.0``, ``True``, ``"1"``); unequal digests may still be
    equal values (keys in another order), which a diff then finds equal."""
    try:
        return hashlib.sha256(_ENCODE(value)).digest()
    except (msgspec.EncodeError, TypeError, OverflowError):
        return None


@per_name
def _left_alone(kind: Kind) -> tuple[str, ...]:
    """The top-level collections of ``kind`` left alone when omitted (computed once)."""
    return tuple(sorted(n for n in kind.compare.left_alone if "." not in n))


def _without(normal: Mapping[str, Any], names: tuple[str, ...]) -> Mapping[str, Any]:
    if not names or normal.keys().isdisjoint(names):
        return normal
    return {k: v for k, v in normal.items() if k not in names}


def digests(kind: Kind, normal: dict[str, Any]) -> Digests | None:
    """The digests of a normal form in parts, one after the other, as :func:`unchanged`
    compares them: the form without the collections ``Kind.compare.left_alone``, then each of those
    (zeros when absent); ``None`` when the form has no encoding. ``normal`` is taken apart
    (those collections are removed from it)."""
    names = _left_alone(kind)
    parts = [normal.pop(n, _UNSET) for n in names]
    own = digest(normal)
    if own is None:
        return None
    return b"".join([own, *(_NO_DIGEST if p is _UNSET else digest(p) or _NO_DIGEST
                            for p in parts)])


def unchanged(kind: Kind, parts: Digests, want: Mapping[str, Any]) -> bool:
    """Whether the normal form ``want`` (the desired side) equals, in every field a diff
    compares, the form ``parts`` were made of: its own fields, and the left-alone
    collections ``want`` declares. ``False`` says nothing (compare the forms then)."""
    wanted = wanted_digests(kind, want)
    return wanted is not None and unchanged_by(kind, parts, wanted)


def wanted_digests(kind: Kind, want: Mapping[str, Any]) -> Digests | None:
    """What :func:`unchanged` compares of the desired side ``want``, kept to compare later
    (:func:`unchanged_by`): the digest of the form without the collections
    ``Kind.compare.left_alone``, then each of those it declares (zeros for one it leaves out);
    ``None`` when a part has no encoding (it can then be told only by a diff)."""
    names = _left_alone(kind)
    own = digest(_without(want, names))
    if own is None:
        return None
    out = [own]
    for name in names:
        if name not in want:
            out.append(_NO_DIGEST)
            continue
        part = digest(want[name])
        if part is None or part == _NO_DIGEST:
            return None
        out.append(part)
    return b"".join(out)


def unchanged_by(kind: Kind, parts: Digests, wanted: Digests) -> bool:
    """:func:`unchanged`, the desired side given by its :func:`wanted_digests`."""
    if wanted[:_DIGEST_SIZE] != parts[:_DIGEST_SIZE]:
        return False
    for i in range(1, len(_left_alone(kind)) + 1):
        part = wanted[i * _DIGEST_SIZE:(i + 1) * _DIGEST_SIZE]
        if part != _NO_DIGEST and parts[i * _DIGEST_SIZE:(i + 1) * _DIGEST_SIZE] != part:
            return False
    return True
