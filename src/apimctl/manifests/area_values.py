"""The values an overlay folder gives the base's ``${VAR}`` references: ``variables.env``.

``apimctl export --area ... --into DIR`` (:mod:`apimctl.areas`) turns values that differ
between areas by a rule (a host, a name prefix) into variables of the common base, and writes
each area's values into ``DIR/overlays/NAME/variables.env``. The pipeline reads that file of
each ``--overlay DIR`` before reading any manifest (:func:`with_area_values`), so the base's
``${API_HOST}`` means the area's host.

The format is the one of ``.env`` files, restricted: ``NAME=value`` lines, ``#`` comments and
blank lines; a value in double quotes is a JSON string (so it may keep spaces at its ends),
any other value is the rest of the line. The process environment wins over the file (as with
docker compose's ``.env``); a later overlay's file wins over an earlier one's. The values come
from the repository: they are not secrets, and a variable the deny-list reserves for secret
fields (:data:`~apimctl.manifests.environment.DENIED`) may not be set here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from apimctl.manifests.environment import denied
from apimctl.manifests.model import Position, Problems

FILE_NAME = "variables.env"
_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


class AreaEnv(Mapping[str, str]):
    """The process environment with the overlay folders' values under it; ``repository``:
    the names whose value came from a file (not from the environment)."""

    def __init__(self, env: Mapping[str, str], values: Mapping[str, str]) -> None:
        self.env = env
        self.given = dict(values)
        self.repository = frozenset(name for name in self.given if name not in env)

    def __getitem__(self, name: str) -> str:
        if name in self.env:
            return self.env[name]
        return self.given[name]

    def __contains__(self, name: object) -> bool:
        return name in self.env or name in self.given

    def __iter__(self) -> Iterator[str]:
        yield from self.env
        yield from (name for name in self.given if name not in self.env)

    def __len__(self) -> int:
        return len(self.env) + len(self.repository)


def with_area_values(overlays: Sequence[str], env: Mapping[str, str], problems: Problems) -> Mapping[str, str]:
    """``env`` with the values of each overlay's ``variables.env`` (``env`` itself when none
    has one); a malformed line is a problem at its place."""
    values: dict[str, str] = {}
    for folder in overlays:
        path = Path(folder) / FILE_NAME
        if path.is_file():
            values.update(read_values(path, problems))
    return AreaEnv(env, values) if values else env


def read_values(path: Path, problems: Problems) -> dict[str, str]:
    """The ``NAME=value`` lines of one file."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.error(Position(str(path), 0, 0), "", f"cannot read {FILE_NAME}: {exc}")
        return out
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = Position(str(path), number, 1)
        found = _LINE.match(stripped)
        if found is None:
            problems.error(where, "", "expected NAME=value (a comment starts with #)")
            continue
        name, raw = found.group(1), found.group(2)
        if denied(name):
            problems.error(where, "", f"{name} is reserved for secret fields: set it in the environment, "
                           "never in a file of the repository")
            continue
        value = _value(raw)
        if value is None:
            problems.error(where, "", f"{name}: a quoted value must be a JSON string")
            continue
        out[name] = value
    return out


def _value(raw: str) -> str | None:
    if not raw.startswith('"'):
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def quoted(value: str) -> str:
    """``value`` as :func:`read_values` reads it back."""
    return json.dumps(value, ensure_ascii=False)
