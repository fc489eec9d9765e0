"""``apimctl export`` as a function: read the area, return its manifests, write them to a
directory.

The core of ``apimctl.cli.export``. :func:`export` refuses, before the client is opened (no
call, no embedded server created), an output directory that could not be written and an
unknown kind; then it exports the area (:func:`apimctl.export.export_area`) and, given
``out``, writes the files there (:func:`apimctl.export.write_export`). Nothing here prints:
the kinds added because the ones asked for refer to them go to the ``notice`` callback.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from apimctl.errors import ApimctlError
from apimctl.export import (
    Export,
    Layout,
    export_area,
    foreign_manifests,
    resolve_kinds,
    write_export,
)
from apimctl.state.live import Lister

Connect = Callable[[], AbstractAsyncContextManager[Lister]]


def quiet(line: str) -> None:
    """The default ``notice``: tell nobody."""


@dataclass(frozen=True)
class ExportRequest:
    """The inputs of one export: top-level ``kinds`` (manifest keys or kind names; empty for
    all), ``out`` the directory to write into (``None``: the caller prints the single file),
    ``target`` the area's name for the files' headers."""

    kinds: tuple[str, ...] = ()
    with_ids: bool = False
    layout: Layout = "single"
    out: str | None = None
    target: str = ""


@dataclass(frozen=True)
class ExportResult:
    """The export and, when it was written to a directory, the files written there, the
    files of an earlier export removed, and the manifests there this export did not write."""

    export: Export
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()


async def export(request: ExportRequest, connect: Connect, *,
                 notice: Callable[[str], None] = quiet) -> ExportResult:
    """Export the area ``connect()`` opens a client to, as ``request`` asks."""
    if request.out is not None:
        check_destination(request.out)
    _, added = resolve_kinds(request.kinds)
    if added:
        notice(f"Also exporting {', '.join(added)}: the objects asked for refer to them.")
    async with connect() as client:
        exported = await export_area(client, kinds_=list(request.kinds) or None,
                                     with_ids=request.with_ids, layout=request.layout,
                                     source=request.target, notice=notice)
    if request.out is None:
        return ExportResult(exported)
    written, removed = write_export(exported, request.out)
    return ExportResult(exported, tuple(written), tuple(removed),
                        tuple(foreign_manifests(request.out, exported)))


def check_destination(out_dir: str) -> None:
    """Refuse an ``out_dir`` that could not be created or written: its nearest existing
    ancestor must be a writable directory."""
    folder = Path(out_dir).absolute()
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        raise ApimctlError(f"cannot write the export to {out_dir}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ApimctlError(f"cannot write the export to {out_dir}: {existing} is not writable")
