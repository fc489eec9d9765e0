"""``apimctl drift --adopt``: write what was changed in the area by hand back into the manifests,
each value where it is defined, so that a pull request carries the change into git.

The drift report (:func:`apimctl.drift.detect_drift`) says which fields of declared objects
differ; for each one, :func:`plan_adoption` finds the scalar that defines the value: in the
overlay that sets it (the last ``--overlay`` first), else in the base file that declares the
object. Only that scalar's characters change, in its own quoting style; every other byte of
every file stays as it was (comments, key order, quoting, indentation, blank lines).

Not written, only reported:

- a value that comes from ``${VAR}`` (the environment holds it) or a secret (never written
  into git);
- a field the manifests leave out (the platform's default changed) where the object has no
  block mapping to add it to (:func:`_insert_field`);
- objects added or deleted in the area (``+``/``-`` in the drift report).

Refused (exit 1, nothing written) with the location: a value that cannot be written back
faithfully, one assembled from several places (a YAML merge key) or an anchor or alias shared
by several objects, a multi-line or block scalar, a list or mapping value. Every edit is
computed before anything is written; the files are then written all or none
(:func:`apimctl.manifests.edits.write_edits`), refusing when one changed since it was read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from apimctl import kinds
from apimctl.drift import DriftRequest, detect_drift
from apimctl.errors import ApimctlError
from apimctl.export.area import export_documents
from apimctl.kinds.base import split_first, unescape_name
from apimctl.kinds.dialects import dialect_of
from apimctl.manifests.documents import SourceFile
from apimctl.manifests.edits import Edit, write_edits
from apimctl.manifests.identity import NESTED
from apimctl.manifests.loader import discover
from apimctl.manifests.model import Problems
from apimctl.manifests.overlay import ADD, DIRECTIVE
from apimctl.planning import target_dialect
from apimctl.planning.command import Keep, Notice, keep_nothing, quiet, read_manifests
from apimctl.plans.adoption import (
    ADDED,
    OBJECT,
    REMOVED,
    SECRET,
    UNDECLARED,
    VARIABLE,
    WRITTEN,
    Adopted,
    Adoption,
)
from apimctl.plans.drift import Difference, DriftReport
from apimctl.plans.model import Change, Step
from apimctl.state.live import DATA_SOURCES, Lister, read_live

DELETES_OFF = "deleted in the area: removed from the manifests only with --adopt-deletes"


class Unfaithful(ApimctlError):
    """Some value cannot be written back faithfully: nothing was written."""


# --- the YAML of one file -----------------------------------------------------------------------


@dataclass
class _File:
    """A manifest file as read: its text and its YAML nodes (aliases are the same node)."""

    path: Path
    display: str
    before: bytes
    text: str
    roots: list[yaml.Node]
    visits: dict[int, int]
    flow: set[int]  # the nodes inside a flow collection (``{a: 1}``, ``[x, y]``)
    splices: list[tuple[int, int, str]] = field(default_factory=list)

    @classmethod
    def read(cls, src: SourceFile) -> _File:
        path = Path(src.path)
        before = path.read_bytes()
        text = before.decode("utf-8")
        try:
            roots = [r for r in yaml.compose_all(text, Loader=yaml.SafeLoader) if r is not None]
        except yaml.YAMLError as exc:
            raise ApimctlError(f"{src.display}: not readable YAML: {exc}") from None
        visits: dict[int, int] = {}
        flow: set[int] = set()
        for root in roots:
            _count_visits(root, visits, flow, False, 0)
        return cls(path, src.display, before, text, roots, visits, flow)

    def new_text(self) -> str:
        text = self.text
        for start, end, new in sorted(self.splices, reverse=True):
            text = text[:start] + new + text[end:]
        return text


def _count_visits(node: yaml.Node, visits: dict[int, int], flow: set[int], inside: bool,
                  depth: int) -> None:
    """How many paths reach each node (more than one for a node an alias repeats), and which
    nodes sit inside a flow collection."""
    visits[id(node)] = visits.get(id(node), 0) + 1
    if inside:
        flow.add(id(node))
    if depth > 200:
        return
    inner = inside or bool(getattr(node, "flow_style", False))
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _count_visits(item, visits, flow, inner, depth + 1)
    elif isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            _count_visits(value, visits, flow, inner, depth + 1)


def _get(node: yaml.Node, key: str) -> tuple[yaml.Node | None, bool]:
    """The value of ``key`` in a mapping node, and whether a merge key (``<<``) gave it."""
    if not isinstance(node, yaml.MappingNode):
        return None, False
    merged: list[yaml.Node] = []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key and k.tag != "tag:yaml.org,2002:merge":
            return v, False
        if isinstance(k, yaml.ScalarNode) and k.value == "<<":
            merged.extend(v.value if isinstance(v, yaml.SequenceNode) else [v])
    for source in merged:
        found, _ = _get(source, key)
        if found is not None:
            return found, True
    return None, False


def _identity_of(item: yaml.Node, ident: str) -> str | None:
    if isinstance(item, yaml.ScalarNode):
        return str(item.value)
    found, _ = _get(item, ident)
    return str(found.value) if isinstance(found, yaml.ScalarNode) else None


def _item(items: yaml.Node | None, ident: str, name: str) -> yaml.Node | None:
    if not isinstance(items, yaml.SequenceNode):
        return None
    return next((i for i in items.value if _identity_of(i, ident) == name), None)


def _directive(node: yaml.Node) -> str | None:
    found, _ = _get(node, DIRECTIVE)
    return str(found.value) if isinstance(found, yaml.ScalarNode) else None


# --- where a value is defined -------------------------------------------------------------------


def _chain(kind_name: str, key: str) -> list[tuple[kinds.Kind, str]]:
    """``endpoint``, ``Weather/Forecast`` -> [(service, Weather), (endpoint, Forecast)]."""
    kind = kinds.get(kind_name)
    if kind.parent is None:
        return [(kind, unescape_name(key))]
    parent_key, rest = split_first(key)
    return [*_chain(kind.parent, parent_key or ""), (kind, unescape_name(rest))]


def _object(root: yaml.Node, chain: list[tuple[kinds.Kind, str]]) -> tuple[yaml.Node | None, bool]:
    """The object's node in one document, and whether an overlay adds it there whole."""
    node: yaml.Node | None = root
    added = False
    for kind, name in chain:
        items, _ = _get(node, kind.manifest_key) if node is not None else (None, False)
        node = _item(items, kind.identity, name)
        if node is None:
            return None, False
        added = added or _directive(node) == ADD
    return node, added


def _segments(path: str) -> list[str]:
    """``methods[GET].notes`` -> [methods, [GET], notes]."""
    out: list[str] = []
    for part in path.split("."):
        head, _, rest = part.partition("[")
        if head:
            out.append(head)
        while rest:
            inner, _, rest = rest.partition("]")
            out.append(f"[{inner}]")
            rest = rest.partition("[")[2] if rest.startswith("[") else rest
    return out


def _field(obj: yaml.Node, path: str, pattern: tuple[str, ...]) -> tuple[yaml.Node | None, bool]:
    """The node of field ``path`` inside an object's node, and whether a merge key gave it (or
    any mapping on the way)."""
    node: yaml.Node | None = obj
    merged = False
    for seg in _segments(path):
        if node is None:
            return None, merged
        if seg.startswith("["):
            name = seg[1:-1]
            if isinstance(node, yaml.SequenceNode):
                node = _item(node, NESTED.get(pattern, "name"), name)
                pattern = (*pattern, "*")
                continue
            seg = name
        node, via = _get(node, seg)
        merged = merged or via
        pattern = (*pattern, seg)
    return node, merged


@dataclass
class _Found:
    file: _File
    node: yaml.Node
    merged: bool


def _locate(files: Sequence[Sequence[_File]], step: Step, path: str) -> _Found | None:
    """The node defining field ``path`` of the step's object: the last overlay that sets it,
    else the base (``files``: the base's files, then each overlay's)."""
    chain = _chain(step.kind, step.key)
    top = chain[0][0]
    pattern = (top.manifest_key, "*", *[p for k, _ in chain[1:] for p in (k.manifest_key, "*")])
    for layer in reversed(files):
        for file in layer:
            for root in file.roots:
                obj, added = _object(root, chain)
                if obj is None:
                    continue
                node, merged = _field(obj, path, pattern)
                if node is not None or added:
                    return _Found(file, node, merged) if node is not None else None
    return None


# --- writing one scalar -------------------------------------------------------------------------


def _plain_ok(text: str, flow: bool) -> bool:
    """Whether ``text`` written plain reads back as itself, in a block mapping or, ``flow``,
    inside a flow mapping and a flow list too."""
    if not text or text != text.strip() or "\n" in text or (flow and any(c in text for c in ",[]{}")):
        return False
    trials: list[tuple[str, Any]] = [(f"k: {text}", {"k": text})]
    if flow:
        trials += [(f"{{k: {text}, z: 1}}", {"k": text, "z": 1}), (f"[{text}, z]", [text, "z"])]
    try:
        return all(yaml.safe_load(written) == meant for written, meant in trials)
    except yaml.YAMLError:
        return False


def scalar_text(value: Any, style: str | None, flow: bool = False) -> str | None:
    """``value`` written as a YAML scalar in the quoting ``style`` of the one it replaces
    (plain, ``'`` or ``"``); ``None`` when no single-line scalar holds it faithfully."""
    if isinstance(value, (dict, list)) or style not in (None, "", "'", '"'):
        return None
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        text = json.dumps(value)
        if style:
            return None  # a quoted string holding a number: the field's type is not clear
        return text
    string = str(value)
    if "\n" in string:
        return None
    if style == "'":
        return "'" + string.replace("'", "''") + "'"
    if style == '"' or not _plain_ok(string, flow):
        return json.dumps(string, ensure_ascii=False)
    return string


# --- objects made or deleted live ------------------------------------------------------------


def _last_line(node: yaml.Node) -> int:
    """The last line (0-based) holding any of ``node``'s text."""
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _last_line(node.value[-1])
    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return _last_line(node.value[-1][1])
    end = node.end_mark
    return int(end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line)


def _line_start(text: str, line: int) -> int:
    """The index of the first character of ``line`` (0-based; past the end: the text's length)."""
    index = 0
    for _ in range(line):
        found = text.find("\n", index)
        if found < 0:
            return len(text)
        index = found + 1
    return index


def _dash_column(file: _File, item: yaml.Node) -> int | None:
    """The column of the ``-`` of a block sequence item starting on its own line."""
    start = _line_start(file.text, item.start_mark.line)
    head = file.text[start:start + item.start_mark.column]
    if head.strip() != "-":
        return None
    return head.index("-")


def _block_items(node: yaml.Node | None) -> list[yaml.Node] | None:
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return list(node.value)
    return None


class _Dumper(yaml.SafeDumper):
    """Block lists indented under their key, as the manifests write them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _item_text(value: Any, dash: int, indent: int, add: bool) -> str:
    """A list item in block style, its ``-`` at column ``dash``, its keys at ``indent``."""
    if add and isinstance(value, dict):
        head, *rest = value.items()
        value = dict([head, (DIRECTIVE, ADD), *rest])  # right under the name, as overlays write it
    body = yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=100).splitlines()
    first = " " * dash + "-" + " " * (indent - dash - 1) + body[0]
    return "\n".join([first, *(" " * indent + line for line in body[1:])]) + "\n"


def _exported_object(exported: Mapping[str, list[Any]], chain: list[tuple[kinds.Kind, str]]) -> Any:
    items: Any = exported.get(chain[0][0].manifest_key)
    found: Any = None
    for depth, (kind, name) in enumerate(chain):
        found = next((i for i in items or () if (i.get(kind.identity) if isinstance(i, dict) else i) == name),
                     None)
        if found is None:
            return None
        if depth + 1 < len(chain):
            items = found.get(chain[depth + 1][0].manifest_key) if isinstance(found, dict) else None
    return found


def _holder(layers: Sequence[Sequence[_File]], chain: list[tuple[kinds.Kind, str]]
            ) -> tuple[_File, yaml.Node, bool] | None:
    """The file and block list an object made live goes into, and whether it goes there as
    ``$patch: add``: with overlays, the last overlay's entry of its parent (a top-level object:
    the overlay's list of its kind); without, the base file that declares its parent."""
    kind, _ = chain[-1]
    overlay = len(layers) > 1
    for file in (layers[-1] if overlay else layers[0]):
        for root in file.roots:
            parent = _object(root, chain[:-1])[0] if len(chain) > 1 else root
            if parent is None:
                continue
            items = _block_items(_get(parent, kind.manifest_key)[0])
            if items is not None and file.visits.get(id(items[-1]), 1) == 1:
                added = overlay and not (len(chain) > 1 and _object(root, chain[:-1])[1])
                return file, _get(parent, kind.manifest_key)[0], added  # type: ignore[return-value]
    return None


def _adopt_added(layers: Sequence[Sequence[_File]], diff: Difference,
                 exported: Mapping[str, list[Any]]) -> Adopted:
    chain = _chain(diff.step.kind, diff.step.key)
    value = _exported_object(exported, chain)
    holder = _holder(layers, chain)
    nothing = Change("", None, None)
    if value is None or holder is None:
        return _entry(diff, nothing, OBJECT)
    file, items, add = holder
    last = items.value[-1]
    dash = _dash_column(file, last)
    if dash is None:
        return _entry(diff, nothing, OBJECT)
    at = _line_start(file.text, _last_line(items) + 1)
    text = _item_text(value, dash, last.start_mark.column, add)
    if at == len(file.text) and not file.text.endswith("\n"):
        text = "\n" + text
    file.splices.append((at, at, text))
    line = file.text.count("\n", 0, at) + 1
    return Adopted(diff.step.kind, diff.step.key, "", None, None, ADDED, file.display, line,
                   dash + 1, False, *_who(diff), tuple(i.text for i in diff.step.impact))


def _who(diff: Difference) -> tuple[str | None, str | None]:
    att = diff.attribution
    return (att.who, att.when) if att else (None, None)


def _adopt_deleted(layers: Sequence[Sequence[_File]], diff: Difference, refusals: list[str]) -> Adopted:
    """Remove an object deleted live from the file that declares it: the base when no overlay
    is given, or the overlay that adds it (``$patch: add``)."""
    chain = _chain(diff.step.kind, diff.step.key)
    nothing = Change("", None, None)
    overlay = len(layers) > 1
    for layer in reversed(layers):
        for file in layer:
            for root in file.roots:
                node, added = _object(root, chain)
                if node is None:
                    continue
                if overlay and not added:
                    return _entry(diff, nothing, OBJECT)  # declared in the base: other areas keep it
                parent = _object(root, chain[:-1])[0] if len(chain) > 1 else root
                items = _block_items(_get(parent, chain[-1][0].manifest_key)[0]) if parent else None
                dash = _dash_column(file, node)
                where = f"{file.display}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"
                if items is None or len(items) < 2 or dash is None or file.visits.get(id(node), 1) > 1:
                    refusals.append(f"{where}: {diff.step.kind}:{diff.step.key}: cannot be removed "
                                    "faithfully (the only item of its list, a shared or flow-style "
                                    "one): edit it by hand")
                    return _entry(diff, nothing, OBJECT)
                start = _line_start(file.text, node.start_mark.line)
                end = _line_start(file.text, _last_line(node) + 1)
                file.splices.append((start, end, ""))
                return Adopted(diff.step.kind, diff.step.key, "", None, None, REMOVED, file.display,
                               node.start_mark.line + 1, dash + 1, False, *_who(diff),
                               tuple(i.text for i in diff.step.impact))
    return _entry(diff, nothing, OBJECT)


async def read_exported(client: Lister) -> dict[str, list[Any]]:
    """The area's objects as ``export`` writes them (one more read of the area)."""
    live = await read_live(client, normal_forms=False, optional=DATA_SOURCES)
    found = await target_dialect(client, None, live)
    docs, _, _ = export_documents(live, dialect=dialect_of(found.name))
    return docs


# --- the adoption -------------------------------------------------------------------------------


def _sources(paths: Sequence[str]) -> list[_File]:
    problems = Problems()
    sources = discover(paths, problems)
    if problems.errors:
        raise ApimctlError("; ".join(str(p) for p in problems.sorted()))
    return [_File.read(src) for src in sources]


def _entry(diff: Difference, change: Change, status: str, found: _Found | None = None, *,
           reason: str | None = None) -> Adopted:
    att = diff.attribution
    where = found.node.start_mark if found is not None else None
    return Adopted(diff.step.kind, diff.step.key, change.path, change.after, change.before, status,
                   found.file.display if found else None, where.line + 1 if where else None,
                   where.column + 1 if where else None, change.sensitive,
                   att.who if att else None, att.when if att else None,
                   tuple(i.text for i in diff.step.impact), reason)


def _adopt_change(files: Sequence[Sequence[_File]], diff: Difference, change: Change,
                  refusals: list[str]) -> Adopted:
    if change.sensitive:
        return _entry(diff, change, SECRET)
    found = _locate(files, diff.step, change.path)
    if found is None:
        return _insert_field(files, diff, change) or _entry(diff, change, UNDECLARED)
    node, where = found.node, f"{found.file.display}:{found.node.start_mark.line + 1}:" \
                              f"{found.node.start_mark.column + 1}"
    label = f"{diff.step.kind}:{diff.step.key} {change.path}"
    if isinstance(node, yaml.ScalarNode) and "${" in str(node.value):
        return _entry(diff, change, VARIABLE, found)
    if found.merged or found.file.visits.get(id(node), 1) > 1:
        refusals.append(f"{where}: {label}: the value is shared (a YAML anchor, alias or merge key "
                        "used in several places): edit it by hand")
        return _entry(diff, change, UNDECLARED, found)
    new = scalar_text(change.before, node.style, id(node) in found.file.flow) \
        if isinstance(node, yaml.ScalarNode) and node.start_mark.line == node.end_mark.line else None
    if new is None:
        refusals.append(f"{where}: {label}: cannot be written back faithfully (a list, a mapping or "
                        "a multi-line value): edit it by hand")
        return _entry(diff, change, UNDECLARED, found)
    found.file.splices.append((node.start_mark.index, node.end_mark.index, new))
    return _entry(diff, change, WRITTEN, found)


def _insert_field(layers: Sequence[Sequence[_File]], diff: Difference, change: Change) -> Adopted | None:
    """A field the manifests do not write (the platform's default changed by hand), added as
    the last key of the object's block mapping (or of the nearest mapping of the field's path
    that it writes): in the base without an overlay, else in the last overlay's entry of the
    object. ``None``: no such place, or a value that is not a scalar."""
    if change.before is None or isinstance(change.before, (dict, list)):
        return None
    chain = _chain(diff.step.kind, diff.step.key)
    segments = _segments(change.path)
    if any(seg.startswith("[") for seg in segments):
        return None
    for file in layers[-1]:
        for root in file.roots:
            obj = _object(root, chain)[0]
            if obj is None:
                continue
            node, rest = obj, list(segments)
            while len(rest) > 1 and isinstance(_get(node, rest[0])[0], yaml.MappingNode):
                node = _get(node, rest.pop(0))[0]  # type: ignore[assignment]
            if not isinstance(node, yaml.MappingNode) or node.flow_style or not node.value \
                    or _get(node, rest[0])[0] is not None or file.visits.get(id(node), 1) > 1:
                return None
            column = node.value[0][0].start_mark.column
            value: Any = change.before
            for seg in reversed(rest[1:]):
                value = {seg: value}
            text = yaml.dump({rest[0]: value}, Dumper=_Dumper, sort_keys=False,
                             default_flow_style=False, allow_unicode=True, width=100)
            at = _line_start(file.text, _last_line(node) + 1)
            prefix = "" if at < len(file.text) or file.text.endswith("\n") else "\n"
            file.splices.append((at, at, prefix + "".join(" " * column + line
                                                          for line in text.splitlines(keepends=True))))
            return Adopted(diff.step.kind, diff.step.key, change.path, change.after, change.before, WRITTEN,
                           file.display, file.text.count("\n", 0, at) + 1, column + 1, False,
                           *_who(diff), tuple(i.text for i in diff.step.impact))
    return None


def _verify(files: Sequence[_File]) -> None:
    """Every edited file still reads as YAML (a last guard before anything is written)."""
    for file in files:
        if file.splices:
            try:
                list(yaml.safe_load_all(file.new_text()))
            except yaml.YAMLError as exc:
                raise Unfaithful(f"{file.display}: the edited text would not read back: {exc}; "
                                 "nothing written") from None


def plan_adoption(report: DriftReport, paths: Sequence[str], overlays: Sequence[str] = (), *,
                  exported: Mapping[str, list[Any]] | None = None, deletes: bool = False) -> Adoption:
    """The edits adopting ``report``'s differences into the manifests at ``paths`` (and the
    overlay folders ``overlays``); nothing written. ``exported``: the area's objects as export
    writes them (:func:`read_exported`), for the objects made live; ``deletes``: remove the
    objects deleted live. Raises :class:`Unfaithful` listing every value that cannot be
    written back."""
    adoption = Adoption(report)
    if not report.differences:
        return adoption  # nothing to read the files for
    layers = [_sources(paths), *[_sources([o]) for o in overlays]]
    refusals: list[str] = []
    for diff in report.differences:
        if diff.step.action == "delete":
            adoption.values.append(_adopt_added(layers, diff, exported or {}))
        elif diff.step.action == "create":
            adoption.values.append(_adopt_deleted(layers, diff, refusals) if deletes else
                                   _entry(diff, Change("", None, None), OBJECT, reason=DELETES_OFF))
        else:
            for change in diff.step.changes:
                adoption.values.append(_adopt_change(layers, diff, change, refusals))
    if refusals:
        raise Unfaithful("cannot adopt every change faithfully; nothing written:\n  "
                         + "\n  ".join(refusals))
    files = [f for layer in layers for f in layer]
    _verify(files)
    adoption.edits = [Edit(f.path, f.before, f.new_text()) for f in files if f.splices]
    return adoption


@dataclass(frozen=True)
class AdoptRequest:
    """``drift --adopt``: the drift check, and whether to write (``write=False``: only say)."""

    drift: DriftRequest
    write: bool = True
    deletes: bool = False


async def adopt(request: AdoptRequest, connect: Callable[[], AbstractAsyncContextManager[Lister]],
                *, notice: Notice = quiet, keep: Keep = keep_nothing) -> Adoption:
    """Read the area, compute every edit, then write the files all or none."""
    req = request.drift
    manifest = read_manifests(req.paths, req.overlays, req.targets, req.ignores, notice, keep=keep)
    async with connect() as client:
        report = await detect_drift(client, manifest, ignores=req.ignores, targets=req.targets,
                                    target=req.target, prune=req.prune, impact=req.impact)
        made = any(d.step.action == "delete" for d in report.differences)
        exported = await read_exported(client) if made else {}
    adoption = plan_adoption(report, req.paths, req.overlays, exported=exported,
                             deletes=request.deletes)
    if request.write:
        adoption.written = write_edits(adoption.edits, "drift --adopt")
    return adoption
