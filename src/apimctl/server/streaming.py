"""Large list bodies sent piece by piece.

A page of 1,000 services with every endpoint field is about 22 MB of JSON. The read path
(:mod:`apimctl.server.reads`) encodes it one document at a time into ``parts`` (whose
concatenation is the body); :func:`parts_response` sends those pieces as they are, grouped
into chunks of about :data:`CHUNK` bytes, and drops each piece once it is handed over, so the
server never holds the page twice (no joined copy of the body). The body is byte for byte the
one a joined ``Response`` would send, with the same ``Content-Length``; ``HEAD`` answers the
headers only, and ``indent=true`` (rare, for people reading) formats the joined body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
from starlette.responses import Response, StreamingResponse

CHUNK = 256 * 1024


def parts_response(parts: list[bytes], status: int, headers: dict[str, str], *, head: bool,
                   indent: bool) -> Response:
    """The HTTP response whose body is ``b"".join(parts)``."""
    if indent:
        content = msgspec.json.format(b"".join(parts), indent=2)
        parts.clear()
        if head:
            return Response(b"", status, {**headers, "content-length": str(len(content))},
                            media_type="application/json")
        return Response(content, status, headers, media_type="application/json")
    headers = {**headers, "content-length": str(sum(len(p) for p in parts))}
    if head:
        return Response(b"", status, headers, media_type="application/json")
    return StreamingResponse(_chunks(parts), status, headers, media_type="application/json")


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    group: list[bytes] = []
    size = 0
    for i, part in enumerate(parts):
        parts[i] = b""  # sent pieces are not kept
        group.append(part)
        size += len(part)
        if size >= CHUNK:
            yield b"".join(group) if len(group) > 1 else group[0]
            group, size = [], 0
    if group:
        yield b"".join(group)
