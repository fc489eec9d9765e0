"""Value types shared by the manifest stages: positions, JSON paths, the problem collector and
the loaded :class:`Manifest`.

The loader records a :class:`Position` for every node it reads; merge, overlay, schema and
checks report what they find through :class:`Problems`; the pipeline returns a
:class:`Manifest` to ``plan``, ``apply``, ``drift`` and ``export``. Nothing here reads files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl.errors import Problem

JsonPath = tuple[str | int, ...]
"""A path into a manifest document: keys and list indices (``("services", 0, "name")``)."""

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Position:
    """Where a node was written: the file as named to the user, 1-based line and column.

    ``line == 0`` means the whole file (or directory), not a place inside it.
    """

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else self.file


def format_path(path: Sequence[str | int]) -> str:
    """``("services", 0, "cors", "maxAge")`` -> ``services[0].cors.maxAge``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append('["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]')
    return "".join(out)


@dataclass
class Problems:
    """Collects every problem of a run; stages add to it and never stop at the first."""

    items: list[Problem] = field(default_factory=list)

    def add(self, where: Position | None, path: str, message: str, severity: str = "error") -> None:
        if where is None:
            where = Position("", 0, 0)
        self.items.append(Problem(where.file, where.line, where.col, path, message, severity))

    def error(self, where: Position | None, path: str, message: str) -> None:
        self.add(where, path, message, "error")

    def warning(self, where: Position | None, path: str, message: str) -> None:
        self.add(where, path, message, "warning")

    @property
    def errors(self) -> int:
        return sum(1 for p in self.items if p.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for p in self.items if p.severity == "warning")

    def sorted(self) -> list[Problem]:
        """Sorted by file and line, duplicates (same place, same message) dropped."""
        unique = dict.fromkeys(self.items)
        return sorted(unique, key=lambda p: (p.file, p.line, p.col, p.path, p.message))


@dataclass
class Manifest:
    """The manifests of one run, merged, overlaid, substituted and in canonical form.

    ``doc`` holds the top-level keys the user wrote (``services``, ``packages``, ``roles``,
    ``domains``, ``scheduledMaintenanceEvents``, ``settings``), with shorthands expanded: roles
    as ``{"name": ...}``, domains as ``{"domain": ...}``, plan endpoint names as
    ``{"name": ...}``, and a plan service without ``endpoints`` entitled to every endpoint of
    that service declared in the manifests. Service and plan ``roles`` stay lists of names.
    No defaults are filled in: a key the user did not write is absent.

    ``positions`` maps a JSON path in ``doc`` to where it was written (a mapping entry to its
    key, a list item to the item); use :meth:`where` for the nearest known place of any path.
    ``secret_refs`` maps the path of each secret field written as a reference to its raw text
    (``"${FORECAST_SECRET}"``); ``doc`` holds the resolved value. ``warnings`` are the
    problems of severity ``warning`` found while loading. ``masked_variables`` name the
    environment variables read into fields that are not secret, whose values every output
    masks (:mod:`apimctl.manifests.environment`). ``validated``: made by the pipeline
    (:func:`apimctl.manifests.load_manifests`), which refuses manifests any check finds wrong.
    """

    doc: dict[str, Any]
    positions: Mapping[JsonPath, Position]
    secret_refs: dict[JsonPath, str]
    files: list[str]
    warnings: list[Problem] = field(default_factory=list)
    # the variables read into fields that are not secret and shown masked (not public)
    masked_variables: tuple[str, ...] = ()
    validated: bool = False

    def where(self, path: Sequence[str | int]) -> Position | None:
        """The position of ``path``, or of its nearest ancestor that has one."""
        key = tuple(path)
        while True:
            pos = self.positions.get(key)
            if pos is not None or not key:
                return pos
            key = key[:-1]
