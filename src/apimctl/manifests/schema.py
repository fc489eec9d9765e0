"""Validation against the manifest JSON Schema (``apimctl/schemas/manifest.schema.json``).

Called by the pipeline: :meth:`SchemaChecker.check_document` checks the top level of each
document (known keys, lists where lists belong, ``settings``), :meth:`SchemaChecker.check_item`
each top-level object after merging and overlays. ``jsonschema`` (Draft 2020-12) produces
the errors; they are turned into short located messages (``must be integer``,
``unknown field 'mxAge' (did you mean 'maxAge'?)``). When ``fastjsonschema`` is installed it
answers "valid?" first and ``jsonschema`` only explains the invalid objects, which keeps
validation of 10,000 endpoints well under a second. ``apimctl schema`` prints
:func:`schema_text`.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from apimctl import sensitive
from apimctl.kinds import KINDS, NESTED_COMPUTED_FIELDS
from apimctl.manifests.documents import LIST_KINDS, Document, Item
from apimctl.manifests.model import JsonPath, Position, Problems, format_path

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

try:  # an accelerator: answers "valid?" fast; jsonschema still explains every error
    import fastjsonschema
except ImportError:  # pragma: no cover - a dependency, but validation works without it
    fastjsonschema = None  # type: ignore[assignment]

_DRAFT7 = "http://json-schema.org/draft-07/schema#"
# fields the platform computes (an object copied from an API response carries them)
_COMPUTED = frozenset().union(*(k.compare.computed for k in KINDS), NESTED_COMPUTED_FIELDS) - {"id"}

PATTERN_MESSAGES = {
    "T\\d{2}": "must be an ISO 8601 datetime with a time zone, e.g. \"2026-12-01T02:00:00Z\"",
    "[^\\s/:?#": "must be a host name (no scheme, port, path or spaces)",
    "[^\\u0000-\\u0020\\u007f?#]": "must be a URL path (no spaces, control characters such as NUL, "
                                    "CR or LF, '?' or '#')",
    "(service|endpoint": "must be KIND:KEY:FIELD_PATH, KIND one of service, endpoint, errorSet, "
                         "package, plan, role, domain, maintenanceEvent",
}


def schema_text() -> str:
    """The manifest JSON Schema, as shipped."""
    return resources.files("apimctl").joinpath("schemas/manifest.schema.json").read_text("utf-8")


@functools.cache
def manifest_schema() -> dict[str, Any]:
    """The manifest JSON Schema as a dict (do not modify)."""
    loaded: dict[str, Any] = json.loads(schema_text())
    return loaded


@functools.cache
def checker() -> SchemaChecker:
    """The shared checker (validators are compiled once per process)."""
    return SchemaChecker(manifest_schema())


class SchemaChecker:
    """Checks documents and top-level objects; reports located problems."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs: dict[str, Any] = schema["$defs"]
        shallow = dict(schema, properties=dict(schema["properties"]))
        for kind in LIST_KINDS:
            shallow["properties"][kind] = {"type": "array"}
        self.shallow = _Validator(shallow)
        self.kinds = {kind: _Validator({"$schema": schema["$schema"], "$defs": self.defs,
                                        "$ref": schema["properties"][kind]["items"]["$ref"]})
                      for kind in LIST_KINDS}

    def check_document(self, doc: Document, problems: Problems) -> None:
        for path, message in self.shallow.problems(doc.root):
            problems.error(_where(doc.positions, path, doc.position), format_path(path), message)

    def check_item(self, item: Item, problems: Problems) -> bool:
        """Report the problems of one object; ``True`` when it is valid."""
        valid = True
        for path, message in self.kinds[item.kind].problems(item.value):
            valid = False
            where = _where(item.positions, path, Position(item.file, 0, 0))
            problems.error(where, format_path(item.display(path)), message)
        return valid

    def retype(self, item: Item) -> None:
        """Give an unquoted ``${VAR}`` its substituted text back where the schema wants a string.

        The loader types ``qpsLimitOverall: ${QPS}`` as YAML would (``10`` -> integer); a string
        field written the same way (``version: ${VERSION}``, a secret of digits) stays a string.
        """
        root = self.kinds[item.kind].schema
        for path, text in item.typed.items():
            if "string" not in _types_at(root, path):
                continue
            if not _typed(_lookup(item.value, path)):
                continue  # a merge key's value that the mapping overrides
            if not path:
                item.value = text
                continue
            parent = _lookup(item.value, path[:-1])
            if isinstance(parent, dict | list):
                _assign(parent, path[-1], text)


def _types_at(root: dict[str, Any], path: JsonPath) -> set[str]:
    """The JSON types the schema ``root`` allows at ``path`` (empty when it does not say)."""
    schemas = _branches(root, root)
    for part in path:
        found: list[Any] = []
        for schema in schemas:
            if isinstance(part, int):
                sub = schema.get("items")
            else:
                sub = schema.get("properties", {}).get(part, schema.get("additionalProperties"))
            if isinstance(sub, dict):
                found += _branches(sub, root)
        schemas = found
    return {t for schema in schemas for t in _types(schema)}


def _branches(schema: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    """``schema`` with its ``$ref`` resolved and its ``anyOf``/``oneOf`` branches listed."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return []
    out = [schema]
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key, []):
            out += _branches(branch, root)
    return out


def _typed(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def _assign(container: Any, key: str | int, value: Any) -> None:
    container[key] = value


def _lookup(value: Any, path: JsonPath) -> Any:
    """The value at ``path`` in ``value``, or ``None``."""
    for part in path:
        if isinstance(value, dict) and isinstance(part, str):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return None
    return value


def _where(positions: Mapping[JsonPath, Position], path: JsonPath, default: Position) -> Position:
    while True:
        pos = positions.get(path)
        if pos is not None:
            return pos
        if not path:
            return default
        path = path[:-1]


class _Validator:
    """One schema: a fast yes/no gate, then jsonschema for the explanation."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.fast: Callable[[Any], Any] | None = None
        if fastjsonschema is not None:
            # local references only: without "$id" nothing is ever fetched
            local = {k: v for k, v in schema.items() if k != "$id"}
            self.fast = fastjsonschema.compile(dict(local, **{"$schema": _DRAFT7}), use_formats=False)

    def problems(self, instance: Any) -> Iterator[tuple[JsonPath, str]]:
        if self.fast is not None:
            try:
                self.fast(instance)
                return
            except fastjsonschema.JsonSchemaException:
                pass
        errors = sorted(self.full.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
        for error in errors:
            yield from _explain(error, self.schema)

    @functools.cached_property
    def full(self) -> Any:
        """jsonschema's validator, made (and imported) when an object is to be explained."""
        import jsonschema

        return jsonschema.Draft202012Validator(self.schema)


def _explain(error: ValidationError, root: dict[str, Any]) -> Iterator[tuple[JsonPath, str]]:
    path: JsonPath = tuple(error.absolute_path)
    kind, instance, schema = error.validator, error.instance, error.schema
    if kind in ("anyOf", "oneOf"):
        yield from _explain_branches(error, root)
    elif kind == "additionalProperties" and isinstance(instance, dict) and isinstance(schema, dict):
        known = list(schema.get("properties", {}))
        for key in instance:
            if key not in known:
                yield (*path, key), _unknown_field(str(key), known)
    elif kind == "required" and isinstance(error.validator_value, list) and isinstance(instance, dict):
        for key in error.validator_value:
            if key not in instance:
                yield path, f"missing required field '{key}'"
    else:
        yield path, _message(error)


def _explain_branches(error: ValidationError, root: dict[str, Any]) -> Iterator[tuple[JsonPath, str]]:
    """For "a string or an object" fields, explain the branch whose type the value has."""
    branches: Sequence[Any] = error.validator_value if isinstance(error.validator_value, list) else []
    for index, branch in enumerate(branches):
        if _type_matches(error.instance, _resolve(branch, root)):
            for sub in error.context or []:
                if sub.relative_schema_path and sub.relative_schema_path[0] == index:
                    yield from _explain(sub, root)
            return
    names = [_type_name(_resolve(b, root)) for b in branches]
    yield tuple(error.absolute_path), "must be " + " or ".join(n for n in dict.fromkeys(names) if n)


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    while isinstance(schema, dict) and "$ref" in schema and "type" not in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _types(schema: Any) -> list[str]:
    declared = schema.get("type") if isinstance(schema, dict) else None
    return [declared] if isinstance(declared, str) else list(declared or [])


def _type_name(schema: Any) -> str:
    return " or ".join(_types(schema))


def _type_matches(instance: Any, schema: Any) -> bool:
    import jsonschema

    checker = jsonschema.Draft202012Validator.TYPE_CHECKER
    return any(checker.is_type(instance, t) for t in _types(schema))


def _unknown_field(key: str, known: list[str]) -> str:
    if key in _COMPUTED and key not in known:
        return f"'{key}' is set by the platform and cannot be written; remove it"
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown field '{key}'{hint}"


def _shown(value: Any) -> str:
    """``value`` as JSON, cut to 60 characters: scrubbed first (a value read from the
    environment may be registered already), and a registered value's beginning is masked
    when the message is shown (:func:`apimctl.sensitive.cut_prefixes`)."""
    return sensitive.cut(json.dumps(value, ensure_ascii=False, default=str), 60, "...")


def _message(error: ValidationError) -> str:
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "type":
        names = [expected] if isinstance(expected, str) else list(expected)
        return f"must be {' or '.join(names)}"
    if kind == "enum":
        return f"must be one of: {', '.join(str(v) for v in expected)} (got {_shown(instance)})"
    if kind == "minimum":
        return f"must be at least {expected} (got {_shown(instance)})"
    if kind == "maximum":
        return f"must be at most {expected} (got {_shown(instance)})"
    if kind in ("minLength", "minItems"):
        return "must not be empty"
    if kind == "uniqueItems":
        seen: list[Any] = []
        for value in instance:
            if value in seen:
                return f"lists {_shown(value)} more than once"
            seen.append(value)
        return "must not repeat values"
    if kind == "pattern":
        for marker, message in PATTERN_MESSAGES.items():
            if marker in str(expected):
                return f"{message} (got {_shown(instance)})"
        return f"must match {expected} (got {_shown(instance)})"
    return str(error.message)
