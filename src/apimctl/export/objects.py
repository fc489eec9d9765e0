"""The exporter: live objects turned into manifest-shaped documents, one top-level kind at a time.

Each object is brought into its normal form and written with only the fields that differ
from the defaults (:mod:`apimctl.export.fields`), children under their parent sorted by
identity, ids only when asked for, strings holding a literal ``${`` escaped as ``$${``; the
kind's ``export`` operation (:class:`~apimctl.kinds.ops.KindOps`) shapes the entry, writing
secrets as ``${VAR}`` references named once every secret of the area is known
(:func:`apimctl.export.naming.variable_names`). Nothing here names a kind. Called by
:func:`apimctl.export.area.export_state` through :func:`build_documents`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.export.fields import differing
from apimctl.export.naming import DEFAULT_ORDER, variable_names
from apimctl.kinds import Kind
from apimctl.kinds import references as refs
from apimctl.kinds.capabilities import CatalogItems, Contextual
from apimctl.kinds.dialects import SPEC, Dialect, comparable
from apimctl.kinds.ops import Exported, escape_literal
from apimctl.kinds.references import checks as reference_checks
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import Context, normalise

__all__ = ["build_documents", "escape_literal"]


def build_documents(live: LiveState, *, manifest_keys: Sequence[str] | None = None,
                    with_ids: bool = False, dialect: Dialect = SPEC,
                    declared: bool = False) -> tuple[dict[str, list[Any]], list[str]]:
    """Per top-level manifest key, the exported objects; and the variables they reference.

    A read-only kind (a data source: organizations) not asked for by name is exported with
    the objects the exported ones refer to, so that the manifests' references check.
    ``declared``: ``live`` holds what manifests declare (``apimctl diff`` of manifests), whose
    fields not written hold the dialect's defaults, as ``plan`` compares them."""
    area = _Area(live, dialect=dialect, declared=declared)  # compared with the dialect's defaults
    exporter = _Exporter(area, with_ids)
    keys = list(manifest_keys) if manifest_keys is not None else list(DEFAULT_ORDER)
    docs: dict[str, list[Any]] = {}
    for kind in kinds.TOP_LEVEL:
        if kind.manifest_key in keys:
            items = [exporter.top(kind, obj) for obj in area.top(kind.name)]
            if items:
                docs[kind.manifest_key] = items
    for kind in kinds.TOP_LEVEL:
        if kind.read_only and kind.manifest_key not in keys:
            names = _referenced(docs, kind)
            items = [exporter.top(kind, obj) for obj in area.top(kind.name)
                     if escape_literal(obj.name) in names]
            if items:
                docs[kind.manifest_key] = items
    ordered = {k.manifest_key: docs[k.manifest_key] for k in kinds.TOP_LEVEL if k.manifest_key in docs}
    exporter.name_secrets()
    return ordered, exporter.used()


def _referenced(docs: Mapping[str, list[Any]], kind: Kind) -> set[str]:
    """Names of the objects of ``kind`` that the documents refer to (as written: escaped)."""
    referring = {k.name for k in kinds.KINDS if any(r.kind == kind.name for r in k.references)}
    return {ref.name for obj in reference_checks.objects(docs)
            if obj.kind.name in referring and isinstance(obj.entry, Mapping)
            for ref in refs.refs_of(obj.kind, obj.entry, obj.parent_key) if ref.kind == kind.name}


@dataclass
class _Area:
    """The live state grouped for export: children by parent id, in the API's order."""

    live: LiveState
    children: dict[tuple[str, str], list[LiveObject]] = field(default_factory=dict)
    dialect: Dialect = SPEC
    declared: bool = False

    def __post_init__(self) -> None:
        grouped: dict[tuple[str, str], list[LiveObject]] = defaultdict(list)
        for kind in kinds.KINDS:
            if kind.parent is None:
                continue
            for obj in self.live.of(kind.name):
                grouped[(kind.name, obj.parent_id or "")].append(obj)
        self.children = dict(grouped)

    def top(self, kind: str) -> list[LiveObject]:
        return _sorted(self.live.of(kind))

    def of(self, kind: str, parent: LiveObject) -> list[LiveObject]:
        return self.children.get((kind, parent.id), [])


def _sorted(objs: Sequence[LiveObject]) -> list[LiveObject]:
    return sorted(objs, key=lambda o: (o.name, o.id))


def _holds_literal(value: Any) -> bool:
    """Whether a string in ``value`` holds a literal ``${`` (for :func:`escape_literal`)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "${" in node:
                return True
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


class _SecretRef(str):
    """Where a secret reference goes, until every secret of the export is known."""

    parts: tuple[str, ...]

    def __new__(cls, parts: tuple[str, ...]) -> _SecretRef:
        ref = super().__new__(cls, "${SECRET}")
        ref.parts = parts
        return ref


class _Exporter:
    """Makes the entry of each object (by its kind's ``export``); remembers the secrets it
    stood in for."""

    def __init__(self, area: _Area, with_ids: bool) -> None:
        self.area = area
        self.with_ids = with_ids
        self.requests: list[tuple[str, ...]] = []
        self.holding: list[Any] = []  # the top-level entries holding stand-ins
        self.bases: dict[tuple[str, Context | None], dict[str, Any]] = {}

    def top(self, kind: Kind, obj: LiveObject) -> Any:
        """The entry of a top-level object (noted when a secret of it or of a child is in it)."""
        asked = len(self.requests)
        entry = self.entry(kind, obj)
        if len(self.requests) > asked:
            self.holding.append(entry)
        return entry

    def entry(self, kind: Kind, obj: LiveObject, names: tuple[str, ...] = (),
              ctx: Context | None = None, written_ctx: Context | None = None) -> Any:
        """The manifest entry of ``obj``. ``ctx``: what its live form is compared in;
        ``written_ctx``: the same for the manifests written (children come sorted)."""
        names = (*names, obj.name)
        live = obj.doc  # decoded on each access: once here
        doc = {**self.head(kind, obj), **self.fields(kind, live, ctx, written_ctx)}

        def secret(part: str) -> str:
            return self.secret(*names, part)

        return kind.ops.export(Exported(doc, live, self.children(kind, obj, names), secret))

    def children(self, kind: Kind, obj: LiveObject,
                 names: tuple[str, ...]) -> dict[str, list[Any]]:
        """The written lists of ``obj``'s child kinds. Siblings give a child its context
        (an endpoint's default error set): in the API's order for the live side, in the
        order written (or the API's, when a list is not written) for the manifests."""
        out: dict[str, list[Any]] = {}
        live_names: dict[str, list[str]] = {}
        written_names: dict[str, list[str]] = {}
        for child in kinds.children_of(kind):
            objs = self.area.of(child.name, obj)
            ordered = _sorted(objs)
            contextual = kinds.capability(child, Contextual)
            ctx = contextual.context(live_names) if contextual is not None else Context()
            written_ctx = contextual.context(written_names) if contextual is not None else Context()
            entries = [self.entry(child, o, names, ctx, written_ctx) for o in ordered]
            live_names[child.name] = [o.name for o in objs]
            catalog = kinds.capability(child, CatalogItems)
            # a catalog the platform fills may be left out; any other list is written
            if catalog.written(entries) if catalog is not None else bool(entries):
                out[child.manifest_key] = entries
                written_names[child.name] = [o.name for o in ordered]
            else:
                written_names[child.name] = live_names[child.name]
        return out

    def head(self, kind: Kind, obj: LiveObject) -> dict[str, Any]:
        out: dict[str, Any] = {kind.identity: escape_literal(obj.name)}
        if self.with_ids and kind.export.pinnable:
            out["id"] = obj.id
        return out

    def fields(self, kind: Kind, live: Mapping[str, Any], ctx: Context | None,
               written_ctx: Context | None) -> dict[str, Any]:
        """The fields of ``live`` (an object's doc) whose normal form differs from the defaults'
        (written in ``written_ctx``)."""
        norm = normalise(kind, live, ctx)
        if self.area.declared:  # a manifest's object: what it does not write is the dialect's default
            comparable(kind, None, norm, live, self.area.dialect)
        else:
            comparable(kind, norm, {}, {}, self.area.dialect)  # in the target's vocabulary
        base = self.defaults(kind, written_ctx or ctx)
        norm.pop(kind.identity, None)
        found = differing(kind, "", norm, base)
        catalog = kinds.capability(kind, CatalogItems)
        if catalog is not None:
            catalog.export_dialect(found, norm, self.area.dialect)
        if not _holds_literal(found):
            return found  # nothing to escape (its containers are copied by name_secrets)
        result: dict[str, Any] = escape_literal(found)
        return result

    def defaults(self, kind: Kind, ctx: Context | None) -> dict[str, Any]:
        """The normal form of the target's defaults for ``kind`` in ``ctx``: the same for every
        object in that context, so made once (and only read)."""
        key = (kind.name, ctx)
        base = self.bases.get(key)
        if base is None:
            base = self.bases[key] = normalise(kind, {}, ctx)
            comparable(kind, None, base, {}, self.area.dialect)
        return base

    def secret(self, *parts: str) -> str:
        """A stand-in for the reference; :meth:`name_secrets` names them all at the end, when
        every secret of the area is known (see :func:`variable_names`)."""
        self.requests.append(parts)
        return _SecretRef(parts)

    def name_secrets(self) -> None:
        """Replace every stand-in, in the entries holding one, by its ``${VAR}`` reference."""
        names = variable_names(self.requests)
        stack = list(self.holding)
        while stack:
            node = stack.pop()
            pairs = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            for key, value in pairs:
                if isinstance(value, _SecretRef):
                    node[key] = "${" + names[value.parts] + "}"
                elif isinstance(value, dict | list):
                    stack.append(value)

    def used(self) -> list[str]:
        names = variable_names(self.requests)
        return list(dict.fromkeys(names[parts] for parts in self.requests))
