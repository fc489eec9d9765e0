"""What ``apimctl diff`` found between two sides, as data: each object not identical on both
(each differing field with both values, :data:`DEFAULT` where a side leaves the field at the
default), the number identical, and how each side is named.

:mod:`apimctl.areas.compare` makes a :class:`Comparison`; :mod:`apimctl.render.areas` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from apimctl.plans.model import address

Status = Literal["different", "source-only", "target-only"]
STATUSES: tuple[Status, ...] = ("different", "source-only", "target-only")


class _Default:
    """A field a side does not write: it holds the default there."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()


@dataclass(frozen=True)
class FieldDifference:
    """One field that differs: its path in the object, each side's value (:data:`DEFAULT`
    when the side leaves it at the default) and whether it is a secret."""

    path: str
    source: Any
    target: Any
    sensitive: bool = False


@dataclass(frozen=True)
class ObjectDifference:
    """One object that is not identical on both sides."""

    kind: str
    key: str
    status: Status
    fields: tuple[FieldDifference, ...] = ()

    @property
    def address(self) -> str:
        return address(self.kind, self.key)


@dataclass(frozen=True)
class Side:
    """How a side is named: its name, what it is (a profile, URL or paths), its dialect."""

    name: str
    label: str
    dialect: str = "spec"


@dataclass
class Comparison:
    """The two sides, the objects identical on both, and the others."""

    source: Side
    target: Side
    identical: int = 0
    differences: list[ObjectDifference] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(1 for d in self.differences if d.status == status)

    @property
    def differs(self) -> bool:
        return bool(self.differences)
