"""Request bodies -> stored objects, driven by the catalog.

:func:`build` turns a create body into a stored object (Create rules, types, enums, the
defaults of SUPPLEMENT §3, generated ids and timestamps, nested resources built
recursively); :func:`merge` applies an update body to a stored object (Update rules; nested
collections: listed children with an id are updated, those without one are created,
unlisted ones are left alone). Both collect every problem with the property path of the
request body (``endpoints[0].requestPathAlias``) in a :class:`WriteCtx`; the engine turns
them into one 400. Resource-specific steps (the error-message catalog, ...) are each
resource's ``after_build`` rule (:class:`~apimctl.server.fields.Rules`), run after every
build and merge of an object of that resource.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from apimctl.server import fields as c
from apimctl.server.dialects import SPEC, Dialect
from apimctl.server.errors import Invalid
from apimctl.server.fields import MISSING, Field, Resource


def short_id() -> str:
    """A 24-character id of the services tree (SUPPLEMENT §4)."""
    return "".join(secrets.choice(c.SHORT_ID_ALPHABET) for _ in range(24))


def format_ts(moment: datetime, style: str | None) -> str:
    """``yyyy-mm-ddThh:mm:ss.mmm+0000`` (style ``ms``) or ``yyyy-mm-ddThh:mm:ssZ`` (``z``)."""
    moment = moment.astimezone(UTC)
    if style == "z":
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"


def parse_ts(value: str) -> datetime | None:
    """Either platform rendering (or any ISO 8601 instant with an offset) -> aware datetime."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    elif len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit():
        text = text[:-2] + ":" + text[-2:]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class WriteCtx:
    """State of one write request: the clock, the problems, the objects written."""

    def __init__(self, user: str | None = None, dialect: Dialect = SPEC) -> None:
        self.now = datetime.now(UTC)
        self.user = user
        self.dialect = dialect  # defaults of the dialect's rules (error messages, entitlements)
        self.problems: list[dict[str, str]] = []
        self.touched: list[tuple[str, dict[str, Any], str]] = []
        # computed fields sent in a body, for the rules to write elsewhere:
        # (resource, stored object, field, value sent, path)
        self.deferred: list[tuple[str, dict[str, Any], str, Any, str]] = []

    def ts(self, style: str | None) -> str:
        return format_ts(self.now, style)

    def problem(self, path: str, message: str) -> None:
        self.problems.append({"property": path, "message": message})

    def check(self) -> None:
        """Raise the problems found so far as one 400 (nothing when there are none)."""
        if self.problems:
            first = self.problems[0]
            where = f"{first['property']}: " if first["property"] else ""
            raise Invalid(f"{where}{first['message']}", list(self.problems))

    def touched_of(self, resource_name: str) -> list[tuple[dict[str, Any], str]]:
        return [(obj, path) for name, obj, path in self.touched if name == resource_name]

    def paths(self) -> dict[int, str]:
        """The body path of every object built or merged so far, by ``id()`` of the object."""
        return {id(obj): path for _, obj, path in self.touched}


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def build(res: Resource, body: Any, path: str, ctx: WriteCtx) -> dict[str, Any]:
    """A new stored object of ``res`` from a create body."""
    if not isinstance(body, dict):
        ctx.problem(path, f"must be a JSON object ({res.name})")
        body = {}
    obj: dict[str, Any] = {}
    for f in res.fields:
        if f.computed:
            if f.create != "Ign" and f.name in body:
                ctx.deferred.append((res.name, obj, f.name, _written(f, body[f.name]), join(path, f.name)))
            continue
        value = body.get(f.name, MISSING) if f.create != "Ign" else MISSING
        if value is MISSING:
            if f.create == "Req":
                ctx.problem(join(path, f.name), "is required")
            obj[f.name] = _initial(res, f, ctx)
        else:
            obj[f.name] = _coerce(res, f, value, join(path, f.name), ctx, MISSING)
    hook = res.rules.after_build
    if hook:
        hook(obj, body, ctx, path, True)
    ctx.touched.append((res.name, obj, path))
    return obj


def _initial(res: Resource, f: Field, ctx: WriteCtx) -> Any:
    if f.name == "id" and res.id_style in ("short", "uuid"):
        return short_id() if res.id_style == "short" else str(uuid.uuid4())
    if f.name in ("created", "updated") and f.type == c.DATETIME:
        return ctx.ts(res.ts_style)
    if f.autobuild and f.nested:
        return build(res.nested(f), {}, "", ctx)
    return f.default_value()


def merge(res: Resource, obj: dict[str, Any], body: Any, path: str, ctx: WriteCtx) -> dict[str, Any]:
    """Apply an update body to the stored object ``obj`` (in place) and answer it."""
    if not isinstance(body, dict):
        ctx.problem(path, f"must be a JSON object ({res.name})")
        return obj
    for f in res.fields:
        if f.computed and f.update != "Ign" and f.name in body:
            ctx.deferred.append((res.name, obj, f.name, _written(f, body[f.name]), join(path, f.name)))
        if f.computed or f.update == "Ign" or f.name == "id":
            continue
        value = body.get(f.name, MISSING)
        if value is MISSING:
            if f.update == "Req":
                ctx.problem(join(path, f.name), "is required")
            continue
        obj[f.name] = _coerce(res, f, value, join(path, f.name), ctx, obj.get(f.name, MISSING))
    if "updated" in res.by_name and res.by_name["updated"].type == c.DATETIME:
        obj["updated"] = ctx.ts(res.ts_style)
    hook = res.rules.after_build
    if hook:
        hook(obj, body, ctx, path, False)
    ctx.touched.append((res.name, obj, path))
    return obj


def _written(f: Field, value: Any) -> Any:
    """A written value, with the spellings of "not set" (:attr:`Field.unset`) as the default."""
    return f.default_value() if f.is_unset(value) else value


def _coerce(owner: Resource, f: Field, value: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    value = _written(f, value)
    if value is None:
        if f.nullable:
            return None
        if f.type == c.ONE and f.autobuild and f.nested:
            return build(owner.nested(f), {}, path, ctx)
        ctx.problem(path, "must not be null")
        return f.default_value()
    if f.type == c.ONE:
        return _one(owner.nested(f), value, path, ctx, existing)
    if f.type == c.MANY:
        return _many(owner.nested(f), f, value, path, ctx, existing)
    checker = _CHECKERS.get(f.type)
    if checker is not None:
        return checker(f, value, path, ctx, existing)
    return value


# required names and addresses must say something: an empty one can be neither found nor routed
_NON_EMPTY = frozenset({"name", "username", "domain", "requestPathAlias", "trafficManagerDomain"})


def _string(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if not isinstance(v, str):
        ctx.problem(path, "must be a string")
    elif f.create == "Req" and f.name in _NON_EMPTY and not v.strip():
        ctx.problem(path, "must not be empty")
    return v


def _integer(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int):
        ctx.problem(path, "must be an integer")
    elif v < 0:
        ctx.problem(path, "must not be negative")
    return v


def _boolean(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if not isinstance(v, bool):
        ctx.problem(path, "must be a boolean")
    return v


def _datetime(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    moment = parse_ts(v) if isinstance(v, str) else None
    if moment is None:
        ctx.problem(path, "must be a datetime such as 2026-12-01T02:00:00Z")
        return v
    return format_ts(moment, "ms")


def _object(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if not isinstance(v, dict):
        ctx.problem(path, "must be a JSON object")
    return v


def _enum(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if not isinstance(v, str) or v not in f.values:
        ctx.problem(path, f"must be one of {', '.join(map(str, f.values))}")
    return v


def _int_enum(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int) or v not in f.values:
        ctx.problem(path, f"must be one of {', '.join(map(str, f.values))}")
    return v


def _enum_list(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    items = [v] if isinstance(v, str) else v  # a single string is accepted (SUPPLEMENT §9)
    if not isinstance(items, list):
        ctx.problem(path, "must be an array")
        return v
    for i, item in enumerate(items):
        if not isinstance(item, str) or item not in f.values:
            ctx.problem(f"{path}[{i}]", f"must be one of {', '.join(f.values)}")
    return list(dict.fromkeys(items)) if all(isinstance(i, str) for i in items) else items


def _string_list(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if not isinstance(v, list):
        ctx.problem(path, "must be an array of strings")
        return v
    for i, item in enumerate(v):
        if not isinstance(item, str):
            ctx.problem(f"{path}[{i}]", "must be a string")
    return v


def _one(res: Resource, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if isinstance(existing, dict) and isinstance(v, dict):
        return merge(res, existing, v, path, ctx)
    return build(res, v, path, ctx)


def _many(res: Resource, f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if not isinstance(v, list):
        ctx.problem(path, "must be an array")
        return existing if isinstance(existing, list) else []
    if f.nested == "Domain":
        v = [{"address": item} if isinstance(item, str) else item for item in v]
    if not isinstance(existing, list) or f.replace or res.id_style == "none":
        return [build(res, item, f"{path}[{i}]", ctx) for i, item in enumerate(v)]
    out = existing
    by_id = {child.get("id"): child for child in out}
    for i, item in enumerate(v):
        where = f"{path}[{i}]"
        child_id = item.get("id") if isinstance(item, dict) else None
        if child_id is not None and child_id in by_id:
            merge(res, by_id[child_id], item, where, ctx)
        elif child_id is not None and res.id_style not in ("ref",):
            ctx.problem(join(where, "id"), f"no {res.name} with id {child_id!r} here")
        else:
            child = build(res, item, where, ctx)
            out.append(child)
            by_id[child.get("id")] = child
    return out


def _ref(f: Field, v: Any, path: str, ctx: WriteCtx, existing: Any) -> Any:
    if isinstance(v, str):
        return {"id": v}
    if not isinstance(v, dict) or not (isinstance(v.get("id"), str) or isinstance(v.get("name"), str)):
        ctx.problem(path, "must be an object with an id (or a name), or null")
        return None
    return {k: v[k] for k in ("id", "name") if isinstance(v.get(k), str)}


_CHECKERS: dict[str, Callable[[Field, Any, str, WriteCtx, Any], Any]] = {
    c.STRING: _string,
    c.INTEGER: _integer,
    c.BOOLEAN: _boolean,
    c.DATETIME: _datetime,
    c.OBJECT: _object,
    c.ENUM: _enum,
    c.INT_ENUM: _int_enum,
    c.ENUM_LIST: _enum_list,
    c.STRING_LIST: _string_list,
    c.REF: _ref,
}
