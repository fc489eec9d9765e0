"""What an apply tells while it runs, as data: one :class:`ProgressEvent` per unit started,
done, failed or skipped (and notes), handed to a callback.

:mod:`apimctl.applying.schedule` makes them; the progress display of ``apimctl apply`` and
:mod:`apimctl.render.json` (``--format json``: one JSON line each) show them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

EventKind = Literal["start", "done", "failed", "skipped", "note"]


@dataclass(frozen=True)
class ProgressEvent:
    """One thing that happened during an apply, for a progress display."""

    kind: EventKind
    address: str
    action: str
    message: str = ""
    completed: int = 0
    total: int = 0


ProgressCallback = Callable[[ProgressEvent], None]
