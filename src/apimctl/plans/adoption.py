"""What ``apimctl drift --adopt`` did, as data: each live value and where it was written in the
manifests (:data:`WRITTEN`) or why it was not, the edits and the files written, and the drift
report it started from.

:mod:`apimctl.adopt` makes an :class:`Adoption`; :mod:`apimctl.render.adopt` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apimctl.manifests.edits import Edit
from apimctl.plans.drift import DriftReport

WRITTEN = "written"
VARIABLE = "variable"
SECRET = "secret"
UNDECLARED = "not written in the manifests"
OBJECT = "object"
ADDED = "added"
REMOVED = "removed"
WHY = {
    VARIABLE: "comes from a ${VAR}: set it where the variable is defined",
    SECRET: "a secret: never written into git",
    UNDECLARED: "the manifests do not write this field and it has no place to go (with an overlay: "
                "the overlay does not name the object): add it by hand",
    OBJECT: "an object added or deleted in the area that has no place to go in the manifests "
            "(its parent is not declared there, or only in the base while an overlay is given): "
            "edit the manifests by hand",
    ADDED: "",
    REMOVED: "",
}


@dataclass(frozen=True)
class Adopted:
    """One live value and where it went (``status`` :data:`WRITTEN`) or why it did not."""

    kind: str
    key: str
    path: str
    git: Any
    live: Any
    status: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    sensitive: bool = False
    who: str | None = None
    when: str | None = None
    impact: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def address(self) -> str:
        return f"{self.kind}:{self.key}"

    @property
    def why(self) -> str:
        return self.reason or WHY.get(self.status, "")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.file else ""

    def to_json(self) -> dict[str, Any]:
        hidden = "(sensitive)"
        return {"kind": self.kind, "key": self.key, "address": self.address, "path": self.path,
                "git": hidden if self.sensitive else self.git,
                "live": hidden if self.sensitive else self.live,
                "status": self.status, "reason": self.why or None,
                "file": self.file, "line": self.line, "column": self.column,
                "who": self.who, "when": self.when, "impact": list(self.impact)}


@dataclass
class Adoption:
    """What ``drift --adopt`` did: each value (:class:`Adopted`), the files, the drift report."""

    report: DriftReport
    values: list[Adopted] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    written: list[str] = field(default_factory=list)

    @property
    def adopted(self) -> list[Adopted]:
        return [v for v in self.values if v.status in (WRITTEN, ADDED, REMOVED)]

    @property
    def left(self) -> list[Adopted]:
        """What a person still has to take care of."""
        return [v for v in self.values if v.status != WRITTEN]

    def to_json(self) -> dict[str, Any]:
        return {"format_version": "1.0", "target": self.report.target,
                "summary": {"adopted": len(self.adopted), "left": len(self.left),
                            "files": len(self.written)},
                "files": list(self.written), "changes": [v.to_json() for v in self.values]}
