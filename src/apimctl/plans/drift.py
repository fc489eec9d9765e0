"""What a drift check found, as data: each difference between git and the area (the plan step
that would fix it, and who changed it last where the platform records it), the ignore rules in
effect, and the plan it was read from.

:mod:`apimctl.drift` makes a :class:`DriftReport`; ``apimctl drift --adopt``
(:mod:`apimctl.adopt`) writes it back into the manifests; :mod:`apimctl.render.drift` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apimctl.plans.model import Duplicate, Plan, Step, Unmanaged

WHAT = {
    "update": "changed outside git",
    "create": "missing from the area (deleted outside git)",
    "delete": "in the area but not in git (added outside git)",
}


@dataclass(frozen=True)
class Attribution:
    """Who changed an object last and when, as far as the platform records it.

    ``source`` names the object the facts come from (``service:Weather`` for an endpoint).
    """

    source: str
    who: str | None = None
    when: str | None = None
    revision: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "who": self.who, "when": self.when,
                "revision": self.revision}


@dataclass(frozen=True)
class Difference:
    """One object that differs between git and the area: the plan step that would fix it."""

    step: Step
    attribution: Attribution | None = None

    @property
    def what(self) -> str:
        return WHAT[self.step.action]


@dataclass(frozen=True)
class IgnoreNote:
    """An ignore rule in effect (``settings.ignore`` or ``--ignore``) and why."""

    target: str
    reason: str


@dataclass
class DriftReport:
    """The result of a drift check; ``plan`` holds the steps that would bring the area back."""

    plan: Plan
    differences: list[Difference] = field(default_factory=list)
    rules: list[IgnoreNote] = field(default_factory=list)
    target: str = ""

    @property
    def drifted(self) -> bool:
        return bool(self.differences) or bool(self.duplicates)

    @property
    def duplicates(self) -> list[Duplicate]:
        """Live copies of declared objects (or of their nested items) sharing one identity."""
        return self.plan.duplicates

    @property
    def unmanaged(self) -> list[Unmanaged]:
        return self.plan.unmanaged

    @property
    def ignored(self) -> list[dict[str, str]]:
        """Differences found but accepted, each ``{target, reason}``."""
        return self.plan.ignored

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON shape of ``apimctl drift --format json``, without field values.

        ``format_version``; ``drift`` (bool); ``target``; ``summary`` (``differences``,
        ``update``, ``create``, ``delete``, ``ignored``, ``unmanaged`` counts);
        ``differences[]`` (``kind``, ``key``, ``address``, ``action`` (the step apply would
        take), ``what``, ``attribution`` (``source``, ``who``, ``when``, ``revision``) or
        null); ``ignored[]`` and ``ignore_rules[]`` (``target``, ``reason``); ``unmanaged[]``;
        ``warnings[]``; ``replay`` (present only with ``--replay LOG``: the calls whose answer
        the drift changed, the object of ``plan --format json``, see docs/plan-format.md). The
        renderer adds each difference's ``changes`` as ``{path, git, live}`` after redacting
        secrets.
        """
        out = {
            "format_version": "1.0",
            "drift": self.drifted,
            "target": self.target,
            "summary": {"differences": len(self.differences),
                        **{a: sum(1 for d in self.differences if d.step.action == a)
                           for a in ("update", "create", "delete")},
                        "ignored": len(self.ignored), "unmanaged": len(self.unmanaged)},
            "differences": [
                {"kind": d.step.kind, "key": d.step.key, "address": d.step.address,
                 "action": d.step.action, "what": d.what,
                 "attribution": d.attribution.to_json() if d.attribution else None}
                for d in self.differences
            ],
            "ignored": list(self.ignored),
            "ignore_rules": [{"target": r.target, "reason": r.reason} for r in self.rules],
            "unmanaged": [u.to_json() for u in self.unmanaged],
            "warnings": list(self.plan.warnings),
        }
        if self.duplicates:  # optional: present only when the area holds some
            out["duplicates"] = [d.to_json() for d in self.duplicates]
        if self.plan.replay is not None:  # optional: present only with --replay
            out["replay"] = self.plan.replay.to_json()
        return out
