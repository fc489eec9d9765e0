"""Where an export goes: its documents laid out in files (``single``: one ``apimctl.yaml``;
``per-service``: a file per service plus one per other kind that has objects), and the files
written into a directory.

All files sit in one directory, since the loader reads a directory's files but not its
subdirectories. :func:`layout_files` is called by :func:`apimctl.export.area.export_state`;
:func:`write_export` and :func:`foreign_manifests` by ``apimctl export --out``
(:mod:`apimctl.cli.export`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.export.dump import MARKER, export_file
from apimctl.export.model import Export, ExportFile
from apimctl.export.naming import object_file_names
from apimctl.kinds import Kind

Layout = Literal["single", "per-service"]
LAYOUTS: tuple[Layout, ...] = ("single", "per-service")
SINGLE_FILE = "apimctl.yaml"


def layout_files(docs: Mapping[str, list[Any]], layout: Layout, source: str = "") -> list[ExportFile]:
    """The export's files in the chosen layout (``per-service``: each kind's objects in the
    kind's file, ``Kind.file_name``, or one file per object, ``ROLES.file_per_object``)."""
    if layout == "single":
        return [export_file(SINGLE_FILE, docs, source)]
    files: list[ExportFile] = []
    for kind in kinds.TOP_LEVEL:
        key = kind.manifest_key
        if key not in docs:
            continue
        if kind is kinds.ROLES.file_per_object:
            files.extend(_object_files(kind, docs[key], source))
        else:
            files.append(export_file(kind.file_name, {key: docs[key]}, source))
    return sorted(files, key=lambda f: f.name)


def _object_files(kind: Kind, entries: list[Any], source: str) -> list[ExportFile]:
    """One file per object (see :func:`apimctl.export.naming.object_file_names`)."""
    # names are escaped (``$${``) in the documents; the file name follows the real name
    real = {_unescape(str(e[kind.identity])): e for e in entries}
    return [export_file(file_name, {kind.manifest_key: [real[name]]}, source)
            for name, file_name in object_file_names(kind.name, real).items()]


def _unescape(text: str) -> str:
    return text.replace("$${", "${")


def write_export(export: Export, out_dir: str) -> tuple[list[str], list[str]]:
    """Write the files into ``out_dir`` (created if needed).

    Files an earlier export wrote there (they start with the modeline and :data:`MARKER`)
    that this export no longer produces are removed, so a deleted service does not linger;
    other files are never touched. Returns (written, removed) paths.
    """
    folder = Path(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        removed = _remove_stale(folder, {f.name for f in export.files})
        written = [_write(folder, item) for item in export.files]
    except OSError as exc:
        raise ApimctlError(f"cannot write the export to {out_dir}: {exc.strerror or exc}") from None
    return written, removed


def _remove_stale(folder: Path, produced: set[str]) -> list[str]:
    """Remove the files an earlier export wrote into ``folder`` that are not ``produced``."""
    removed = []
    for old in sorted(folder.iterdir()):
        if old.suffix in (".yaml", ".yml") and old.name not in produced and _ours(old):
            old.unlink()
            removed.append(str(old))
    return removed


def _write(folder: Path, item: ExportFile) -> str:
    target = folder / item.name
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(item.text, encoding="utf-8")
    partial.replace(target)  # a failed write never leaves half a manifest behind
    return str(target)


def foreign_manifests(out_dir: str, export: Export) -> list[str]:
    """Manifest files in ``out_dir`` that this export did not write (they would be merged
    with it when the directory is loaded)."""
    folder = Path(out_dir)
    if not folder.is_dir():
        return []
    produced = {f.name for f in export.files}
    return sorted(str(p) for p in folder.iterdir()
                  if p.suffix in (".yaml", ".yml") and p.name not in produced and not _ours(p))


def _ours(path: Path) -> bool:
    """Whether an earlier export wrote ``path``: its second line is :data:`MARKER`."""
    try:
        with path.open(encoding="utf-8") as handle:
            head = [handle.readline() for _ in range(2)]
    except (OSError, UnicodeDecodeError):
        return False
    return head[1].rstrip("\n") == MARKER
