"""Writing an imported service: a new manifest file, or an update in place of the file that
already holds the service (``apimctl import openapi --into DIR``).

The update keeps what a person wrote: it reads the file with ``ruamel.yaml``'s round-trip
loader, so comments, key order and quoting survive, sets the fields the import generates
(recursing into mappings, matching list items by ``name`` or ``id``), leaves every other
field alone, appends new endpoints and methods, and reports those the document no longer
has (removing them only with ``prune``). The file is written only when its text changes, so
a second import of the same document changes nothing.

Only regular files that lie in the directory are read or written: an entry that is a symbolic
link leaving it, a FIFO or a device is refused (never followed, read or written through), a
file is read up to a bound, and a file is replaced whole (written beside it, then renamed), so
an import that fails leaves nothing half-written.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.export import schema_url
from apimctl.openapi.reading import OpenApiError, read_bytes

IMPORT_MARKER = "# Made by apimctl import openapi"
_IDENTITIES = ("name", "id")


@dataclass
class Merge:
    """What an import into a directory did: the file, whether it was written, and the
    endpoints (``Service/Endpoint``-free names) added, updated, gone from the document, removed."""

    file: str
    written: bool = False
    created: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    gone_methods: list[str] = field(default_factory=list)  # ENDPOINT: METHOD
    pruned: bool = False  # whether what is gone was removed


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    yaml.preserve_quotes = True
    yaml.representer.ignore_aliases = lambda *_: True  # a value met twice is written twice
    return yaml


def new_file_text(service: dict[str, Any], source: str) -> str:
    """A manifest file holding ``service`` alone, with a header naming the document."""
    header = (f"# yaml-language-server: $schema={schema_url()}\n{IMPORT_MARKER} from {source}.\n"
              "# Re-import with --into to update the generated fields; fields you add are kept.\n")
    return header + _dump({kinds.SERVICE.manifest_key: [_styled(service)]})


def _styled(value: Any) -> Any:
    """``value`` with short lists of scalars and one-field mappings in flow style
    (``[get, post]``, ``{name: listPets}``), as the examples write them."""
    if isinstance(value, dict):
        out = CommentedMap((k, _styled(v)) for k, v in value.items())
        if len(value) == 1 and not isinstance(next(iter(value.values())), dict | list):
            out.fa.set_flow_style()
        return out
    if isinstance(value, list):
        seq = CommentedSeq(_styled(v) for v in value)
        if all(not isinstance(v, dict | list) for v in value):
            seq.fa.set_flow_style()
        return seq
    return value


def _dump(data: Any) -> str:
    out = io.StringIO()
    _yaml().dump(data, out)
    return out.getvalue()


def merge_into(directory: str, service: dict[str, Any], source: str, *, prune: bool = False) -> Merge:
    """Import ``service`` into the manifests of ``directory`` (see the module docstring)."""
    try:
        return _merge_into(directory, service, source, prune)
    except (OSError, UnicodeDecodeError) as exc:
        raise ApimctlError(f"cannot import into {directory}: {exc}") from None


def _merge_into(directory: str, service: dict[str, Any], source: str, prune: bool) -> Merge:
    folder = Path(directory)
    name = service["name"]
    found = _find(folder, name)
    if found is None:
        target = folder / f"{_slug(name)}.yaml"
        if os.path.lexists(target):
            raise ApimctlError(f"{target} exists and does not hold service {name!r}; "
                               "import into another directory")
        folder.mkdir(parents=True, exist_ok=True)
        _write(target, new_file_text(service, source))
        endpoints = [e["name"] for e in service[kinds.ENDPOINT.manifest_key]]
        return Merge(str(target), written=True, created=True, added=endpoints)
    path, text, data, live = found
    merge = Merge(str(path), pruned=prune)
    _merge_service(live, service, merge, prune)
    new_text = _dump(data)
    if new_text != text:
        _write(path, new_text)
        merge.written = True
    return merge


def _write(target: Path, text: str) -> None:
    """Replace ``target`` with ``text``: a file written beside it, then renamed over it (a
    symbolic link is replaced, never written through)."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8") as fh:  # x: never through a link
            fh.write(text)
        if target.is_file():
            shutil.copymode(target, temporary)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _manifests(folder: Path) -> list[Path]:
    """The ``*.yaml``/``*.yml`` entries of ``folder``, refused when one is a symbolic link that
    leaves it or not a regular file."""
    real = os.path.realpath(folder)
    paths = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    for path in paths:
        if os.path.commonpath([os.path.realpath(path), real]) != real:
            raise ApimctlError(f"{path}: a symbolic link that leaves {folder}: refused; "
                               "--into reads and writes only files in the directory")
        if not path.is_file():
            raise ApimctlError(f"{path}: not a regular file: refused; --into reads and writes "
                               "only regular files")
    return paths


def _read_manifest(path: Path) -> str:
    try:
        return read_bytes(str(path), what="the manifest").decode("utf-8")
    except OpenApiError as exc:
        raise ApimctlError(str(exc)) from None


def _find(folder: Path, name: str) -> tuple[Path, str, Any, CommentedMap] | None:
    if not folder.is_dir():
        return None
    for path in _manifests(folder):
        text = _read_manifest(path)
        try:
            data = _yaml().load(text)
        except YAMLError as exc:
            raise ApimctlError(f"{path}: not YAML: {exc}") from None
        for item in _services(data):
            if item.get("name") == name:
                return path, text, data, item
    return None


def _services(data: Any) -> Iterator[CommentedMap]:
    items = data.get(kinds.SERVICE.manifest_key) if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, CommentedMap):
            yield item


def _merge_service(live: CommentedMap, service: dict[str, Any], merge: Merge, prune: bool) -> None:
    key = kinds.ENDPOINT.manifest_key
    _update(live, {k: v for k, v in service.items() if k != key})
    endpoints = live.get(key)
    if not isinstance(endpoints, CommentedSeq):
        endpoints = live[key] = CommentedSeq()
    wanted = {e["name"]: e for e in service[key]}
    by_name = _index(endpoints, "name")
    for endpoint in service[key]:
        existing = by_name.get(endpoint["name"])
        if existing is not None:
            merge.gone_methods += [f"{endpoint['name']}: {m}" for m in _gone_methods(existing, endpoint)]
        if existing is None:
            endpoints.append(_styled(endpoint))
            merge.added.append(endpoint["name"])
        elif _update(existing, endpoint, prune=prune):
            merge.updated.append(endpoint["name"])
    for item in list(endpoints):
        if isinstance(item, dict) and item.get("name") not in wanted:
            merge.gone.append(str(item.get("name")))
            if prune:
                endpoints.remove(item)
                merge.removed.append(str(item.get("name")))


def _gone_methods(existing: CommentedMap, endpoint: dict[str, Any]) -> list[str]:
    if "methods" not in endpoint:
        return []
    wanted = {m.get("name") for m in endpoint["methods"]}
    return [str(m.get("name")) for m in existing.get("methods") or []
            if isinstance(m, dict) and m.get("name") not in wanted]


def _update(target: CommentedMap, new: dict[str, Any], *, prune: bool = False) -> bool:
    """Set ``new``'s fields on ``target`` in place; ``True`` when anything changed. New keys go
    after the generated key before them, so a new field lands where an import would put it."""
    changed = False
    previous: str | None = None
    for key, value in new.items():
        if key not in target:
            at = list(target).index(previous) + 1 if previous in target else len(target)
            target.insert(at, key, _styled(value))
            changed = True
        elif isinstance(value, dict) and isinstance(target[key], CommentedMap):
            changed |= _update(target[key], value, prune=prune)
        elif _named_list(value) and isinstance(target[key], CommentedSeq):
            changed |= _update_items(target[key], value, prune)
        elif target[key] != value:
            target[key] = _styled(value)
            changed = True
        previous = key
    return changed


def _update_items(target: CommentedSeq, new: list[dict[str, Any]], prune: bool) -> bool:
    changed = False
    ident = next(k for k in _IDENTITIES if k in new[0])
    by_ident = _index(target, ident)
    for value in new:
        existing = by_ident.get(value[ident])
        if existing is None:
            target.append(_styled(value))
            changed = True
        else:
            changed |= _update(existing, value, prune=prune)
    if prune:
        keep = {v[ident] for v in new}
        for item in [i for i in target if isinstance(i, dict) and i.get(ident) not in keep]:
            target.remove(item)
            changed = True
    return changed


def _named_list(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(v, dict) and any(k in v for k in _IDENTITIES) for v in value))


def _index(items: CommentedSeq, ident: str) -> dict[Any, CommentedMap]:
    """The mappings of ``items`` by their ``ident`` (the first of each), looked up once each
    rather than searched for every item of the import."""
    index: dict[Any, CommentedMap] = {}
    for item in items:
        if isinstance(item, CommentedMap):
            with contextlib.suppress(TypeError):  # an unhashable identity matches nothing imported
                index.setdefault(item.get(ident), item)
    return index


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unnamed"
