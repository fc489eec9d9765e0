"""Names an export chooses: which top-level kinds it writes, the environment variables its
secret references name, and the files of the ``per-service`` layout.

Names are derived from the names of the objects, never from counters or listing order, so a
variable or a file keeps naming the same object whatever else the area holds.
:mod:`apimctl.export.objects` names the secrets, :mod:`apimctl.export.layout` the files and
:mod:`apimctl.export.area` resolves ``--kinds`` (as does ``apimctl export`` itself, to say
which kinds it adds).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.kinds import Kind

TOP_ORDER = tuple(k.manifest_key for k in kinds.TOP_LEVEL)
# what an export without ``--kinds`` writes: every kind but the read-only ones, which come
# with the objects that refer to them (:func:`apimctl.export.objects.build_documents`)
DEFAULT_ORDER = tuple(k.manifest_key for k in kinds.TOP_LEVEL if not k.read_only)
_SLUG_LENGTH = 60
# the kind the ``per-service`` layout writes one object a file (``ROLES.file_per_object``)
_PER_OBJECT = kinds.ROLES.file_per_object


# --- which kinds ------------------------------------------------------------------------------


def resolve_kinds(requested: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The top-level manifest keys to export, and those added because others refer to them.

    ``requested`` holds manifest keys (``services``) or kind names (``service``); ``None`` or
    empty means every kind. Plans refer to services and roles, services to roles, maintenance
    events to services, so asking for ``packages`` also exports ``services`` and ``roles``:
    the output must validate, and references to undeclared objects do not.
    """
    if not requested:
        return list(DEFAULT_ORDER), []
    chosen = _manifest_keys(requested)
    needed = _with_references(chosen)
    ordered = [k for k in TOP_ORDER if k in needed]
    return ordered, [k for k in ordered if k not in chosen]


def _manifest_keys(requested: Sequence[str]) -> set[str]:
    """The top-level manifest keys ``requested`` names; an unknown one is an error."""
    chosen: set[str] = set()
    for text in requested:
        kind = kinds.by_manifest_key(text) or kinds.BY_NAME.get(text)
        if kind is None or not kind.top_level:
            known = ", ".join(TOP_ORDER)
            raise ApimctlError(f"--kinds: unknown kind {text!r} (known: {known})")
        chosen.add(kind.manifest_key)
    return chosen


def _with_references(chosen: set[str]) -> set[str]:
    """``chosen`` and every top-level manifest key they refer to, directly or not."""
    needed = set(chosen)
    todo = list(chosen)
    while todo:
        for dep in _references_of(todo.pop()):
            if dep not in needed:
                needed.add(dep)
                todo.append(dep)
    return needed


def _references_of(manifest_key: str) -> set[str]:
    """Top-level manifest keys the objects under ``manifest_key`` (and their children) name;
    host names aside (a host under no declared domain is only a warning)."""
    kind = kinds.by_manifest_key(manifest_key)
    assert kind is not None
    out: set[str] = set()
    for k in (kind, *kinds.children_of(kind)):
        for dep in k.depends_on:
            if _by_host_only(k, dep):
                continue
            target = kinds.get(dep)
            while target.parent is not None:
                target = kinds.get(target.parent)
            if target is not kind:
                out.add(target.manifest_key)
    return out


def _by_host_only(kind: Kind, dep: str) -> bool:
    """Whether ``kind`` refers to ``dep`` by host names alone (endpoints to domains)."""
    scopes = {r.scope for r in kind.references if r.kind == dep}
    return scopes == {"host"}


# --- secret variables ------------------------------------------------------------------------


def variable_names(requests: Iterable[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Environment variable names for secret references, from the names of what holds them.

    ``("Weather", "Forecast", "BACKEND_SECRET")`` gives ``WEATHER_FORECAST_BACKEND_SECRET``.
    Names that fold to the same variable (``A B`` and ``a-b``) all get a suffix derived from
    their own parts rather than a counter, so a variable always names the same endpoint:
    adding or removing another service never hands an existing secret to another backend.
    """
    groups: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for parts in dict.fromkeys(requests):
        groups[_variable_base(parts)].append(parts)
    out: dict[tuple[str, ...], str] = {}
    for base, members in groups.items():
        if len(members) == 1:
            out[members[0]] = base
        else:
            out.update({parts: f"{base}_{_digest(parts).upper()}" for parts in members})
    return _unique(out, lambda parts, name: f"{name}_{_digest(parts, 16).upper()}")


def variable_part(text: str) -> str:
    """What ``text`` (a name) contributes to a secret's variable: ``DEV Payments`` ->
    ``DEV_PAYMENTS``."""
    return _env_part(text)


def _variable_base(parts: tuple[str, ...]) -> str:
    base = "_".join(p for p in (_env_part(x) for x in parts) if p) or "SECRET"
    return "_" + base if base[0].isdigit() else base


def _ascii_fold(text: str) -> str:
    """``Ünïcode`` -> ``Unicode``: accents dropped, characters without an ASCII form removed."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _env_part(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", _ascii_fold(text).upper()).strip("_")


def _digest(parts: tuple[str, ...], size: int = 8) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:size]


def _unique(names: dict[tuple[str, ...], str],
            widen: Callable[[tuple[str, ...], str], str]) -> dict[tuple[str, ...], str]:
    """``names`` with any value still shared (a derived name equal to another plain one,
    which takes a name crafted to look like a digest) widened until none is."""
    for _ in range(3):
        seen: dict[str, int] = defaultdict(int)
        for name in names.values():
            seen[name] += 1
        clashes = {parts for parts, name in names.items() if seen[name] > 1}
        if not clashes:
            break
        names = {parts: widen(parts, name) if parts in clashes else name
                 for parts, name in names.items()}
    return names


# --- service files ---------------------------------------------------------------------------


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", _ascii_fold(name).lower()).strip("-")
    return slug[:_SLUG_LENGTH].rstrip("-")


def service_file_names(names: Iterable[str]) -> dict[str, str]:
    """The per-service file of each service name: ``service-<slug>.yaml`` (see
    :func:`object_file_names`)."""
    return object_file_names(_PER_OBJECT.name, names)


def object_file_names(kind_name: str, names: Iterable[str]) -> dict[str, str]:
    """The file of each object of a kind written one object a file (``ROLES.file_per_object``):
    ``<kind>-<slug>.yaml`` (``service-weather.yaml``).

    Names that slug alike (``A B``, ``a/b``, ``a-b``), and names with nothing left to slug
    (``天气``), all get a suffix derived from the name itself, never a counter, so a file
    always holds the same service whatever else the area contains.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for name in dict.fromkeys(names):
        groups[_slug(name)].append(name)
    out: dict[str, str] = {}
    for slug, members in groups.items():
        for name in members:
            if slug and len(members) == 1:
                out[name] = f"{kind_name}-{slug}.yaml"
            else:
                stem = "-".join(p for p in (kind_name, slug, _digest((name,))) if p)
                out[name] = f"{stem}.yaml"
    widened = _unique({(n,): f for n, f in out.items()},
                      lambda parts, f: f.removesuffix(".yaml") + f"-{_digest(parts, 16)}.yaml")
    return {parts[0]: f for parts, f in widened.items()}
