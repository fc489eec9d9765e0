"""Live documents kept as bytes: msgpack, deflated against a preset dictionary.

:class:`apimctl.state.live.LiveObject` keeps its document packed (an endpoint of 5 KB as
Python objects in about 50 bytes) and unpacks it on each access.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE = msgspec.msgpack.Decoder().decode


class Packer:
    """Documents kept as bytes: msgpack, deflated against a preset dictionary when given one
    (the reader gives each kind the first document of that kind it met: an endpoint of 5 KB
    as Python objects packs into about 50 bytes). A document msgpack cannot encode is kept as
    it is."""

    __slots__ = ("zdict",)

    def __init__(self, zdict: bytes | None = None) -> None:
        self.zdict = zdict

    def pack(self, doc: dict[str, Any], data: bytes | None = None) -> bytes | dict[str, Any]:
        """``doc`` packed (``data``: its msgpack encoding, when already made)."""
        if data is None:
            data = encoded(doc)
            if data is None:
                return doc
        if self.zdict is None:
            return data
        deflate = zlib.compressobj(1, zdict=self.zdict)
        return deflate.compress(data) + deflate.flush()

    def unpack(self, packed: bytes | dict[str, Any]) -> dict[str, Any]:
        if isinstance(packed, dict):
            return packed
        if self.zdict is not None:
            packed = zlib.decompressobj(zdict=self.zdict).decompress(packed)
        doc: dict[str, Any] = _DECODE(packed)
        return doc


def encoded(doc: Any) -> bytes | None:
    """The msgpack encoding of ``doc``, ``None`` when it has none (an integer too large)."""
    try:
        return _ENCODE(doc)
    except (msgspec.EncodeError, TypeError, OverflowError):
        return None


PLAIN = Packer()  # documents kept as their plain encoding
