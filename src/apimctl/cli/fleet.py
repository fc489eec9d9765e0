"""The areas a repository manages, as ``apimctl.toml`` names them, and which of them a
change touches: what ``apimctl matrix`` prints and ``apimctl show --merge`` reads.

An area is a table ``[areas.NAME]`` of the repository's ``apimctl.toml`` (the one
:func:`apimctl.cli.profiles.config_paths` finds first, or the file given)::

    [areas.dev]
    profile = "dev"                        # a [profiles.NAME] of the same file
    paths = ["apimctl/base"]               # the manifests (files or directories)
    overlays = ["apimctl/overlays/dev"]    # optional: each is an --overlay DIR
    order = 1                              # optional: apply's order (lowest first)
    max_deletes = 0                        # optional: gates apply holds (and the review shows)
    max_affected_keys = 100

Paths are relative to the file's directory, as ``git diff --name-only`` prints them when
the file is at the repository's root. Areas come in ``order``, then as the file lists them.
Every problem of the file is reported at once, each as ``FILE:LINE: what``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from apimctl.cli.profiles import REPO_FILE, ProfileError, config_paths

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""An area's name: it names its plan file, its CI job and its artifact."""
KEYS = ("profile", "paths", "overlays", "order", "max_deletes", "max_affected_keys")
_HEADER = re.compile(r"""^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$""")
_AREA_HEADER = re.compile(r"""^areas\s*\.\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))$""")


class AreasError(ProfileError):
    """An ``[areas]`` declaration that cannot be used (exit 1)."""


@dataclass(frozen=True)
class Area:
    """One area of the repository: how to reach it and which manifests are its."""

    name: str
    profile: str
    paths: tuple[str, ...]
    overlays: tuple[str, ...] = ()
    order: float = math.inf
    max_deletes: int | None = None
    max_affected_keys: int | None = None

    def args(self) -> list[str]:
        """The manifest arguments of ``plan`` for this area: PATH... and ``--overlay DIR``."""
        out = list(self.paths)
        for overlay in self.overlays:
            out += ["--overlay", overlay]
        return out

    def gates(self) -> list[str]:
        """The refusals apply holds for this area (``--max-deletes N``, ...)."""
        out: list[str] = []
        if self.max_deletes is not None:
            out += ["--max-deletes", str(self.max_deletes)]
        if self.max_affected_keys is not None:
            out += ["--max-affected-keys", str(self.max_affected_keys)]
        return out

    def owns(self, changed: str) -> bool:
        """Whether the changed file ``changed`` lies under the area's paths or overlays."""
        file = _normal(changed)
        return any(file == root or root in file.parents
                   for root in map(_normal, (*self.paths, *self.overlays)))

    def matrix_entry(self) -> dict[str, Any]:
        return {"area": self.name, "profile": self.profile, "args": self.args(),
                "gates": self.gates()}


@dataclass(frozen=True)
class Fleet:
    """The areas of one config file, in apply's order."""

    path: Path
    areas: tuple[Area, ...] = field(default=())

    def named(self, name: str) -> Area | None:
        return next((a for a in self.areas if a.name == name), None)

    def touched(self, changed: Iterable[str]) -> list[Area]:
        """The areas a change of the files ``changed`` touches, in order: all of them when the
        config file itself changed."""
        files = [c for c in (line.strip() for line in changed) if c]
        if any(_normal(f) == _normal(self.path.name) for f in files):
            return list(self.areas)
        return [a for a in self.areas if any(a.owns(f) for f in files)]

    def matrix(self, areas: Sequence[Area]) -> dict[str, list[dict[str, Any]]]:
        """GitHub's ``strategy.matrix`` of ``areas``: ``{"include": [{"area": ...}, ...]}``."""
        return {"include": [a.matrix_entry() for a in areas]}


def find_fleet(config: str | None = None, cwd: Path | None = None) -> Fleet:
    """The areas of ``config`` or of the repository's ``apimctl.toml``; an error when there is
    no such file or it declares no area."""
    fleet = declared_fleet(config, cwd)
    if fleet is None:
        raise AreasError(f"no {REPO_FILE} here or in a parent folder up to the repository's "
                         "root: declare the areas there as [areas.NAME] tables (or give --config)")
    if not fleet.areas:
        raise AreasError(f"{fleet.path}: declares no area: add [areas.NAME] tables with profile "
                         "and paths")
    return fleet


def declared_fleet(config: str | None = None, cwd: Path | None = None) -> Fleet | None:
    """The areas of ``config`` or of the repository's ``apimctl.toml`` (none declared: no
    areas); ``None`` when no file is given and the repository has none."""
    if config is not None:
        return read_fleet(Path(config))
    found = [p for p in config_paths(cwd) if p.name == REPO_FILE]
    return read_fleet(found[0]) if found else None


def read_fleet(path: Path) -> Fleet:
    """The ``[areas.NAME]`` tables of ``path``, checked: every problem named with its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AreasError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise AreasError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    lines = _Lines(path, text)
    problems = lines.duplicate_areas()
    if problems:
        raise AreasError("\n".join(problems))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AreasError(f"{path}: not valid TOML: {exc}") from None
    tables = data.get("areas", {})
    if not isinstance(tables, dict):
        raise AreasError(f"{lines.where('areas')}: [areas] must hold [areas.NAME] tables")
    profiles = data.get("profiles", {})
    known = set(profiles) if isinstance(profiles, dict) else set()
    areas: list[Area] = []
    for name, table in tables.items():
        area = _area(name, table, known, lines, problems)
        if area is not None:
            areas.append(area)
    if problems:
        raise AreasError("\n".join(sorted(problems, key=lines.line_of)))
    ranked = sorted(enumerate(areas), key=lambda pair: (pair[1].order, pair[0]))
    return Fleet(path, tuple(a for _, a in ranked))


def _area(name: str, table: Any, profiles: set[str], lines: _Lines,
          problems: list[str]) -> Area | None:
    where = lines.area(name)
    if not NAME.fullmatch(name):
        problems.append(f"{where}: area name {name!r}: letters, digits, '-', '_' and '.' only "
                        "(it names files and CI jobs)")
    if not isinstance(table, dict):
        problems.append(f"{where}: [areas.{name}] must be a table (profile, paths, ...)")
        return None
    before = len(problems)
    values: dict[str, Any] = {}
    for raw, value in table.items():
        key = raw.replace("-", "_")
        at = lines.area(name, raw)
        if key not in KEYS:
            problems.append(f"{at}: [areas.{name}]: unknown key {raw!r} (known: {', '.join(KEYS)})")
            continue
        check = _CHECKS[key](value)
        if check:
            problems.append(f"{at}: [areas.{name}]: {raw} {check}")
            continue
        values[key] = tuple(value) if isinstance(value, list) else value
    for key in ("profile", "paths"):
        if key not in table:
            problems.append(f"{where}: [areas.{name}]: missing {key}")
    if values.get("paths") == ():
        problems.append(f"{lines.area(name, 'paths')}: [areas.{name}]: paths must name at least one path")
    profile = values.get("profile")
    if isinstance(profile, str) and profile not in profiles:
        defined = f" (defined: {', '.join(sorted(profiles))})" if profiles else " (it defines none)"
        problems.append(f"{lines.area(name, 'profile')}: [areas.{name}]: profile {profile!r} is not "
                        f"a [profiles.NAME] of {lines.path.name}{defined}")
    if len(problems) > before:
        return None
    return Area(name=name, **values)


def _string(value: Any) -> str:
    return "" if isinstance(value, str) and value.strip() else "must be a non-empty string"


def _paths(value: Any) -> str:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return "must be a list of paths (strings)"
    bad = next((v for v in value if PurePosixPath(v).is_absolute() or ".." in PurePosixPath(v).parts), None)
    return f"must be paths inside the repository, not {bad!r}" if bad is not None else ""


def _count(value: Any) -> str:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return "" if ok else "must be a whole number, 0 or more"


def _order(value: Any) -> str:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return "" if ok else "must be a number"


_CHECKS = {"profile": _string, "paths": _paths, "overlays": _paths, "order": _order,
           "max_deletes": _count, "max_affected_keys": _count}


def _normal(path: str) -> PurePosixPath:
    """A repository path compared as ``git`` prints it: ``/`` separators, no ``./``."""
    return PurePosixPath(*PurePosixPath(path.strip().replace("\\", "/")).parts)


class _Lines:
    """Where a table or key is in the file's text, for messages (``FILE:LINE``)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.headers: list[tuple[int, str]] = []  # (line number, table name)
        self.text = text.splitlines()
        for number, line in enumerate(self.text, 1):
            match = _HEADER.match(line)
            if match:
                self.headers.append((number, match.group(1)))

    def _area_name(self, header: str) -> str | None:
        match = _AREA_HEADER.match(header)
        return next((g for g in match.groups() if g is not None), None) if match else None

    def duplicate_areas(self) -> list[str]:
        first: dict[str, int] = {}
        problems = []
        for number, header in self.headers:
            name = self._area_name(header)
            if name is None:
                continue
            if name in first:
                problems.append(f"{self.path}:{number}: area {name!r} is declared twice "
                                f"(first at line {first[name]})")
            first.setdefault(name, number)
        return problems

    def line_of(self, problem: str) -> int:
        """The line number a problem (``FILE:LINE: what``) names, to list them in file order."""
        number = problem.removeprefix(f"{self.path}:").partition(":")[0]
        return int(number) if number.isdigit() else 0

    def where(self, table: str) -> str:
        number = next((n for n, h in self.headers if h == table), 1)
        return f"{self.path}:{number}"

    def area(self, name: str, key: str | None = None) -> str:
        """``FILE:LINE`` of ``[areas.NAME]`` or of ``key`` inside it."""
        start = next((n for n, h in self.headers if self._area_name(h) == name), 0)
        if not start:
            return f"{self.path}:{self._key_line(0, len(self.text), 'areas') or 1}"
        end = next((n for n, _ in self.headers if n > start), len(self.text) + 1)
        return f"{self.path}:{(key and self._key_line(start, end - 1, key)) or start}"

    def _key_line(self, start: int, end: int, key: str) -> int:
        pattern = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
        return next((n for n in range(start + 1, end + 1) if pattern.match(self.text[n - 1])), 0)
