"""Reading an OpenAPI document: the file (YAML or JSON), its version, its validation by
``openapi-spec-validator``, and the positions of its nodes for error messages.

:func:`load_document` is the only way in: it refuses an unreadable file, an unsupported
version (Swagger 2.0 and OpenAPI 3.0/3.1 are read), an invalid document and a ``$ref`` that
leads nowhere, each as an :class:`OpenApiError` naming ``file:line:col`` and the JSON path of
the offending node. Path items are read through ``jsonschema-path`` so that a ``$ref`` to a
path item (local or in another file) is followed the way the validator follows it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from apimctl.errors import ApimctlError, Problem

HTTP_VERBS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_VERSIONS = {"2.0": "2.0", "3.0": "3.0", "3.1": "3.1"}
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")

Pointer = tuple[str | int, ...]


class OpenApiError(ApimctlError):
    """An OpenAPI document that cannot be read; ``problems`` are located in the document."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class OpenApiDocument:
    """A validated document: its ``data``, ``version`` (``2.0``, ``3.0`` or ``3.1``), the
    ``file`` it came from and where each node was written (:meth:`where`)."""

    file: str
    data: dict[str, Any]
    version: str
    positions: dict[Pointer, tuple[int, int]] = field(default_factory=dict)

    def where(self, path: Pointer) -> tuple[int, int]:
        """Line and column of ``path`` or of its nearest ancestor that was written."""
        key = tuple(path)
        while key and key not in self.positions:
            key = key[:-1]
        return self.positions.get(key, (0, 0))

    def problem(self, path: Pointer, message: str) -> Problem:
        line, col = self.where(path)
        return Problem(self.file, line, col, _dotted(path), message)

    def fail(self, path: Pointer, message: str) -> OpenApiError:
        return OpenApiError([self.problem(path, message)])

    def path_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each path and its path item, with a ``$ref`` to the path item followed."""
        from jsonschema_path import SchemaPath  # imported when needed: a second to load

        paths = self.data.get("paths") or {}
        root = SchemaPath.from_dict(self.data, base_uri=Path(self.file).absolute().as_uri())
        for name, item in paths.items():
            if isinstance(item, Mapping) and "$ref" in item:
                with (root / "paths" / name).open() as resolved:
                    item = dict(resolved)
            yield str(name), dict(item or {})


def load_document(file: str) -> OpenApiDocument:
    """Read, check the version of and validate the OpenAPI document in ``file``; every
    problem the validator finds is reported, each at its place."""
    text = _read(file)
    data, positions = _parse(file, text)
    doc = OpenApiDocument(file, data, "", positions)
    doc.version = _version(doc)
    problems = _problems(doc)
    if problems:
        raise OpenApiError(problems)
    return doc


def _problems(doc: OpenApiDocument) -> list[Problem]:
    """What openapi-spec-validator finds (imported here: a second or two to load); a ``$ref``
    that leads nowhere ends the search."""
    from jsonschema_path import SchemaPath
    from openapi_spec_validator.shortcuts import get_validator_cls
    from referencing.exceptions import PointerToNowhere, Unresolvable

    root = SchemaPath.from_dict(doc.data, base_uri=Path(doc.file).absolute().as_uri())
    validator = get_validator_cls(doc.data)(root)
    found: list[Problem] = []
    try:
        for error in validator.iter_errors():
            found.append(doc.problem(tuple(error.absolute_path),
                                     f"invalid {_label(doc)} document: {error.message}"))
    except PointerToNowhere as exc:
        found.extend(_dangling(doc, exc.ref).problems)
    except Unresolvable as exc:
        found.extend(_dangling(doc, str(getattr(exc, "ref", exc))).problems)
    return list(dict.fromkeys(found))


def _read(file: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpenApiError([Problem(file, 0, 0, "", f"cannot read the document: {exc}")]) from None


def _parse(file: str, text: str) -> tuple[dict[str, Any], dict[Pointer, tuple[int, int]]]:
    """The document as the validator reads it (its YAML loader: dates stay text; then through
    JSON: a response code written ``200`` is the key ``"200"``), and where each node is."""
    from jsonschema_path.loaders import JsonschemaSafeLoader  # the validator's loader (libyaml)

    loader: Any = cast(Any, JsonschemaSafeLoader)(text)  # typed as a bare class upstream
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        reason = getattr(exc, "problem", None) or str(exc)
        raise OpenApiError([Problem(file, line, col, "", f"not YAML or JSON: {reason}")]) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise OpenApiError([Problem(file, 1, 1, "", "not an OpenAPI document: expected a mapping "
                                                    "with an 'openapi' or 'swagger' field")])
    try:
        data = json.loads(json.dumps(data))
    except (TypeError, ValueError) as exc:  # a YAML value JSON has no word for (binary, a set)
        raise OpenApiError([Problem(file, 1, 1, "", f"not an OpenAPI document: {exc}")]) from None
    positions: dict[Pointer, tuple[int, int]] = {}
    _positions(node, (), positions)
    return data, positions


def _positions(node: Any, path: Pointer, out: dict[Pointer, tuple[int, int]]) -> None:
    out[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[(*path, key.value)] = (key.start_mark.line + 1, key.start_mark.column + 1)
            _positions(value, (*path, key.value), out)
            out[(*path, key.value)] = (key.start_mark.line + 1, key.start_mark.column + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _positions(item, (*path, index), out)


def _version(doc: OpenApiDocument) -> str:
    key = "swagger" if "swagger" in doc.data else "openapi"
    if key not in doc.data:
        raise doc.fail((), "not an OpenAPI document: it has neither 'openapi' nor 'swagger'")
    found = _VERSION.match(str(doc.data[key]))
    version = _VERSIONS.get(f"{found.group(1)}.{found.group(2)}") if found else None
    if version is None or (key == "swagger") != (version == "2.0"):
        raise doc.fail((key,), f"unsupported version {key}: {doc.data[key]!r} "
                               "(supported: swagger 2.0, openapi 3.0.x and 3.1.x)")
    return version


def _label(doc: OpenApiDocument) -> str:
    return "Swagger 2.0" if doc.version == "2.0" else f"OpenAPI {doc.version}"


def _dangling(doc: OpenApiDocument, ref: str) -> OpenApiError:
    target = ref if ref.startswith("#") or "#" not in ref else "#" + ref.split("#", 1)[1]
    found = [(p, v) for p, v in _refs(doc.data, ()) if v == ref or v.endswith(target)]
    where, written = found[0] if found else ((), ref)
    return doc.fail(where, f"$ref {written!r} leads nowhere: no such node in the document")


def _refs(node: Any, path: Pointer) -> Iterator[tuple[Pointer, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield (*path, key), value
            else:
                yield from _refs(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _refs(item, (*path, index))


def _dotted(path: Pointer) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
