"""Which children of a nested write the API refused, and their names in its messages.

A nested write the API refuses (400) because of some children only is sent again without
them (:mod:`apimctl.applying.writes`); messages name the children, not their positions.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from apimctl import kinds
from apimctl.errors import ApiError, Invalid

# a child's position in a nested write's property path: `endpoints[1].x` (the manifest key of
# a child kind), or `[1].x` when the body is a bare array (PUT /services/{id}/endpoints)
CHILD_KEYS = sorted({k.manifest_key for k in kinds.KINDS if k.parent is not None})
POSITION = re.compile(rf"(\b(?:{'|'.join(map(re.escape, CHILD_KEYS))})|(?<![\w\]]))\[(\d+)\]")


def blamed(exc: Invalid, collection: str, count: int) -> dict[int, str] | None:
    """The positions of the children of ``collection`` that every validation item of ``exc``
    blames (``endpoints[2].maxAge``), each with its reason; ``None`` when an item blames
    anything else (the parent itself, another collection)."""
    head = ": ".join(exc.message.split(": ")[:2])  # "POST /services: 400 Bad Request"
    found: dict[int, list[str]] = {}
    for item in exc.items:
        match = re.fullmatch(rf"{collection}\[(\d+)\](?:\.(.*))?", str(item.get("property") or ""))
        if match is None or int(match.group(1)) >= count:
            return None
        found.setdefault(int(match.group(1)), []).append(
            f"{match.group(2)}: {item.get('message', '')}" if match.group(2) else str(item.get("message", "")))
    if not found:
        return None
    return {i: f"{head}: " + "; ".join(msgs) for i, msgs in found.items()}


def named_positions(exc: ApiError, names: Mapping[str, Sequence[str]], bare: str = "") -> ApiError:
    """``exc`` with the positions of a nested write's children (``endpoints[1].maxAge``) shown
    as their names (``endpoints[Forecast].maxAge``), so that a failure names the object.
    ``names[""]`` are the entries of a bare array body, called ``bare`` in the message (the
    manifest key of their kind: ``endpoints``)."""

    def name(match: re.Match[str]) -> str:
        listed, at = names.get(match.group(1), ()), int(match.group(2))
        label = match.group(1) or bare
        return f"{label}[{listed[at]}]" if at < len(listed) else match.group(0)

    message = POSITION.sub(name, exc.message)
    return exc if message == exc.message else dataclasses.replace(exc, message=message)
