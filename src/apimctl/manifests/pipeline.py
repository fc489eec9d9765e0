"""The manifest pipeline: read, merge, overlay, substitute, schema, checks, canonical form.

:func:`load_manifests` is what ``plan``, ``apply``, ``drift`` and ``export`` call; ``apimctl
validate`` calls :func:`validate` for the counts it prints. No network, no printing: problems
are returned (or raised as :class:`~apimctl.errors.ManifestError`), every one of them located.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds, workers
from apimctl.errors import ManifestError, Problem
from apimctl.manifests.area_values import with_area_values
from apimctl.manifests.canonical import expand
from apimctl.manifests.checks import Context, run_checks, secret_paths
from apimctl.manifests.documents import LIST_KINDS, Document, Item, MergedPositions, SourceFile
from apimctl.manifests.environment import check_environment
from apimctl.manifests.loader import discover, read_file
from apimctl.manifests.merge import Merged, merge_documents
from apimctl.manifests.model import JsonPath, Manifest, Position, Problems, format_path
from apimctl.manifests.overlay import apply_overlay
from apimctl.manifests.schema import checker
from apimctl.speed import collector_paused

NESTED_OBJECTS: dict[str, tuple[str, ...]] = {
    k.manifest_key: tuple(c.manifest_key for c in kinds.children_of(k)) for k in kinds.TOP_LEVEL if k.children}


@dataclass
class ValidationResult:
    """Everything a validation run found: problems (sorted), files read, objects declared."""

    problems: list[Problem]
    files: list[str]
    objects: int
    manifest: Manifest | None = None
    errors: int = field(init=False)
    warnings: int = field(init=False)

    def __post_init__(self) -> None:
        self.errors = sum(1 for p in self.problems if p.severity == "error")
        self.warnings = len(self.problems) - self.errors

    @property
    def valid(self) -> bool:
        return self.errors == 0


def load_manifests(paths: Sequence[str], overlays: Sequence[str] = (),
                   env: Mapping[str, str] | None = None) -> Manifest:
    """Load and validate the manifests at ``paths`` (files or directories) with ``overlays``.

    ``env`` supplies ``${VAR}`` values (default: the process environment). Raises
    :class:`~apimctl.errors.ManifestError` carrying every problem (warnings included) when
    anything is wrong; otherwise returns the :class:`Manifest`, warnings attached.
    """
    result = validate(paths, overlays, env)
    if result.manifest is None:
        raise ManifestError(result.problems)
    return result.manifest


def validate_paths(paths: Sequence[str], overlays: Sequence[str] = (),
                   env: Mapping[str, str] | None = None) -> list[Problem]:
    """The same work as :func:`load_manifests`; returns all problems and never raises for input."""
    return validate(paths, overlays, env).problems


def validate(paths: Sequence[str], overlays: Sequence[str] = (),
             env: Mapping[str, str] | None = None) -> ValidationResult:
    """Run the whole pipeline; the result carries the manifest when there is no error."""
    # loading makes hundreds of thousands of small, acyclic objects and keeps them: the cyclic
    # garbage collector would only scan them again and again (a third of the time)
    with collector_paused(promote=True):
        return _validate(paths, overlays, os.environ if env is None else env)


def _validate(paths: Sequence[str], overlays: Sequence[str], env: Mapping[str, str]) -> ValidationResult:
    problems = Problems()
    if not paths:
        problems.error(None, "", "no manifest files or directories given")
    files: list[str] = []
    env = with_area_values(overlays, env, problems)  # an overlay's variables.env
    # without overlays the objects are final as read: checked against the schema right there
    base, complete = _read(paths, env, problems, files, check_items=not overlays)
    for directory in overlays:
        overlay, readable = _read([directory], env, problems, files, check_items=False)
        complete = complete and readable
        apply_overlay(base, overlay, problems)
    if overlays:
        for items in base.items.values():
            for item in items:
                checker().check_item(item, problems)
    doc, positions, refs, display = _assemble(base)
    ctx = Context(doc, positions, refs, display, problems)
    masked: tuple[str, ...] = ()
    if refs:  # what the manifests may read from the environment (manifests.environment)
        masked = check_environment(refs, set(secret_paths(doc, ctx.declared)), env, ctx.error)
    if complete and paths:
        if base.count() == 0 and problems.errors == 0:
            problems.error(Position(paths[0], 0, 0), "", "no objects found (services, packages, roles, domains "
                           "or scheduledMaintenanceEvents); refusing an empty configuration")
        run_checks(ctx)
    manifest = None
    if problems.errors == 0:
        secret_refs = {p: refs[p] for p in secret_paths(doc, ctx.declared) if p in refs} if refs else {}
        warnings = [p for p in problems.sorted() if p.severity == "warning"]
        manifest = Manifest(expand(doc), positions, secret_refs, files, warnings, masked, validated=True)
    return ValidationResult(problems.sorted(), files, _count(doc), manifest)


def _read(paths: Sequence[str], env: Mapping[str, str], problems: Problems,
          files: list[str], *, check_items: bool) -> tuple[Merged, bool]:
    """Read and merge the files at ``paths``; ``False`` when some file could not be parsed.
    ``check_items``: check each object against the schema too (:func:`read_files`)."""
    docs: list[Document] = []
    complete = True
    sources = discover(paths, problems)
    files.extend(src.display for src in sources)
    for read in _read_all(sources, env, problems, check_items):
        if read is None:
            complete = False
            continue
        docs.extend(read)
    return merge_documents(docs, problems), complete


# Manifests of more bytes than this are read on two cores: the worker process
# (:mod:`apimctl.workers`) reads runs of the last files, this process the first ones, until
# they meet; RUNS runs in all.
PARALLEL_BYTES = 4 * 1024 * 1024
RUNS = 40


def _read_all(sources: list[SourceFile], env: Mapping[str, str], problems: Problems,
              check_items: bool) -> list[list[Document] | None]:
    """The documents of each file (``None``: it could not be parsed), in order."""
    sizes = [_size(src) for src in sources]
    if sum(sizes) < PARALLEL_BYTES:
        return read_files(sources, env, problems, check_items)
    # absolute paths: the worker's current directory is the one it was started in
    apart = [SourceFile(src.display, os.path.abspath(src.path)) for src in sources]
    plain_env = dict(env)
    shared = workers.FromBothEnds(
        _runs(sizes), lambda start, end: (read_files_apart, (apart[start:end], plain_env, check_items)))
    out: list[list[Document] | None] = []
    for index, src in enumerate(sources):
        found, theirs = shared.get(index)
        if found and theirs is not None:
            read, their_problems = theirs
            problems.items.extend(their_problems)
            out.append(read)
        else:
            out.extend(read_files([src], env, problems, check_items))
    return out


def _runs(sizes: list[int]) -> list[tuple[int, int]]:
    """The runs of files the worker may read: :data:`RUNS` of about the same bytes."""
    return workers.runs_from_end(sizes, sum(sizes) / RUNS)


def _size(src: SourceFile) -> int:
    try:
        return os.path.getsize(src.path)
    except OSError:
        return 0


def read_files(sources: Sequence[SourceFile], env: Mapping[str, str], problems: Problems,
               check_items: bool = False) -> list[list[Document] | None]:
    """Each file read (``None``: it could not be parsed), its documents' top level checked
    and their items' ``${VAR}`` values typed; ``check_items``: the items checked against the
    schema too."""
    out = []
    with collector_paused(promote=True):
        for src in sources:
            read = read_file(src, env, problems)
            for doc in read or ():
                checker().check_document(doc, problems)
                for items in doc.items.values():
                    for item in items:
                        checker().retype(item)
                        if check_items:
                            checker().check_item(item, problems)
            out.append(read)
    return out


def read_files_apart(sources: Sequence[SourceFile], env: Mapping[str, str],
                     check_items: bool) -> list[tuple[list[Document] | None, list[Problem]]]:
    """:func:`read_files` in the worker process: for each file, its documents and the
    problems found in it."""
    out = []
    for src in sources:
        problems = Problems()
        read = read_files([src], env, problems, check_items)
        out.append((read[0], problems.items))
    return out


def _assemble(base: Merged) -> tuple[dict[str, Any], MergedPositions, dict[JsonPath, str], Any]:
    """One document with merged indices, its position and reference tables, and a function
    that shows a merged path with the indices it has in the file its position points into."""
    doc: dict[str, Any] = {}
    other: dict[JsonPath, Position] = {}
    refs: dict[JsonPath, str] = {}
    origins: dict[str, list[Item]] = {}
    for kind in LIST_KINDS:
        if kind not in base.items:
            continue
        items = origins[kind] = base.items[kind]
        doc[kind] = [item.value for item in items]
        other[(kind,)] = base.keys[kind]
        for index, item in enumerate(items):
            for rel, raw in item.refs.items():
                refs[(kind, index, *rel)] = raw
    if base.settings is not None:
        doc["settings"] = base.settings
        other[("settings",)] = base.keys.get("settings", Position("", 0, 0))
        other.update({("settings", *rel): pos for rel, pos in base.settings_positions.items()})
        refs.update({("settings", *rel): raw for rel, raw in base.settings_refs.items()})
    positions = MergedPositions(origins, other)

    def display(path: JsonPath) -> str:
        if len(path) >= 2 and isinstance(path[1], int) and str(path[0]) in origins:
            kind_items = origins[str(path[0])]
            if 0 <= path[1] < len(kind_items):
                return format_path(kind_items[path[1]].display(path[2:]))
        return format_path(path)

    return doc, positions, refs, display


def _count(doc: dict[str, Any]) -> int:
    """Objects declared: top-level objects plus endpoints, error sets and plans."""
    total = 0
    for kind in LIST_KINDS:
        items = doc.get(kind)
        if not isinstance(items, list):
            continue
        total += len(items)
        for item in items:
            for nested in NESTED_OBJECTS.get(kind, ()):
                value = item.get(nested) if isinstance(item, dict) else None
                total += len(value) if isinstance(value, list) else 0
    return total
