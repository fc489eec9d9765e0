"""``apimctl export --area NAME=TARGET ... --into DIR``: several areas into one repository.

Everything that can be refused is refused before the first call (an area named twice, the
``--rewrite`` file, a folder that cannot be written) or before the first file is written (an
unreachable area, a rule that would change a secret or merge two objects): nothing is then
written. Each area is exported in its own dialect, so base plus its overlay plans to zero
changes against it whatever the dialect of the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from apimctl.areas import repository
from apimctl.areas.reading import AreaSource, all_documents, check_names, read_areas
from apimctl.areas.rules import load_rules
from apimctl.areas.split import Split, split
from apimctl.export.command import check_destination


@dataclass(frozen=True)
class AreasRequest:
    """The areas (in order: ties go to the first), where to write, the rewrite file."""

    areas: tuple[AreaSource, ...]
    into: str
    rewrite: str | None = None


@dataclass
class AreasResult:
    """What was written, and per area the objects its overlay changes, adds and deletes."""

    written: list[str] = field(default_factory=list)
    split: Split = field(default_factory=Split)
    secrets: list[str] = field(default_factory=list)
    dialects: dict[str, str] = field(default_factory=dict)


async def export_areas(request: AreasRequest) -> AreasResult:
    """Read every area, split them into base and overlays, write the repository."""
    names = [a.name for a in request.areas]
    check_names(names)
    rules = load_rules(request.rewrite, names)
    check_destination(request.into)
    reads = await read_areas(request.areas)
    docs = {read.name: exported for read, exported in zip(reads, all_documents(reads), strict=True)}
    secrets = [name for read in reads for name in read.variables]
    rules.rewrite(list(docs.items()))
    parts = split(docs)
    planned = repository.files(parts.base, parts.overlays, {n: rules.values_of(n) for n in names},
                               sorted(set(secrets)), {a.name: a.target for a in request.areas})
    written = repository.write(request.into, planned)
    return AreasResult(written, parts, sorted(set(secrets)), {r.name: r.dialect.name for r in reads})


def counts(docs: dict[str, list[object]]) -> Sequence[tuple[str, int]]:
    """The top-level objects per manifest key (for the summary)."""
    return [(key, len(items)) for key, items in docs.items()]
