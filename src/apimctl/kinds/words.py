"""Names listed in words, as the kinds tell what goes with a deleted object
(:meth:`~apimctl.kinds.protocol.KindOps.goes_with`): ``plan Free``, ``plans Free, Pro``,
``2 endpoints``; at most :data:`SHOWN` names, the rest counted."""

from __future__ import annotations

from collections.abc import Sequence

from apimctl.kinds.protocol import Held, Holdings

SHOWN = 10


def listed(names: Sequence[str]) -> str:
    """``Free, Pro``; past :data:`SHOWN` names, ``... and 3 more``."""
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def named(noun: str, names: Sequence[str]) -> str:
    """``plan Free``, ``plans Free, Pro``."""
    return f"{noun if len(names) == 1 else noun + 's'} {listed(names)}"


def counted(count: int, noun: str) -> str:
    """``1 endpoint``, ``2 endpoints``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def entitlements_in(holders: Sequence[Held], area: Holdings) -> list[str]:
    """``its entitlements in plan Pro``: what goes with a deleted object that the ``holders``
    entitle their keys to call (a service, an endpoint)."""
    if not holders:
        return []
    return [f"its entitlements in {named(area.kind(holders[0].kind).label, [h.name for h in holders])}"]
