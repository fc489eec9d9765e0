"""Live documents kept as bytes: msgpack, deflated against a preset dictionary.

:class:`apimctl.state.objects.LiveObject` keeps its document packed (an endpoint of 5 KB as
Python objects in about 50 bytes) and unpacks it on each access.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

import msgspec

_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE = msgspec.msgpack.Decoder().decode


# A 4 KB window and a small hash table: each document starts from a copy of a compressor
# primed with the dictionary, which costs less to copy than a full one costs to set up (4 us
# instead of 6 per endpoint), and packs as small.
_WBITS, _MEM_LEVEL = 12, 4


class Packer:
    """Documents kept as bytes: msgpack, deflated against a preset dictionary when given one
    (the reader gives each kind the first document of that kind it met: an endpoint of 5 KB
    as Python objects packs into about 50 bytes). A document msgpack cannot encode is kept as
    it is."""

    __slots__ = ("_primed", "zdict")

    def __init__(self, zdict: bytes | None = None) -> None:
        self.zdict = zdict
        self._primed: zlib._Compress | None = None  # a compressor that has read the dictionary

    def pack(self, doc: dict[str, Any]) -> bytes | dict[str, Any]:
        data = encoded(doc)
        return doc if data is None else self._deflated(data)

    def pack_digested(self, doc: dict[str, Any]) -> tuple[bytes | dict[str, Any], bytes | None]:
        """:meth:`pack`, and the digest of the document's encoding (``None`` when it has
        none): equal digests mean equal documents, key order included."""
        data = encoded(doc)
        if data is None:
            return doc, None
        return self._deflated(data), hashlib.blake2b(data, digest_size=16).digest()

    def _deflated(self, data: bytes) -> bytes:
        """``data`` deflated against the preset dictionary (as it is, without one)."""
        if self.zdict is None:
            return data
        if self._primed is None:
            self._primed = zlib.compressobj(1, zlib.DEFLATED, _WBITS, _MEM_LEVEL, zdict=self.zdict)
        deflate = self._primed.copy()
        packed: bytes = deflate.compress(data) + deflate.flush()
        return packed

    def unpack(self, packed: bytes | dict[str, Any]) -> dict[str, Any]:
        if isinstance(packed, dict):
            return packed
        if self.zdict is not None:
            packed = zlib.decompressobj(_WBITS, zdict=self.zdict).decompress(packed)
        doc: dict[str, Any] = _DECODE(packed)
        return doc


def encoded(doc: Any) -> bytes | None:
    """The msgpack encoding of ``doc``, ``None`` when it has none (an integer too large)."""
    try:
        return _ENCODE(doc)
    except (msgspec.EncodeError, TypeError, OverflowError):
        return None


PLAIN = Packer()  # documents kept as their plain encoding
