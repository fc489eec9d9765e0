"""Checks beyond the schema, on the merged and overlaid configuration.

Called by the pipeline once every object has passed (or failed) the schema. The checks are
written defensively: an object that failed the schema is still looked at where its shape
allows, and never causes an exception. What is checked: identities unique in their list and
ids unique per kind; ``previousNames`` consistent; references resolve (an endpoint's error
set, role names, plan entitlements, maintenance-event endpoints; names inside a nested list the
manifests omit, which is left alone on the live side, are not checked); endpoint host names
under a declared domain (a warning when the manifests do not manage domains); each kind's own
rules (``KindOps.check``, in the kind's module: routes unique in the area, API-key versus OAuth
rules, methods a plan entitles, maintenance windows that end after they start, one email
template set per plan); secrets written as literals or with a literal default (a warning).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.findings import Declarations, Finding, duplicates
from apimctl.kinds.references import checks as reference_checks
from apimctl.kinds.references.checks import Declared
from apimctl.manifests.identity import KIND_LABEL, NESTED, TOP_LEVEL, identity
from apimctl.manifests.model import JsonPath, Position, Problems


def _manifest_path(kind: Kind) -> tuple[str, ...]:
    """The path pattern of the kind's objects in a manifest (``services * endpoints *``)."""
    parent = (*_manifest_path(kinds.get(kind.parent)),) if kind.parent else ()
    return (*parent, kind.manifest_key, "*")


SECRET_FIELDS: tuple[tuple[str, ...], ...] = tuple(
    (*_manifest_path(k), *field.split(".")) for k in kinds.KINDS for field in sorted(k.compare.secret))
"""Path patterns (``"*"`` = any index) of the fields that hold secrets."""


@dataclass
class Context:
    """The merged document with what the checks need to report located problems, and the
    objects it declares (walked once, shared by the checks)."""

    doc: dict[str, Any]
    positions: Mapping[JsonPath, Position]
    refs: dict[JsonPath, str]
    display: Callable[[JsonPath], str]
    problems: Problems

    @functools.cached_property
    def declared(self) -> list[Declared]:
        return list(reference_checks.objects(self.doc))

    @functools.cached_property
    def keyed_lists(self) -> list[tuple[JsonPath, list[Any], str]]:
        """Every keyed list (top-level and nested) with its identity field."""
        return list(_keyed_lists(self.doc))

    @functools.cached_property
    def by_kind(self) -> dict[str, list[Declared]]:
        """The declared objects whose entry is a mapping, by kind."""
        out: dict[str, list[Declared]] = {}
        for obj in self.declared:
            if isinstance(obj.entry, dict):
                out.setdefault(obj.kind.name, []).append(obj)
        return out

    def where(self, path: JsonPath) -> Position | None:
        while True:
            pos = self.positions.get(path)
            if pos is not None or not path:
                return pos
            path = path[:-1]

    def error(self, path: JsonPath, message: str) -> None:
        self.problems.error(self.where(path), self.display(path), message)

    def warning(self, path: JsonPath, message: str) -> None:
        self.problems.warning(self.where(path), self.display(path), message)


def run_checks(ctx: Context) -> None:
    """Run every check; problems go to ``ctx.problems``."""
    for check in (_unique_identities, _unique_ids, _references, _kinds_own, _secrets):
        check(ctx)


# --- helpers ------------------------------------------------------------------------------


def _dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def _strings(value: Any) -> Iterator[tuple[int, str]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield index, item


def _str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _keyed_lists(doc: dict[str, Any]) -> Iterator[tuple[JsonPath, list[Any], str]]:
    stack: list[tuple[JsonPath, tuple[str, ...], Any]] = [((k,), (k,), doc.get(k)) for k in TOP_LEVEL]
    while stack:
        path, shape, value = stack.pop()
        field = TOP_LEVEL[shape[0]] if len(shape) == 1 else NESTED[shape]
        if not isinstance(value, list):
            continue
        yield path, value, field
        children = _CHILDREN.get(shape, ())
        for index, item in _dicts(value) if children else ():
            for key in children:
                if key in item:
                    stack.append(((*path, index, key), (*shape, "*", key), item[key]))


_CHILDREN: dict[tuple[str, ...], tuple[str, ...]] = {}
for _shape in NESTED:
    _CHILDREN.setdefault(_shape[:-2], ())
    _CHILDREN[_shape[:-2]] += (_shape[-1],)


def _label(path: JsonPath) -> str:
    return KIND_LABEL.get(str(path[-1]), "object")


_MAX_OTHERS = 5


def _report(ctx: Context, finding: Finding) -> None:
    """A finding as a problem; a duplicate's message names the other places."""
    message = finding.message
    if finding.also:
        # a name repeated a thousand times lists a few places, not a thousand each
        others = [str(ctx.where(p)) for p in itertools.islice(finding.also, _MAX_OTHERS)]
        if len(finding.also) > _MAX_OTHERS:
            others.append(f"and {len(finding.also) - _MAX_OTHERS} more")
        message = f"{message}: also at {', '.join(others)}"
    if finding.severity == "warning":
        ctx.warning(finding.path, message)
    else:
        ctx.error(finding.path, message)


def _report_duplicates(ctx: Context, seen: Mapping[Any, list[JsonPath]], describe: Callable[[Any], str]) -> None:
    """Every occurrence of a duplicated key gets a problem naming the other places."""
    for finding in duplicates(seen, describe):
        _report(ctx, finding)


# --- identities, ids, previous names ----------------------------------------------------------


# identity fields compared case-insensitively (``Kind.compare.fold_case``)
_FOLDED = frozenset(k.identity for k in kinds.KINDS if k.compare.fold_case)


def _unique_identities(ctx: Context) -> None:
    for path, items, field in ctx.keyed_lists:
        first: dict[str, int] = {}  # identity -> index of its first item
        repeated: dict[str, list[int]] = {}  # the identities written more than once
        previous: dict[str, list[JsonPath]] = {}
        folded = field in _FOLDED
        for index, item in enumerate(items):
            name = identity(item, field)
            if name is None:
                continue
            key = name.lower() if folded else name
            if key in first:
                repeated.setdefault(key, [first[key]]).append(index)
            else:
                first[key] = index
            if isinstance(item, dict) and "previousNames" in item:
                _previous_names(ctx, (*path, index), item, previous)

        def at(index: int, items: list[Any] = items, path: JsonPath = path, field: str = field) -> JsonPath:
            return (*path, index) if isinstance(items[index], str) else (*path, index, field)

        label = _label(path)
        seen = {key: [at(i) for i in indexes] for key, indexes in repeated.items()}
        _report_duplicates(ctx, seen, functools.partial("duplicate {} '{}'".format, label))
        for name, paths in previous.items():
            if name in first:
                for p in paths:
                    ctx.error(p, f"previous name '{name}' is the name of another {label} "
                                 f"(at {ctx.where(at(first[name]))})")
        _report_duplicates(ctx, previous, functools.partial("previous name '{1}' is claimed by two {0}s".format, label))


def _previous_names(ctx: Context, path: JsonPath, item: dict[str, Any],
                    previous: dict[str, list[JsonPath]]) -> None:
    name = _str(item, "name")
    for index, old in _strings(item.get("previousNames")):
        where = (*path, "previousNames", index)
        if old == name:
            ctx.error(where, "previousNames lists the object's own name")
        else:
            previous.setdefault(old, []).append(where)


def _unique_ids(ctx: Context) -> None:
    ids: dict[tuple[str, ...], dict[str, list[JsonPath]]] = {}
    for path, items, _ in ctx.keyed_lists:
        if path[-1] == "errorMessages":
            continue  # message ids are the catalog's, not pins
        pattern = tuple("*" if isinstance(p, int) else p for p in path)
        for index, item in enumerate(items):
            if isinstance(item, dict) and "id" in item:
                pinned = _str(item, "id")
                if pinned is not None:
                    ids.setdefault(pattern, {}).setdefault(pinned, []).append((*path, index, "id"))
    for pattern, seen in ids.items():
        label = KIND_LABEL.get(pattern[-1], "object")
        _report_duplicates(ctx, seen, functools.partial("id '{1}' is pinned by two {0}s".format, label))


# --- references ------------------------------------------------------------------------------


def _references(ctx: Context) -> None:
    """Every reference a kind declares (:mod:`apimctl.kinds.references`)."""
    for finding in reference_checks.check(ctx.doc, ctx.declared):
        _report(ctx, finding)


def _kinds_own(ctx: Context) -> None:
    """Each kind's own checks (``KindOps.check``: routes, authentication, entitled methods,
    maintenance windows, ...)."""
    settings = ctx.doc.get("settings")
    declared = Declarations(ctx.by_kind, settings if isinstance(settings, dict) else {})
    for kind in kinds.KINDS:
        for finding in kind.ops.check(declared):
            _report(ctx, finding)


def _get(doc: Any, path: JsonPath) -> Any:
    for part in path:
        doc = doc[part]
    return doc


# --- secrets ---------------------------------------------------------------------------------


_SECRET_PARTS: dict[str, tuple[list[str], ...]] = {
    k.name: tuple(field.split(".") for field in sorted(k.compare.secret)) for k in kinds.KINDS}


def secret_paths(doc: dict[str, Any], declared: Iterable[Declared] | None = None) -> Iterator[JsonPath]:
    """The paths of the secret fields present in ``doc`` (``declared``: its objects, when known)."""
    for obj in reference_checks.objects(doc) if declared is None else declared:
        if not isinstance(obj.entry, dict):
            continue
        for parts in _SECRET_PARTS[obj.kind.name]:
            holder: Any = obj.entry
            for part in parts[:-1]:
                holder = holder.get(part) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and parts[-1] in holder:
                yield (*obj.path, *parts)


_LITERAL_DEFAULT = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-[^}]")
_EMPTY_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # no default: set, but empty


def _secrets(ctx: Context) -> None:
    for path in secret_paths(ctx.doc, ctx.declared):
        value = _get(ctx.doc, path)
        raw = ctx.refs.get(path)
        empty = _EMPTY_REFERENCE.fullmatch(raw.strip()) if raw is not None and value == "" else None
        if empty is not None:
            ctx.error(path, f"environment variable {empty.group(1)} is set but empty: a secret "
                            "cannot be empty (a missing or misnamed pipeline secret?)")
        elif isinstance(value, str) and value and raw is None:
            ctx.warning(path, "secret written as a literal value; write it as ${ENV_VAR} so it stays "
                              "out of version control")
        elif raw is not None and _LITERAL_DEFAULT.search(raw):
            ctx.warning(path, "secret has a literal default in ${NAME:-default}; leave the default empty "
                              "(${NAME:-}) so the value stays out of version control")
