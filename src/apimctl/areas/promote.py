"""``apimctl promote --from A --to B [--only KIND:KEY ...]``: move differences between areas
of one repository (``DIR/base``, ``DIR/overlays/NAME``: what ``export --into`` writes) by
editing files, so that the pull request carries the promotion and ``plan``/``apply`` of the
target area carries it out.

An area's configuration is the base with its overlay, so B gets A's version of an object
when B's overlay says about it what A's says (A changes a field: B changes it the same way;
A adds it: B adds it; A leaves it as the base has it: B's entry goes). Promoting everything
makes B's overlay A's (B's ``variables.env`` stays B's). ``--only`` picks objects: a
top-level one with what it holds (``service:Payments``) or one under it
(``endpoint:Payments/Forecast``, ``plan:Partners/Gold``).

``--to base`` gives A's version to every area: it goes into the base (merged as the pipeline
merges A's overlay) and leaves A's overlay; the other overlays keep what they say about it
(they still override). Refused when another overlay adds or deletes that object.

Files are edited with ``ruamel.yaml``'s round trip, so comments and key order stay. Every
file is read, changed and rendered first (:func:`plan_promotion`); :func:`write_promotion`
refuses when a file was edited since it was read, and writes them all or none.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from apimctl import kinds
from apimctl.areas.repository import BASE_DIR, BASE_FILE, OVERLAY_FILE, OVERLAYS_DIR
from apimctl.errors import ApimctlError
from apimctl.kinds import Kind
from apimctl.kinds.base import split_first, unescape_name
from apimctl.manifests.edits import Edit, write_edits
from apimctl.manifests.overlay import ADD, DELETE, DIRECTIVE

TO_BASE = "base"


@dataclass(frozen=True)
class PromoteRequest:
    """From which area to which (or ``base``), which objects (none: every difference)."""

    repo: str
    source: str
    target: str
    only: tuple[str, ...] = ()


@dataclass
class Promotion:
    """The edits, and what each promoted object became (for the summary)."""

    edits: list[Edit] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return any(e.changes for e in self.edits)


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    yaml.preserve_quotes = True
    return yaml


@dataclass
class _File:
    path: Path
    before: bytes
    data: CommentedMap

    def text(self) -> str:
        out = io.StringIO()
        if self.data:
            _yaml().dump(self.data, out)
        else:
            out.write("{}\n")
        head = _leading_comments(self.before.decode("utf-8"))
        body = out.getvalue()
        return body if body.startswith(head) or not head else head + body


def _leading_comments(text: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        if not line.startswith("#"):
            break
        lines.append(line)
    return "".join(lines)


def _read(path: Path) -> _File:
    try:
        before = path.read_bytes()
    except OSError as exc:
        raise ApimctlError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = _yaml().load(before.decode("utf-8"))
    except (YAMLError, UnicodeDecodeError) as exc:
        raise ApimctlError(f"{path}: not readable YAML: {exc}") from None
    if data is None or data == {}:
        data = CommentedMap()
    if not isinstance(data, CommentedMap):
        raise ApimctlError(f"{path}: expected a mapping of top-level lists")
    return _File(path, before, data)


def overlay_file(repo: str, area: str) -> Path:
    folder = Path(repo) / OVERLAYS_DIR / area
    if not folder.is_dir():
        known = sorted(p.name for p in (Path(repo) / OVERLAYS_DIR).glob("*") if p.is_dir())
        raise ApimctlError(f"area {area!r}: {folder} is not a folder (areas of {repo}: "
                           f"{', '.join(known) or 'none'})")
    return folder / OVERLAY_FILE


def plan_promotion(request: PromoteRequest) -> Promotion:
    """Read the files and make the edits the request asks for (nothing written)."""
    if request.source == request.target:
        raise ApimctlError(f"--from and --to both name {request.source!r}")
    source = _read(overlay_file(request.repo, request.source))
    selected = [_address(text) for text in request.only]
    if request.target == TO_BASE:
        return _to_base(request, source, selected)
    target = _read(overlay_file(request.repo, request.target))
    promotion = Promotion()
    if not selected:
        for key in list(dict.fromkeys([*target.data, *source.data])):
            _set(target.data, key, copy.deepcopy(source.data.get(key)))
        promotion.promoted.append(f"everything that differs in {request.source}")
    for kind, parent, name in selected:
        _promote_one(source.data, target.data, kind, parent, name, request)
        promotion.promoted.append(_label(kind, parent, name))
    promotion.edits.append(Edit(target.path, target.before, target.text()))
    return promotion


def _label(kind: Kind, parent: str | None, name: str) -> str:
    return f"{kind.name}:{kind.key_of(name, parent)}"


def _address(text: str) -> tuple[Kind, str | None, str]:
    """``endpoint:Payments/Forecast`` -> (endpoint, ``Payments``, ``Forecast``)."""
    kind_name, sep, key = text.partition(":")
    kind = kinds.BY_NAME.get(kind_name)
    if not sep or not key or kind is None or kind.read_only:
        known = ", ".join(k.name for k in kinds.KINDS if not k.read_only)
        raise ApimctlError(f"--only {text!r}: expected KIND:KEY (kinds: {known})")
    if kind.parent is None:
        return kind, None, unescape_name(key)
    parent, rest = split_first(key)
    if parent is None:
        raise ApimctlError(f"--only {text!r}: the key of kind {kind.name} is PARENT/NAME")
    return kind, unescape_name(parent), unescape_name(rest)


def _entries(data: CommentedMap, key: str) -> list[Any] | None:
    found = data.get(key)
    return found if isinstance(found, list) else None


def _find(items: Sequence[Any] | None, ident: str, name: Any) -> tuple[int, Any] | None:
    for index, item in enumerate(items or ()):
        value = item.get(ident) if isinstance(item, dict) else item
        if value == name:
            return index, item
    return None


def _set(data: CommentedMap, key: str, value: Any) -> None:
    if value is None or value == []:
        data.pop(key, None)
    else:
        data[key] = value


def _replace(items_of: Any, key: str, ident: str, name: Any, new: Any) -> None:
    """In the mapping ``items_of``, the item ``name`` of the list ``key`` becomes ``new``
    (``None``: removed; the list goes when empty)."""
    items = items_of.get(key)
    if not isinstance(items, list):
        items = CommentedSeq()
    found = _find(items, ident, name)
    if new is None:
        if found is not None:
            del items[found[0]]
    elif found is not None:
        items[found[0]] = new
    else:
        items.append(new)
    if items:
        items_of[key] = items
    else:
        items_of.pop(key, None)


def _promote_one(source: CommentedMap, target: CommentedMap, kind: Kind, parent: str | None, name: str,
                 request: PromoteRequest) -> None:
    if parent is None:
        found = _find(_entries(source, kind.manifest_key), kind.identity, name)
        _replace(target, kind.manifest_key, kind.identity, name, copy.deepcopy(found[1]) if found else None)
        return
    top = kinds.get(kind.parent) if kind.parent else kind
    theirs = _find(_entries(source, top.manifest_key), top.identity, parent)
    ours = _find(_entries(target, top.manifest_key), top.identity, parent)
    for entry, area in ((theirs, request.source), (ours, request.target)):
        if entry is not None and isinstance(entry[1], dict) and entry[1].get(DIRECTIVE) in (ADD, DELETE):
            raise ApimctlError(f"{top.name} {parent!r} is {'added' if entry[1][DIRECTIVE] == ADD else 'deleted'} "
                               f"by area {area}'s overlay: promote {top.name}:{parent} as a whole")
    child = None
    if theirs is not None and isinstance(theirs[1], dict):
        child = _find(theirs[1].get(kind.manifest_key), kind.identity, name)
    holder = ours[1] if ours is not None else CommentedMap([(top.identity, parent)])
    _replace(holder, kind.manifest_key, kind.identity, name, copy.deepcopy(child[1]) if child else None)
    remaining = [k for k in holder if k != top.identity]
    _replace(target, top.manifest_key, top.identity, parent, holder if remaining else None)


# --- into the base ------------------------------------------------------------------------------


def _to_base(request: PromoteRequest, source: _File, selected: list[tuple[Kind, str | None, str]]) -> Promotion:
    base = _read(Path(request.repo) / BASE_DIR / BASE_FILE)
    others = [_read(p / OVERLAY_FILE) for p in sorted((Path(request.repo) / OVERLAYS_DIR).glob("*"))
              if p.is_dir() and p.name != request.source and (p / OVERLAY_FILE).is_file()]
    if not selected:
        selected = [(kind, None, str(item.get(kind.identity) if isinstance(item, dict) else item))
                    for kind in kinds.TOP_LEVEL for item in _entries(source.data, kind.manifest_key) or ()]
    promotion = Promotion()
    for kind, parent, name in selected:
        if parent is not None:
            raise ApimctlError(f"--to base takes top-level objects: promote {kinds.get(kind.parent or '').name}:"
                               f"{parent} (a {kind.name} goes with it)")
        found = _find(_entries(source.data, kind.manifest_key), kind.identity, name)
        if found is None:
            continue  # the area has the base's version: nothing to give the others
        for other in others:
            theirs = _find(_entries(other.data, kind.manifest_key), kind.identity, name)
            if theirs is not None and isinstance(theirs[1], dict) and theirs[1].get(DIRECTIVE) in (ADD, DELETE):
                raise ApimctlError(f"{other.path} {'adds' if theirs[1][DIRECTIVE] == ADD else 'deletes'} "
                                   f"{kind.name} {name!r} too: promote into that area first, or edit it")
        _merge_top(base.data, kind, name, found[1])
        _replace(source.data, kind.manifest_key, kind.identity, name, None)
        promotion.promoted.append(_label(kind, None, name))
    promotion.edits += [Edit(base.path, base.before, base.text()), Edit(source.path, source.before, source.text())]
    return promotion


def _merge_top(base: CommentedMap, kind: Kind, name: str, entry: Any) -> None:
    directive = entry.get(DIRECTIVE) if isinstance(entry, dict) else None
    if directive == DELETE:
        _replace(base, kind.manifest_key, kind.identity, name, None)
        return
    if directive == ADD:
        added = copy.deepcopy(entry)
        del added[DIRECTIVE]
        _replace(base, kind.manifest_key, kind.identity, name, added)
        return
    found = _find(_entries(base, kind.manifest_key), kind.identity, name)
    if found is None:
        raise ApimctlError(f"the base does not declare {kind.name} {name!r}, which the overlay changes")
    _merge(found[1], entry, (kind.manifest_key, "*"))


def _merge(base: Any, over: Any, path: tuple[str, ...]) -> None:
    """``over`` (an overlay entry) merged into ``base`` in place, as the pipeline merges."""
    from apimctl.manifests.identity import NESTED

    for key, value in over.items():
        sub = (*path, key)
        ident = NESTED.get(sub)
        if ident is not None and isinstance(value, list) and isinstance(base.get(key), list):
            for item in value:
                name = item.get(ident) if isinstance(item, dict) else item
                directive = item.get(DIRECTIVE) if isinstance(item, dict) else None
                found = _find(base[key], ident, name)
                if directive == DELETE:
                    _replace(base, key, ident, name, None)
                elif directive == ADD or found is None:
                    added = copy.deepcopy(item)
                    if isinstance(added, dict):
                        added.pop(DIRECTIVE, None)
                    base[key].append(added)
                elif isinstance(item, dict) and isinstance(found[1], dict):
                    _merge(found[1], item, (*sub, "*"))
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value, sub)
        else:
            base[key] = copy.deepcopy(value)


# --- writing ------------------------------------------------------------------------------------


def write_promotion(promotion: Promotion) -> list[str]:
    """Write every edit, refusing (nothing written) when a file changed since it was read."""
    return write_edits(promotion.edits, "promote", "the promotion")


# --- within one area ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CopyRequest:
    """Copy a top-level object of the manifests at ``path`` under rewritten names: every
    string of the copy (its name, its endpoints', their hosts) has each ``OLD`` of
    ``renames`` replaced by ``NEW``."""

    path: str
    address: str
    renames: tuple[tuple[str, str], ...]


def plan_copy(request: CopyRequest) -> Promotion:
    """The edit adding the copy after the original, in the file that declares it."""
    kind, parent, name = _address(request.address)
    if parent is not None:
        raise ApimctlError(f"--copy {request.address!r}: copy a top-level object (a {kind.name} goes with it)")
    if not request.renames:
        raise ApimctlError("--copy needs --rename OLD=NEW: the copy must not have the original's name")
    files = [_read(p) for p in _manifest_files(Path(request.path))]
    holder = next((f for f in files if _find(_entries(f.data, kind.manifest_key), kind.identity, name)), None)
    if holder is None:
        raise ApimctlError(f"{request.path}: no file declares {kind.name} {name!r}")
    items = _entries(holder.data, kind.manifest_key)
    found = _find(items, kind.identity, name)
    assert items is not None and found is not None
    copied = _renamed(copy.deepcopy(found[1]), request.renames)
    new_name = copied.get(kind.identity) if isinstance(copied, dict) else copied
    if new_name == name:
        raise ApimctlError(f"--rename leaves the name {name!r} as it is: the copy needs a name of its own")
    for other in files:
        clash = _find(_entries(other.data, kind.manifest_key), kind.identity, new_name)
        if clash is not None:
            raise ApimctlError(f"{other.path} already declares {kind.name} {new_name!r}")
    items.insert(found[0] + 1, copied)
    promotion = Promotion(promoted=[f"{kind.name}:{name} -> {kind.name}:{new_name}"])
    promotion.edits.append(Edit(holder.path, holder.before, holder.text()))
    return promotion


def _manifest_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ApimctlError(f"{path}: no such file or directory")
    return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and not p.name.endswith(
        (".test.yaml", ".test.yml")) and not p.name.startswith("."))


def _renamed(value: Any, renames: Sequence[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for old, new in renames:
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        for key in list(value):
            value[key] = _renamed(value[key], renames)
        return value
    if isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = _renamed(item, renames)
        return value
    return value
