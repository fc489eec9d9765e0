"""Read parameters of the management API: ``fields``, ``filter``, ``search``, ``sort``,
``limit``, ``offset``.

The engine parses the query string into a :class:`ListQuery`, filters and sorts the stored
objects with it, and projects each answer through a :class:`Projector`, which compiles a
``fields`` selection against a catalog resource once per request into a flat plan so that
rendering ten thousand endpoints is a tight loop.

``fields`` semantics: without it, Imp fields only (nested objects that are Imp with their
Imp fields); with it, exactly the named fields (unknown names ignored). A nested object or
collection named bare returns its Imp fields; ``X.y`` selects fields of the nested objects;
``X.*`` returns every field of X, Exp included, and every nested object inside X with all of
its fields, recursively, unless a deeper path narrows it (``endpoints.*,endpoints.methods.id``).
Where nested wildcards are off (the dialect's ``nested_wildcards``), ``X.*`` is an unknown
name like any other and only a top-level ``*`` is a wildcard (SUPPLEMENT §10.10.8).
Write-only fields are never returned; a stored ``null`` reads as the field's ``null_reads``
where it has one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apimctl.server import fields as c
from apimctl.server.errors import Invalid
from apimctl.server.fields import Resource

Selection = dict[str, "Selection | None"]
STAR: Selection = {"*": None}
Hook = Callable[[dict[str, Any]], Any]

MAX_LIMIT, DEFAULT_LIMIT = 1000, 100
MAX_OFFSET = 2**63 - 1  # what SQLite's OFFSET (a signed 64-bit integer) can hold


def parse_fields(values: list[str], nested_wildcards: bool = True) -> Selection | None:
    """``["id,name", "endpoints.cors"]`` -> ``{"id": None, "name": None, "endpoints": {"cors": None}}``.

    Without ``nested_wildcards`` a ``*`` below the top level is an unknown name like any
    other (SUPPLEMENT §10.10.8): ``endpoints.*`` selects ``endpoints`` with nothing in it,
    and a path through a ``*`` (``endpoints.*.name``) selects nothing below it.
    """
    if not values:
        return None
    sel: Selection = {}
    for value in values:
        for raw in value.split(","):
            parts = [p for p in raw.strip().split(".") if p]
            if not nested_wildcards and "*" in parts[1:]:
                parts = parts[:parts.index("*", 1)]
                _select_empty(sel, parts)
                continue
            node = sel
            for i, part in enumerate(parts):
                if i == len(parts) - 1:
                    node.setdefault(part, None)
                else:
                    child = node.get(part)
                    if child is None:
                        child = {}
                        node[part] = child
                    node = child
    return sel


def _select_empty(sel: Selection, parts: list[str]) -> None:
    """Select the path ``parts`` with no field below it (unless something else selects some)."""
    node = sel
    for part in parts:
        child = node.get(part)
        if child is None:
            child = {}
            node[part] = child
        node = child


Entry = tuple[str, Hook | None, "Plan | None", bool, Any]  # name, hook, nested plan, many, null reads


@dataclass
class Plan:
    """How to render one resource for one selection.

    ``copy`` plans start from a shallow copy of the stored object (every stored field is
    selected), drop ``drop`` and redo only ``entries`` (computed fields, nested objects
    whose own plan is not the identity); ``identity`` plans answer the stored object as is.
    Other plans pick ``entries`` one by one.
    """

    entries: list[Entry]
    copy: bool = False
    identity: bool = False
    drop: tuple[str, ...] = ()
    view: Hook | None = None


class Projector:
    """Renders stored objects onto a selection; computed fields come from ``hooks``."""

    def __init__(self, hooks: dict[str, Hook] | None = None) -> None:
        self.hooks = hooks or {}
        self._cache: dict[tuple[str, str], Plan] = {}

    def compile(self, res: Resource, sel: Selection | None) -> Plan:
        key = (res.name, repr(sel))
        plan = self._cache.get(key)
        if plan is None:
            plan = self._compile(res, sel)
            self._cache[key] = plan
        return plan

    def _compile(self, res: Resource, sel: Selection | None) -> Plan:
        entries: list[Entry] = []
        star = sel is not None and "*" in sel
        complete = True  # every stored, readable field is selected
        for f in res.fields:
            if f.write_only:
                continue
            if sel is None:
                sub_sel: Selection | None = None
                chosen = f.fetch == "Imp"
            elif f.name in sel:
                sub_sel = sel[f.name]
                if star and sub_sel is None:
                    sub_sel = STAR
                chosen = True
            else:
                sub_sel, chosen = STAR, star
            hook = self.hooks.get(f.computed) if f.computed else None
            if not chosen or (f.computed and hook is None):
                complete = complete and bool(f.computed)
                continue
            sub = self.compile(res.nested(f), sub_sel) if f.nested else None
            entries.append((f.name, hook, sub, f.type == c.MANY, f.null_reads))
        view = self.hooks.get(res.view) if res.view else None
        if not complete:
            return Plan(entries, view=view)
        drop = tuple(f.name for f in res.fields if f.write_only) + res.internal
        redo = [e for e in entries
                if e[1] is not None or (e[2] is not None and not e[2].identity) or e[4] is not c.MISSING]
        return Plan(redo, copy=True, identity=not redo and not drop and view is None, drop=drop, view=view)

    def render(self, res: Resource, sel: Selection | None, obj: dict[str, Any]) -> dict[str, Any]:
        return run(self.compile(res, sel), obj)


def run(plan: Plan, obj: dict[str, Any]) -> dict[str, Any]:
    """Apply a compiled plan to one stored object."""
    if plan.identity:
        return obj
    if plan.view is not None:
        obj = plan.view(obj)
    if plan.copy:
        out = dict(obj)
        for name in plan.drop:
            out.pop(name, None)
    else:
        out = {}
    for name, hook, sub, many, null_reads in plan.entries:
        value = hook(obj) if hook is not None else obj.get(name)
        if value is None:
            out[name] = None if null_reads is c.MISSING else null_reads
            continue
        if sub is not None and not sub.identity:
            if many:
                value = [run(sub, item) for item in value if isinstance(item, dict)]
            elif isinstance(value, dict):
                value = run(sub, value)
        out[name] = value
    return out


@dataclass
class Filter:
    path: list[str]
    alternatives: list[str]


@dataclass
class ListQuery:
    """The parsed read parameters of one list request."""

    filters: list[Filter] = field(default_factory=list)
    searches: list[Filter] = field(default_factory=list)
    sort: list[tuple[str, bool]] = field(default_factory=list)  # (property, descending)
    limit: int = DEFAULT_LIMIT
    offset: int = 0


def _int_param(name: str, raw: str | None, default: int) -> int:
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise Invalid.at(name, "must be an integer") from None
    if value < 0:
        raise Invalid.at(name, "must not be negative")
    if value > MAX_OFFSET:
        raise Invalid.at(name, f"must not be larger than {MAX_OFFSET}")
    return value


def _check_path(res: Resource, path: list[str], param: str) -> None:
    current: Resource | None = res
    for i, part in enumerate(path):
        f = current.by_name.get(part) if current else None
        if f is None or f.write_only:
            raise Invalid.at(".".join(path), f"unknown {param} property")
        current = current.nested(f) if current and f.nested else None
        if current is None and i < len(path) - 1:
            raise Invalid.at(".".join(path), f"unknown {param} property")


def _parse_filter(res: Resource, raw: str, param: str) -> Filter:
    name, sep, value = raw.partition(":")
    if not sep or not name.strip():
        raise Invalid.at(param, "must look like property:value")
    path = name.strip().split(".")
    _check_path(res, path, param)
    return Filter(path, value.split("|"))


def split_joined(raw: str) -> list[str]:
    """``name:x,id:y`` -> ``["name:x", "id:y"]``; a part without ``:`` belongs to the value
    before it (``name:a,b`` is one filter)."""
    out: list[str] = []
    for part in raw.split(","):
        if out and ":" not in part:
            out[-1] += "," + part
        else:
            out.append(part)
    return out


def parse_list_query(res: Resource, params: Any, page_offsets: bool = False,
                     comma_joined: bool = False) -> ListQuery:
    """Parse ``filter``/``search``/``sort``/``limit``/``offset`` of a list request;
    ``comma_joined``: one ``filter`` parameter may carry several filters (SUPPLEMENT §10.3)."""
    q = ListQuery()
    for value in params.getlist("filter"):
        for raw in split_joined(value) if comma_joined else [value]:
            q.filters.append(_parse_filter(res, raw, "filter"))
    for raw in params.getlist("search"):
        for part in raw.split(","):
            if part.strip():
                q.searches.append(_parse_filter(res, part, "search"))
    for raw in params.getlist("sort"):
        for part in raw.split(","):
            if not part.strip():
                continue
            name, _, direction = part.strip().partition(":")
            if direction not in ("", "asc", "desc"):
                raise Invalid.at("sort", "direction must be asc or desc")
            _check_path(res, [name], "sort")
            q.sort.append((name, direction == "desc"))
    q.limit = min(_int_param("limit", params.get("limit"), DEFAULT_LIMIT), MAX_LIMIT)
    offset = _int_param("offset", params.get("offset"), 0)
    # a page index beyond any store is an empty page, not an offset SQLite cannot hold
    q.offset = min(offset * q.limit, MAX_OFFSET) if page_offsets else offset
    return q


def _values(obj: Any, path: list[str], hooks: dict[str, Callable[[dict[str, Any]], Any]], res: Resource | None) -> list[Any]:
    if not path:
        return obj if isinstance(obj, list) else [obj]
    items = obj if isinstance(obj, list) else [obj]
    out: list[Any] = []
    f = res.by_name.get(path[0]) if res else None
    nested = res.nested(f) if res and f and f.nested else None
    for item in items:
        if not isinstance(item, dict):
            continue
        hook = hooks.get(f.computed) if f and f.computed else None
        value = hook(item) if hook else item.get(path[0])
        out.extend(_values(value, path[1:], hooks, nested))
    return out


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _matches(obj: dict[str, Any], flt: Filter, exact: bool, res: Resource,
             hooks: dict[str, Callable[[dict[str, Any]], Any]]) -> bool:
    values = [_text(v) for v in _values(obj, flt.path, hooks, res)] or ["null"]
    for alt in flt.alternatives:
        for text in values:
            if (text == alt) if exact else (alt in text):
                return True
    return False


def select(objs: list[dict[str, Any]], q: ListQuery, res: Resource, *, exact: bool = False,
           or_filters: bool = False, hooks: dict[str, Callable[[dict[str, Any]], Any]] | None = None
           ) -> tuple[list[dict[str, Any]], int]:
    """Filter, sort and page; answers the page and the total after filtering."""
    hooks = hooks or {}
    if q.filters or q.searches:
        kept = []
        for obj in objs:
            if or_filters:
                by_filter = any(_matches(obj, f, True, res, hooks) for f in q.filters) if q.filters else False
                by_search = all(_matches(obj, s, False, res, hooks) for s in q.searches) if q.searches else False
                ok = by_filter or by_search
            else:
                ok = all(_matches(obj, f, exact, res, hooks) for f in q.filters) and all(
                    _matches(obj, s, False, res, hooks) for s in q.searches)
            if ok:
                kept.append(obj)
        objs = kept
    for name, desc in reversed(q.sort):
        objs = sorted(objs, key=lambda o, n=name: _sort_key(o.get(n)), reverse=desc)  # type: ignore[misc]
    total = len(objs)
    return objs[q.offset:q.offset + q.limit], total


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, "")
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float):
        return (2, value)
    if isinstance(value, str):
        return (3, value)
    return (4, repr(value))
