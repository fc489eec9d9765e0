"""``openapi-spec-validator``'s findings, each with the place of the node it is about and a
one-line message.

Called by :mod:`apimctl.openapi.document`. The validator checks a document twice: against the
OpenAPI JSON Schema (an error's ``absolute_path`` is its place in the document), and with
keyword validators that walk the document (paths, operations, parameters, schemas and their
``default`` values); an error of the latter only knows its place in the value it checked. So
each keyword validator is wrapped here to stamp the errors it yields with the document path it
was given (the innermost one wins), and the two are joined. An ``anyOf``/``oneOf`` error is
replaced by its most relevant sub-error (``jsonschema``'s ``best_match``), and no message
quotes a whole mapping or list.

The operation-id check of the validator keeps the ids in a list (a search per operation, so
quadratic in the document's size); here it keeps them in a set as well.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from apimctl.openapi.reading import Pointer

_STAMP = "_apimctl_at"
# the field of an operation an error yielded at the operation is about
_FIELDS = {"UnresolvableParameterError": ("parameters",), "DuplicateOperationIDError": ("operationId",)}
_BRIEF = 60  # characters of a value quoted in a message
_LONG = 300  # characters of a message


def located_problems(data: dict[str, Any], version: str, base_uri: str,
                     handlers: Mapping[str, Callable[[str], Any]]) -> Iterator[Finding]:
    """Each problem the validator finds in ``data``. Raises ``referencing``'s
    ``Unresolvable`` for a ``$ref`` it cannot follow."""
    from jsonschema_path import SchemaPath
    from openapi_spec_validator.shortcuts import get_validator_cls

    root = SchemaPath.from_dict(data, base_uri=base_uri, handlers=handlers)
    validator = _located_class(get_validator_cls(data))(root)
    for error in validator.schema_validator.iter_errors(validator.schema):
        yield _described(data, error, tuple(error.absolute_path))
    for error in validator.root_validator(validator.schema_path):
        yield _described(data, error, getattr(error, _STAMP, ()))


@dataclass(frozen=True)
class Finding:
    """One problem: the ``path`` of the node it is reported at, the ``message``, and the path
    of what it is ``about`` (for a missing property: the property's place, not the parent's)."""

    path: Pointer
    message: str
    about: Pointer


_CLASSES: dict[type[Any], type[Any]] = {}


def _located_class(cls: type[Any]) -> type[Any]:
    """``cls`` with every keyword validator stamping its errors with their place."""
    if cls not in _CLASSES:
        keywords = {name: _stamping(kind) for name, kind in cls.keyword_validators.items()}
        _CLASSES[cls] = type(cls.__name__, (cls,), {"keyword_validators": keywords})
    return _CLASSES[cls]


def _stamping(kind: type[Any]) -> type[Any]:
    from jsonschema_path import SchemaPath
    from openapi_spec_validator.validation.keywords import OperationValidator, ValueValidator

    value_check = issubclass(kind, ValueValidator)

    def __init__(self: Any, registry: Any) -> None:
        kind.__init__(self, registry)
        if isinstance(self, OperationValidator):
            self.operation_ids_registry = _Ids()

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        node = next((a for a in args if isinstance(a, SchemaPath)), None)
        at: Pointer = tuple(node.parts) if node is not None else ()
        if value_check:  # the schema's default value is checked, not the schema
            at = (*at, "default")
        for error in kind.__call__(self, *args, **kwargs):
            if not hasattr(error, _STAMP):
                field = _FIELDS.get(type(error).__name__, ())
                setattr(error, _STAMP, (*at, *field, *error.absolute_path))
            yield error

    return type(kind.__name__, (kind,), {"__init__": __init__, "__call__": __call__})


class _Ids(list[Any]):
    """The validator's list of operation ids, searched in a set."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[Any] = set()

    def __contains__(self, value: object) -> bool:
        try:
            return value in self.seen
        except TypeError:  # an id that is not a string: the schema check reports it
            return False

    def append(self, value: Any) -> None:
        super().append(value)
        with contextlib.suppress(TypeError):
            self.seen.add(value)


def _best(error: Any) -> Any:
    """The most relevant error of an ``anyOf``/``oneOf``, else ``error``: in the alternative
    the document came closest to (the fewest errors, then the deepest), the deepest error
    that is more than a missing or unexpected property."""
    if not error.context:
        return error
    alternatives: dict[Any, list[Any]] = {}
    for choice in error.context:
        alternatives.setdefault(choice.relative_schema_path[0], []).append(choice)
    closest = min(alternatives.values(),
                  key=lambda errors: (len(errors), -max(len(e.absolute_path) for e in errors)))
    return max((_best(choice) for choice in closest), key=_relevance)


_VAGUE = ("required", "additionalProperties")  # what an unchosen alternative mostly says


def _relevance(error: Any) -> tuple[int, bool]:
    return len(error.absolute_path), error.validator not in _VAGUE


def _described(data: Any, error: Any, at: Pointer) -> Finding:
    """Where the error is (``at``, deeper when its most relevant sub-error is, and followed
    through local ``$ref`` to the node where it was written) and a one-line message that
    quotes no mapping or list."""
    best = _best(error)
    deeper = tuple(best.absolute_path)[len(error.absolute_path):]
    path = written_at(data, (*at, *deeper))
    missing = _missing(best)
    return Finding(path, _message(best), (*path, missing) if missing is not None else path)


def _missing(error: Any) -> str | None:
    """The one property a ``required`` error says is missing."""
    if error.validator != "required" or not isinstance(error.instance, Mapping):
        return None
    absent = [name for name in error.validator_value or () if name not in error.instance]
    return str(absent[0]) if len(absent) == 1 else None


def written_at(data: Any, path: Pointer) -> Pointer:
    """``path`` (a walk that follows ``$ref``, as the validator walks) as the place in ``data``
    where its node was written: each local ``$ref`` met on the way is followed to its target.
    The walk stops at a ``$ref`` to another file, and at a step that leads nowhere."""
    node: Any = data
    out: Pointer = ()
    for index, part in enumerate(path):
        node, out = _through_refs(data, node, out)
        child = _child(node, part)
        if child is _NOWHERE:
            return (*out, *path[index:])
        node, out = child, (*out, part)
    return out


_NOWHERE = object()


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, Mapping) and part in node:
        return node[part]
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _NOWHERE


def _through_refs(data: Any, node: Any, at: Pointer) -> tuple[Any, Pointer]:
    """``node`` and its place, followed through local ``$ref`` (a few hops at most)."""
    for _ in range(32):
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        if not isinstance(ref, str) or not ref.startswith("#/"):
            break
        target = tuple(_unescape(p) for p in ref[2:].split("/"))
        found: Any = data
        for part in target:
            found = _child(found, int(part) if isinstance(found, list) and part.isdigit() else part)
            if found is _NOWHERE:
                return node, at
        node, at = found, target
    return node, at


def _unescape(part: str) -> str:
    from urllib.parse import unquote

    return unquote(part).replace("~1", "/").replace("~0", "~")


def _message(error: Any) -> str:
    kind, instance, expected = error.validator, error.instance, error.validator_value
    if kind == "type":
        message = f"{_brief(instance)} is not of type {_brief(expected)}"
    elif kind == "enum":
        message = f"{_brief(instance)} is not one of {_brief(expected)}"
    elif kind in ("oneOf", "anyOf"):
        message = f"{_brief(instance)} is not valid under any of the given schemas"
    elif kind in ("not", "const", "pattern", "format", "minimum", "maximum", "minLength",
                  "maxLength", "minItems", "maxItems", "uniqueItems"):
        message = f"{_brief(instance)} does not match {kind} {_brief(expected)}"
    else:
        message = " ".join(str(error.message).split())
    return message if len(message) <= _LONG else message[:_LONG - 1] + "…"


def _brief(value: Any) -> str:
    """``value`` for a message: a mapping or list by what it is, a scalar quoted (cut short)."""
    if isinstance(value, Mapping):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list | tuple):
        if all(isinstance(v, str | int | float | bool) or v is None for v in value) and len(repr(value)) <= _BRIEF:
            return repr(value)
        return "a list"
    text = repr(value)
    return text if len(text) <= _BRIEF else text[:_BRIEF - 1] + "…"
