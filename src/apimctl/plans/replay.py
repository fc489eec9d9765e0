"""What replaying a log found (``--replay LOG``): the changed answers grouped by plan change,
the calls counted apart, the bad records located. Plain data: :mod:`apimctl.replay.compare`
fills it, the plan's ``replay`` carries it, :mod:`apimctl.render.text` shows it (the renderers
never see the traffic manager's steps). Keys are never kept here: a key is shown by its last
four characters at most.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXAMPLES = 3
BAD_SHOWN = 10
OTHER = "(no single change)"


def shown_key(key: str) -> str:
    """A key as a report may show it: its last four characters, and only of a long key."""
    return f"…{key[-4:]}" if len(key) >= 12 else "(key)"


@dataclass
class Group:
    """The calls one plan change turns from one answer into another."""

    change: str  # the plan step's address (or OTHER)
    before: str  # "200", "403 ERR_403_NOT_AUTHORIZED"
    after: str
    step: str  # the step that now decides differently
    calls: int = 0
    keys: set[str] = field(default_factory=set, repr=False)
    applications: set[str] = field(default_factory=set, repr=False)
    examples: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"change": self.change, "before": self.before, "after": self.after, "step": self.step,
                "calls": self.calls, "keys": len(self.keys), "applications": len(self.applications),
                "examples": self.examples}


@dataclass
class Replay:
    """What replaying a log found."""

    calls: int = 0  # the records decided
    changed: int = 0
    unknown_keys: int = 0
    unmatched: int = 0
    bad: int = 0
    bad_shown: list[str] = field(default_factory=list)  # "file:line: reason"
    groups: dict[tuple[str, str, str, str], Group] = field(default_factory=dict)

    def ordered(self) -> list[Group]:
        return sorted(self.groups.values(), key=lambda g: (-g.calls, g.change, g.before, g.after))

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "changed": self.changed, "unknownKeys": self.unknown_keys,
                "unmatched": self.unmatched, "badRecords": self.bad, "badShown": self.bad_shown,
                "groups": [g.to_json() for g in self.ordered()]}

