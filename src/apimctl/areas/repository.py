"""The repository of several areas: ``DIR/base/apimctl.yaml``, and per area
``DIR/overlays/NAME/overlay.yaml`` (what differs there) and ``DIR/overlays/NAME/variables.env``
(the values of the base's rewrite variables there).

``apimctl plan DIR/base --overlay DIR/overlays/NAME`` reads an area's configuration back.
Every file is made before the first is written, and each is written beside its place and
then moved there, so a failed export leaves the folder as it was and no file half-written.
Files this writer wrote earlier that the export no longer produces (an area not exported
again) are left alone: removing an area's folder is the user's decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apimctl.errors import ApimctlError
from apimctl.export.dump import MARKER, pure_dump, schema_url
from apimctl.export.emit import document
from apimctl.manifests.area_values import FILE_NAME, quoted

BASE_DIR, OVERLAYS_DIR = "base", "overlays"
BASE_FILE, OVERLAY_FILE = "apimctl.yaml", "overlay.yaml"


@dataclass(frozen=True)
class Planned:
    """A file to write: its path relative to the repository and its text."""

    path: str
    text: str


def files(base: Mapping[str, list[Any]], overlays: Mapping[str, Mapping[str, list[Any]]],
          values: Mapping[str, Mapping[str, str]], secrets: Sequence[str], labels: Mapping[str, str]) -> list[Planned]:
    """The files of the repository: the base, and per area its overlay and its values."""
    names = ", ".join(overlays)
    out = [Planned(f"{BASE_DIR}/{BASE_FILE}",
                   _header(f"What the areas {names} share.", secrets) + _yaml(base))]
    for name, docs in overlays.items():
        folder = f"{OVERLAYS_DIR}/{name}"
        head = _header(f"What differs in area {name} ({labels.get(name, name)}); "
                       f"plan it with: apimctl plan {BASE_DIR} --overlay {folder}", ())
        out.append(Planned(f"{folder}/{OVERLAY_FILE}", head + (_yaml(docs) if docs else "{}\n")))
        lines = [f"# The values of the base's variables in area {name}."]
        lines += [f"{variable}={quoted(value)}" for variable, value in values.get(name, {}).items()]
        out.append(Planned(f"{folder}/{FILE_NAME}", "\n".join(lines) + "\n"))
    return out


def _header(what: str, secrets: Sequence[str]) -> str:
    lines = [f"# yaml-language-server: $schema={schema_url()}", MARKER, f"# {what}"]
    if secrets:
        lines.append("# Secrets are environment variable references; set these before plan/apply:")
        lines.extend(f"#   {name}" for name in secrets)
    return "\n".join(lines) + "\n"


def _yaml(doc: Mapping[str, Any]) -> str:
    return document(dict(doc), pure_dump)


def write(folder: str, planned: Sequence[Planned]) -> list[str]:
    """Write ``planned`` under ``folder``; the paths written."""
    root = Path(folder)
    written: list[str] = []
    try:
        for item in planned:
            target = root / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.partial")
            partial.write_text(item.text, encoding="utf-8")
            written.append(str(target))
        for item in planned:
            target = root / item.path
            target.with_name(f".{target.name}.partial").replace(target)
    except OSError as exc:
        for item in planned:
            (root / item.path).with_name(f".{Path(item.path).name}.partial").unlink(missing_ok=True)
        raise ApimctlError(f"cannot write into {folder}: {exc.strerror or exc}") from None
    return written
