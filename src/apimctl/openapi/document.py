"""Reading an OpenAPI document: the file (YAML or JSON), its version, its validation by
``openapi-spec-validator``, and the positions of its nodes for error messages.

:func:`load_document` is the only way in: it refuses an unreadable file (or one that is not a
regular file: :mod:`apimctl.openapi.reading`), an unsupported version (Swagger 2.0 and OpenAPI
3.0/3.1 are read), an invalid document, a ``$ref`` that leads nowhere and one the reference
policy refuses (:mod:`apimctl.openapi.refs`), each as an :class:`OpenApiError` naming
``file:line:col`` and the JSON path of the offending node, one line per problem. The
validator's errors are located through the keyword validator that found them (a problem in
``components``, ``definitions`` or an ``allOf`` is reported where it was written), and their
messages never quote a whole mapping. With ``lenient``, problems that lie only in parts the
import does not read (schemas, responses, parameters) are kept as :attr:`OpenApiDocument.ignored`
instead. Path items are read through ``jsonschema-path`` so that a ``$ref`` to a path item is
followed the way the validator follows it, under the same policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from apimctl.errors import Problem
from apimctl.openapi.reading import STDIN, OpenApiError, Pointer, decode, parse, read_bytes
from apimctl.openapi.refs import RefPolicy, RefRefused, ref_handlers
from apimctl.openapi.validation import located_problems

__all__ = ["HTTP_VERBS", "OpenApiDocument", "OpenApiError", "Pointer", "ReadOptions", "load_document"]

HTTP_VERBS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_VERSIONS = {"2.0": "2.0", "3.0": "3.0", "3.1": "3.1"}
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")


@dataclass(frozen=True)
class ReadOptions:
    """How a document is read: the hosts its ``$ref`` may fetch from, and whether problems in
    parts the import does not read are ignored (``lenient``)."""

    allow_ref_hosts: tuple[str, ...] = ()
    lenient: bool = False


@dataclass
class OpenApiDocument:
    """A validated document: its ``data``, ``version`` (``2.0``, ``3.0`` or ``3.1``), the
    ``file`` it came from, where each node was written (:meth:`where`), and the problems a
    lenient read ignored."""

    file: str
    data: dict[str, Any]
    version: str
    positions: dict[Pointer, tuple[int, int]] = field(default_factory=dict)
    policy: RefPolicy = field(default_factory=lambda: RefPolicy(None))
    ignored: list[Problem] = field(default_factory=list)

    def where(self, path: Pointer) -> tuple[int, int]:
        """Line and column of ``path`` or of its nearest ancestor that was written."""
        key = tuple(path)
        while key and key not in self.positions:
            key = key[:-1]
        return self.positions.get(key, (1, 1))

    def problem(self, path: Pointer, message: str) -> Problem:
        line, col = self.where(path)
        return Problem(self.file, line, col, _dotted(path), message)

    def fail(self, path: Pointer, message: str) -> OpenApiError:
        return OpenApiError([self.problem(path, message)])

    @property
    def base_uri(self) -> str:
        return Path(self.file).absolute().as_uri() if self.file != STDIN else "urn:apimctl:stdin"

    @property
    def handlers(self) -> Mapping[str, Callable[[str], Any]]:
        return ref_handlers(self.policy)

    def path_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each path and its path item, with a ``$ref`` to the path item followed."""
        from jsonschema_path import SchemaPath  # imported when needed: a second to load

        paths = self.data.get("paths") or {}
        root: Any = None
        for name, item in paths.items():
            if isinstance(item, Mapping) and "$ref" in item:
                root = root or SchemaPath.from_dict(self.data, base_uri=self.base_uri,
                                                    handlers=self.handlers)
                with (root / "paths" / name).open() as resolved:
                    item = dict(resolved)
            yield str(name), dict(item or {})


def load_document(file: str, options: ReadOptions | None = None,
                  stdin: IO[bytes] | None = None) -> OpenApiDocument:
    """Read (``-``: from ``stdin``), check the version of and validate the OpenAPI document in
    ``file``; every problem the validator finds is reported, each at its place."""
    options = options or ReadOptions()
    data, positions = parse(file, decode(file, read_bytes(file, stdin)))
    if not isinstance(data, dict):
        raise OpenApiError([Problem(file, 1, 1, "", "not an OpenAPI document: expected a mapping "
                                                    "with an 'openapi' or 'swagger' field")])
    doc = OpenApiDocument(file, data, "", positions, RefPolicy.of(file, options.allow_ref_hosts))
    doc.version = _version(doc)
    fatal, ignorable = _problems(doc)
    if fatal or (ignorable and not options.lenient):
        shown = fatal if options.lenient else sorted(fatal + ignorable, key=_order)
        raise OpenApiError(shown, lenient_would_help=not fatal)
    doc.ignored = ignorable
    return doc


def _problems(doc: OpenApiDocument) -> tuple[list[Problem], list[Problem]]:
    """What openapi-spec-validator finds, as problems the import cannot do without and
    problems in parts it does not read; a ``$ref`` that leads nowhere or is refused ends the
    search."""
    from referencing.exceptions import PointerToNowhere, Unresolvable

    label = _label(doc)
    fatal: list[Problem] = []
    ignorable: list[Problem] = []
    try:
        for found in located_problems(doc.data, doc.version, doc.base_uri, doc.handlers):
            problem = doc.problem(found.path, f"invalid {label} document: {found.message}")
            (fatal if reads(found.about) else ignorable).append(problem)
    except PointerToNowhere as exc:
        fatal.append(_dangling(doc, exc.ref))
    except Unresolvable as exc:
        ref = str(getattr(exc, "ref", exc))
        refused = _refused(exc)
        fatal.append(_ref_problem(doc, ref, f"$ref {ref!r} refused: {refused}") if refused is not None
                     else _dangling(doc, ref))
    return list(dict.fromkeys(fatal)), list(dict.fromkeys(ignorable))


def _refused(exc: BaseException) -> str | None:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, RefRefused):
            return str(cause)
        cause = cause.__cause__
    return None


def _order(problem: Problem) -> tuple[int, int]:
    return problem.line, problem.col


_READ_TOP = frozenset({"openapi", "swagger", "info", "servers", "host", "basePath", "schemes",
                       "security", "securityDefinitions", "paths"})
_READ_OPERATION = frozenset({"operationId", "tags", "security"})


def reads(path: Pointer) -> bool:
    """Whether the import reads the node at ``path`` (a problem there cannot be ignored): the
    version, info, servers, security, the paths and their operations' ids, tags, security and
    extensions, not their parameters, request bodies, responses or the document's schemas."""
    if not path:
        return True
    top = str(path[0])
    if top.startswith("x-"):
        return True
    if top == "components":
        return len(path) < 2 or path[1] == "securitySchemes"
    if top != "paths":
        return top in _READ_TOP
    if len(path) < 3:
        return True
    if path[2] == "parameters":
        return False
    if len(path) < 4 or path[2] not in HTTP_VERBS:
        return True
    key = str(path[3])
    return key in _READ_OPERATION or key.startswith("x-")


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


def _dangling(doc: OpenApiDocument, ref: str) -> Problem:
    where, written = _ref_at(doc, ref)
    return doc.problem(where, f"$ref {written!r} leads nowhere: no such node in the document")


def _ref_problem(doc: OpenApiDocument, ref: str, message: str) -> Problem:
    """``message`` at the ``$ref`` that wrote ``ref``."""
    return doc.problem(_ref_at(doc, ref)[0], message)


def _ref_at(doc: OpenApiDocument, ref: str) -> tuple[Pointer, str]:
    """Where ``ref`` (or the ``$ref`` that leads to the same node) was written, and as what."""
    target = ref if ref.startswith("#") or "#" not in ref else "#" + ref.split("#", 1)[1]
    refs = list(_refs(doc.data, ()))
    found = [(p, v) for p, v in refs if v == ref] or [(p, v) for p, v in refs if v.endswith(target)]
    return found[0] if found else ((), ref)


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
