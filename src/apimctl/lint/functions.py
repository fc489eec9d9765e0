"""The rule functions: what a rule's ``then.function`` names, as one registry table.

The Spectral core functions, with Spectral's meaning: ``truthy``, ``falsy``, ``defined``,
``undefined``, ``pattern`` (``match``/``notMatch``), ``enumeration`` (``values``),
``length`` (``min``/``max``: characters of a string, items of a list, keys of an object,
or the number itself), ``schema`` (a JSON Schema), ``alphabetical`` (``keyedBy``) and ``xor``
(``properties``). Two more for this platform's datetimes: ``datetime`` (``after``/``before``:
an ISO 8601 datetime or ``now``) and ``interval`` (``start``, ``end``, ``maxDuration``,
``minDuration``: ISO 8601 durations such as ``PT12H``).

:mod:`apimctl.lint.ruleset` checks each rule's ``functionOptions`` against the function's
options schema and prepares them once (:attr:`Function.prepare` compiles patterns and
schemas); :mod:`apimctl.lint.engine` calls :attr:`Function.check` for every target. A check
gets the target's value (:data:`ABSENT` when the field is missing), the prepared options,
a label naming the target, and the :class:`Context`; it returns ``(relative path, message)``
pairs, empty when the value passes. Only the functions marked ``on_absent`` see missing
values; the others pass them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from apimctl import kinds
from apimctl.kinds.capabilities import Routed
from apimctl.kinds.references import checks as reference_checks
from apimctl.lint.function_base import ABSENT, Context, Function, OptionError, Result, show
from apimctl.lint.time_functions import (
    datetime_check,
    human,
    interval,
    parse_datetime,
    parse_duration,
    prepare_datetime,
    prepare_interval,
)
from apimctl.manifests.model import JsonPath, format_path

__all__ = ["ABSENT", "FUNCTIONS", "Context", "Function", "OptionError", "Result", "human",
           "parse_datetime", "parse_duration", "show"]


# --- presence and truth ------------------------------------------------------------------------


def truthy(value: Any, _: Any, label: str, ctx: Context) -> list[Result]:
    if value is ABSENT:
        return [((), f"{label} must be truthy (it is not set)")]
    return [] if value else [((), f"{label} must be truthy (it is {show(value)})")]


def falsy(value: Any, _: Any, label: str, ctx: Context) -> list[Result]:
    if value is ABSENT or not value:
        return []
    return [((), f"{label} must be falsy (it is {show(value)})")]


def defined(value: Any, _: Any, label: str, ctx: Context) -> list[Result]:
    return [((), f"{label} must be defined")] if value is ABSENT else []


def undefined(value: Any, _: Any, label: str, ctx: Context) -> list[Result]:
    return [] if value is ABSENT else [((), f"{label} must not be defined")]


# --- strings and values --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Patterns:
    match: re.Pattern[str] | None
    not_match: re.Pattern[str] | None


def compile_regex(text: str) -> re.Pattern[str]:
    """``text`` as a regular expression; Spectral's ``/body/flags`` form is accepted too
    (flags ``i``, ``m``, ``s``). Raises ``re.error``."""
    found = re.fullmatch(r"/(.*)/([a-z]*)", text, re.DOTALL)
    if found is None:
        return re.compile(text)
    flags = 0
    for letter in found.group(2):
        if letter not in "ims":
            raise re.error(f"unsupported flag {letter!r} (use i, m or s)")
        flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}[letter]
    return re.compile(found.group(1), flags)


def _prepare_pattern(options: Mapping[str, Any]) -> _Patterns:
    compiled: dict[str, re.Pattern[str] | None] = {}
    for key in ("match", "notMatch"):
        text = options.get(key)
        try:
            compiled[key] = compile_regex(text) if isinstance(text, str) else None
        except re.error as exc:
            raise OptionError((key,), f"invalid regular expression {text!r}: {exc}") from None
    return _Patterns(compiled["match"], compiled["notMatch"])


def pattern(value: Any, options: _Patterns, label: str, ctx: Context) -> list[Result]:
    if value is ABSENT:
        return []
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return [((), f"{label} must be a string (it is {show(value)})")]
    text = value if isinstance(value, str) else str(value)
    out: list[Result] = []
    if options.match is not None and options.match.search(text) is None:
        out.append(((), f"{label} must match the pattern {options.match.pattern!r}"))
    if options.not_match is not None and options.not_match.search(text) is not None:
        out.append(((), f"{label} must not match the pattern {options.not_match.pattern!r}"))
    return out


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def enumeration(value: Any, options: Mapping[str, Any], label: str, ctx: Context) -> list[Result]:
    allowed = options["values"]
    if value is ABSENT or any(_equal(value, v) for v in allowed):
        return []
    choices = ", ".join(show(v) for v in allowed)
    return [((), f"{label} must be one of: {choices} (it is {show(value)})")]


def length(value: Any, options: Mapping[str, Any], label: str, ctx: Context) -> list[Result]:
    if value is ABSENT or isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        size: float = value
        unit, what = "", f"it is {show(value)}"
    elif isinstance(value, str | list | dict):
        size = len(value)
        unit = {str: " characters", list: " items", dict: " keys"}[type(value)]
        what = f"it has {size}"
    else:
        return []
    low, high = options.get("min"), options.get("max")
    if low is not None and size < low:
        return [((), f"{label} must be at least {show(low)}{unit} ({what})")]
    if high is not None and size > high:
        return [((), f"{label} must be at most {show(high)}{unit} ({what})")]
    return []


# --- structure -----------------------------------------------------------------------------------


_DIALECTS = {
    "draft4": jsonschema.Draft4Validator,
    "draft6": jsonschema.Draft6Validator,
    "draft7": jsonschema.Draft7Validator,
    "draft2019-09": jsonschema.Draft201909Validator,
    "draft2020-12": jsonschema.Draft202012Validator,
}


def _prepare_schema(options: Mapping[str, Any]) -> Any:
    schema = options["schema"]
    dialect = options.get("dialect")
    if dialect is not None:
        cls = _DIALECTS[dialect]
    else:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise OptionError(("schema", *exc.absolute_path), f"not a valid JSON Schema: {exc.message}") from None
    return cls(schema)


def schema(value: Any, validator: Any, label: str, ctx: Context) -> list[Result]:
    if value is ABSENT:
        return [((), f"{label} must exist")]
    out: list[Result] = []
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        rel = tuple(error.absolute_path)
        name = f"{label}{_suffix(rel)}"
        out.append((rel, f"{name}: {error.message}"))
    return out


def _suffix(rel: JsonPath) -> str:
    if not rel:
        return ""
    return format_path(("x", *rel))[1:]  # ".name" or "[1]", as a continuation of the label


def _sort_key(item: Any) -> tuple[int, Any]:
    if isinstance(item, bool) or not isinstance(item, int | float | str):
        return (2, show(item))
    return (0, item) if isinstance(item, int | float) else (1, item)


def alphabetical(value: Any, options: Mapping[str, Any] | None, label: str, ctx: Context) -> list[Result]:
    keyed_by = (options or {}).get("keyedBy")
    if isinstance(value, dict):
        items: list[Any] = list(value)
        paths: list[JsonPath] = [(k,) for k in value]
    elif isinstance(value, list):
        items = [v.get(keyed_by) if keyed_by and isinstance(v, dict) else v for v in value]
        paths = [(i,) for i in range(len(value))]
    else:
        return []
    for i in range(1, len(items)):
        if _sort_key(items[i]) < _sort_key(items[i - 1]):
            by = f" by {keyed_by}" if keyed_by else ""
            return [(paths[i], f"{label} must be sorted alphabetically{by}: "
                               f"{show(items[i])} should come before {show(items[i - 1])}")]
    return []


def xor(value: Any, options: Mapping[str, Any], label: str, ctx: Context) -> list[Result]:
    if not isinstance(value, dict):
        return []
    names: list[str] = options["properties"]
    present = [n for n in names if n in value]
    if len(present) == 1:
        return []
    found = "none is" if not present else f"{' and '.join(present)} are"
    return [((), f"{label}: exactly one of {', '.join(names)} must be defined ({found})")]


# --- the registry --------------------------------------------------------------------------------

_DATETIME = {"type": "string", "minLength": 1}


# --- the platform's own -----------------------------------------------------------------------


def shared_routes(value: Any, _: Any, label: str, ctx: Context) -> list[Result]:
    """Endpoints of a manifest document (the value) sharing a path on a public domain with
    other HTTP methods: valid where routes are unique by method too (SUPPLEMENT §10.10.1), but
    refused by areas that keep (domain, path) unique (§4), and easy to misroute."""
    claimed: dict[str, list[JsonPath]] = {}  # route (``alias|host``) -> who claims it
    declared = reference_checks.objects(value) if isinstance(value, Mapping) else ()
    for obj in declared:
        if not isinstance(obj.entry, dict) or not isinstance(obj.entry.get("requestPathAlias"), str):
            continue
        routed = kinds.capability(obj.kind, Routed)
        for route in routed.routes(obj.entry, by_method=False) if routed is not None else ():
            if not route.endswith("|"):  # no public domain: no route
                claimed.setdefault(route, []).append((*obj.path, "requestPathAlias"))
    out: list[Result] = []
    for route, paths in sorted(claimed.items()):
        alias, _, host = route.partition("|")
        for path in paths if len(paths) > 1 else ():
            out.append((path, f"{host}{alias} is shared by {len(paths)} endpoints (with other "
                              "HTTP methods); an area keeping (domain, path) unique refuses it"))
    return out


def _options(properties: dict[str, Any], *, required: list[str] | None = None,
             any_of: list[str] | None = None) -> dict[str, Any]:
    schema_: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema_["required"] = required
    if any_of:
        schema_["anyOf"] = [{"required": [name]} for name in any_of]
    return schema_


FUNCTIONS: Mapping[str, Function] = MappingProxyType({f.name: f for f in (
    Function("truthy", truthy, "the value is set and truthy (not false, 0, empty or null)", on_absent=True),
    Function("falsy", falsy, "the value is missing or falsy", on_absent=True),
    Function("defined", defined, "the field is present", on_absent=True),
    Function("undefined", undefined, "the field is absent", on_absent=True),
    Function("pattern", pattern, "a string matches `match` and does not match `notMatch` (regular expressions)",
             _options({"match": {"type": "string"}, "notMatch": {"type": "string"}}, any_of=["match", "notMatch"]),
             _prepare_pattern),
    Function("enumeration", enumeration, "the value is one of `values`",
             _options({"values": {"type": "array", "minItems": 1}}, required=["values"])),
    Function("length", length, "characters, items, keys or the number itself within `min`..`max`",
             _options({"min": {"type": "number"}, "max": {"type": "number"}}, any_of=["min", "max"])),
    Function("schema", schema, "the value satisfies the JSON Schema `schema` (`dialect`: draft4 ... draft2020-12)",
             _options({"schema": {"type": ["object", "boolean"]}, "dialect": {"enum": list(_DIALECTS)}},
                      required=["schema"]),
             _prepare_schema, on_absent=True),
    Function("alphabetical", alphabetical, "a list (by `keyedBy` for objects) or an object's keys are sorted",
             _options({"keyedBy": {"type": "string", "minLength": 1}})),
    Function("xor", xor, "exactly one of `properties` is defined on the object",
             _options({"properties": {"type": "array", "items": {"type": "string"}, "minItems": 2}},
                      required=["properties"])),
    Function("datetime", datetime_check, "an ISO 8601 datetime after `after` / before `before` (`now` or a datetime)",
             _options({"after": _DATETIME, "before": _DATETIME}, any_of=["after", "before"]),
             prepare_datetime),
    Function("interval", interval, "the object's `start`..`end` datetimes span at most `maxDuration` "
                                   "(at least `minDuration`)",
             _options({"start": {"type": "string", "minLength": 1}, "end": {"type": "string", "minLength": 1},
                       "maxDuration": {"type": "string"}, "minDuration": {"type": "string"}},
                      required=["start", "end"]),
             prepare_interval),
    Function("sharedRoutes", shared_routes, "no two endpoints of the document share a path on a "
                                            "public domain (with other HTTP methods)"),
)})
