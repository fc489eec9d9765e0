"""Checks beyond the schema, on the merged and overlaid configuration.

Called by the pipeline once every object has passed (or failed) the schema. The checks are
written defensively: an object that failed the schema is still looked at where its shape
allows, and never causes an exception. What is checked: identities unique in their list and
ids unique per kind; ``previousNames`` consistent; references resolve (an endpoint's error
set, role names, plan entitlements, maintenance-event endpoints; names inside a nested list the
manifests omit, which is left alone on the live side, are not checked); ``requestPathAlias`` plus
public domain unique in the area; endpoint host names under a declared domain (a warning when
the manifests do not manage domains); API-key versus OAuth rules; maintenance windows that
end after they start; secrets written as literals or with a literal default (a warning).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apimctl.manifests.identity import KIND_LABEL, NESTED, TOP_LEVEL, identity
from apimctl.manifests.model import JsonPath, Position, Problems

_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")

SECRET_FIELDS: tuple[tuple[str, ...], ...] = (
    ("services", "*", "endpoints", "*", "systemDomainCredentialSecret"),
    ("services", "*", "endpoints", "*", "systemDomainAuthentication", "password"),
)
"""Path patterns (``"*"`` = any index) of the fields that hold secrets."""


@dataclass
class Context:
    """The merged document with what the checks need to report located problems."""

    doc: dict[str, Any]
    positions: dict[JsonPath, Position]
    refs: dict[JsonPath, str]
    display: Callable[[JsonPath], str]
    problems: Problems

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
    for check in (_unique_identities, _unique_ids, _error_set_refs, _role_refs, _entitlements,
                  _maintenance_events, _path_aliases, _domains, _authentication, _secrets):
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


def _endpoints(ctx: Context) -> Iterator[tuple[JsonPath, dict[str, Any], dict[str, Any]]]:
    """(path, endpoint, service) for every endpoint."""
    for s, service in _dicts(ctx.doc.get("services")):
        for e, endpoint in _dicts(service.get("endpoints")):
            yield ("services", s, "endpoints", e), endpoint, service


def _keyed_lists(ctx: Context) -> Iterator[tuple[JsonPath, list[Any], str]]:
    """Every keyed list (top-level and nested) with its identity field."""
    stack: list[tuple[JsonPath, tuple[str, ...], Any]] = [((k,), (k,), ctx.doc.get(k)) for k in TOP_LEVEL]
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


def _names(items: Any, field: str = "name") -> dict[str, int]:
    out: dict[str, int] = {}
    if isinstance(items, list):
        for index, item in enumerate(items):
            name = identity(item, field)
            if name is not None:
                out.setdefault(name, index)
    return out


_MAX_OTHERS = 5


def _report_duplicates(ctx: Context, seen: Mapping[Any, list[JsonPath]], describe: Callable[[Any], str]) -> None:
    """Every occurrence of a duplicated key gets a problem naming the other places."""
    for key, paths in seen.items():
        if len(paths) < 2:
            continue
        for path in paths:
            # a name repeated a thousand times lists a few places, not a thousand each
            others = [str(ctx.where(p)) for p in itertools.islice((p for p in paths if p != path), _MAX_OTHERS)]
            if len(paths) - 1 > _MAX_OTHERS:
                others.append(f"and {len(paths) - 1 - _MAX_OTHERS} more")
            ctx.error(path, f"{describe(key)}: also at {', '.join(others)}")


# --- identities, ids, previous names ----------------------------------------------------------


def _unique_identities(ctx: Context) -> None:
    for path, items, field in _keyed_lists(ctx):
        seen: dict[str, list[JsonPath]] = {}
        previous: dict[str, list[JsonPath]] = {}
        for index, item in enumerate(items):
            name = identity(item, field)
            if name is None:
                continue
            key = name.lower() if field == "domain" else name
            seen.setdefault(key, []).append((*path, index) if isinstance(item, str) else (*path, index, field))
            if isinstance(item, dict):
                _previous_names(ctx, (*path, index), item, previous)
        label = _label(path)
        _report_duplicates(ctx, seen, functools.partial("duplicate {} '{}'".format, label))
        for name, paths in previous.items():
            if name in seen:
                for p in paths:
                    ctx.error(p, f"previous name '{name}' is the name of another {label} "
                                 f"(at {ctx.where(seen[name][0])})")
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
    for path, items, _ in _keyed_lists(ctx):
        pattern = tuple("*" if isinstance(p, int) else p for p in path)
        for index, item in _dicts(items):
            pinned = _str(item, "id")
            if pinned is not None and pattern[-1] != "errorMessages":
                ids.setdefault(pattern, {}).setdefault(pinned, []).append((*path, index, "id"))
    for pattern, seen in ids.items():
        label = KIND_LABEL.get(pattern[-1], "object")
        _report_duplicates(ctx, seen, functools.partial("id '{1}' is pinned by two {0}s".format, label))


# --- references ------------------------------------------------------------------------------


def _error_set_refs(ctx: Context) -> None:
    for path, endpoint, service in _endpoints(ctx):
        wanted = _str(endpoint, "errorSet")
        if wanted is None or not isinstance(service.get("errorSets"), list):
            continue
        declared = _names(service.get("errorSets"))
        if wanted not in declared:
            listed = ", ".join(declared) or "none"
            ctx.error((*path, "errorSet"), f"unknown error set '{wanted}' (this service declares: {listed})")


def _role_refs(ctx: Context) -> None:
    declared = _names(ctx.doc.get("roles"))
    owners: list[JsonPath] = [("services", s) for s, _ in _dicts(ctx.doc.get("services"))]
    for p, package in _dicts(ctx.doc.get("packages")):
        owners += [("packages", p, "plans", n) for n, _ in _dicts(package.get("plans"))]
    for owner in owners:
        obj = _get(ctx.doc, owner)
        for index, role in _strings(obj.get("roles") if isinstance(obj, dict) else None):
            if role not in declared:
                ctx.error((*owner, "roles", index), f"unknown role '{role}'; declare it under roles")


def _get(doc: Any, path: JsonPath) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _services(ctx: Context) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for _, service in _dicts(ctx.doc.get("services")):
        name = _str(service, "name")
        if name is not None:
            out.setdefault(name, service)
    return out


def _endpoint_of(services: dict[str, dict[str, Any]], service: str, endpoint: str) -> dict[str, Any] | None:
    for _, candidate in _dicts(services.get(service, {}).get("endpoints")):
        if candidate.get("name") == endpoint:
            return candidate
    return None


def _entitlements(ctx: Context) -> None:
    services = _services(ctx)
    for p, package in _dicts(ctx.doc.get("packages")):
        for n, plan in _dicts(package.get("plans")):
            for s, entitled in _dicts(plan.get("services")):
                path = ("packages", p, "plans", n, "services", s)
                name = _str(entitled, "name")
                if name is None:
                    continue
                if name not in services:
                    ctx.error((*path, "name"), f"unknown service '{name}'; declare it under services")
                    continue
                refs = entitled.get("endpoints")
                for e, ref in enumerate(refs if isinstance(refs, list) else []):  # else: a schema error
                    _entitled_endpoint(ctx, services, name, ref, (*path, "endpoints", e))


def _manages(obj: dict[str, Any] | None, key: str) -> bool:
    """Whether ``obj`` declares the nested list ``key``; an omitted one is left alone, so the live
    area may hold objects the manifests do not show, and names in it cannot be checked offline."""
    return obj is not None and isinstance(obj.get(key), list)


def _entitled_endpoint(ctx: Context, services: dict[str, dict[str, Any]], service: str, ref: Any,
                       path: JsonPath) -> None:
    name = identity(ref, "name")
    if name is None or not _manages(services.get(service), "endpoints"):
        return
    endpoint = _endpoint_of(services, service, name)
    if endpoint is None:
        ctx.error(path if isinstance(ref, str) else (*path, "name"),
                  f"unknown endpoint '{service}/{name}'; declare it under the service's endpoints")
        return
    if not _manages(endpoint, "methods"):
        return
    methods = _names(endpoint.get("methods"))
    for m, method in _strings(ref.get("methods") if isinstance(ref, dict) else None):
        if method not in methods:
            ctx.error((*path, "methods", m), f"unknown method '{method}' of endpoint '{service}/{name}'")


def _maintenance_events(ctx: Context) -> None:
    services = _services(ctx)
    for i, event in _dicts(ctx.doc.get("scheduledMaintenanceEvents")):
        path: JsonPath = ("scheduledMaintenanceEvents", i)
        _window(ctx, path, event)
        seen: dict[tuple[str, str], list[JsonPath]] = {}
        for e, ref in _dicts(event.get("endpoints")):
            service, name = _str(ref, "service"), _str(ref, "endpoint")
            if service is None or name is None:
                continue
            seen.setdefault((service, name), []).append((*path, "endpoints", e))
            if service not in services:
                ctx.error((*path, "endpoints", e, "service"), f"unknown service '{service}'; declare it under services")
            elif _manages(services[service], "endpoints") and _endpoint_of(services, service, name) is None:
                ctx.error((*path, "endpoints", e, "endpoint"), f"unknown endpoint '{service}/{name}'")
        _report_duplicates(ctx, seen, lambda k: f"endpoint '{k[0]}/{k[1]}' is listed twice")


def _window(ctx: Context, path: JsonPath, event: dict[str, Any]) -> None:
    times: dict[str, datetime] = {}
    for key in ("startDateTime", "endDateTime"):
        text = _str(event, key)
        if text is None or not _DATETIME.match(text):
            continue  # the schema reports the shape
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            ctx.error((*path, key), f"not a valid datetime: {exc}")
            continue
        if parsed.tzinfo is not None:
            times[key] = parsed
    start, end = times.get("startDateTime"), times.get("endDateTime")
    if start is not None and end is not None and start >= end:
        ctx.error((*path, "endDateTime"), f"must be after startDateTime ({event['startDateTime']})")


# --- endpoints: addresses, domains, authentication, secrets ---------------------------------


def _path_aliases(ctx: Context) -> None:
    seen: dict[tuple[str, str], list[JsonPath]] = {}
    for path, endpoint, _ in _endpoints(ctx):
        alias = _str(endpoint, "requestPathAlias")
        if alias is None:
            continue
        for _, host in _strings(endpoint.get("publicDomains")):
            seen.setdefault((host.lower(), alias), []).append((*path, "requestPathAlias"))
    _report_duplicates(ctx, seen, lambda k: f"requestPathAlias '{k[1]}' on {k[0]} is used by two endpoints")


def _covered(host: str, domains: list[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in domains)


def _domains(ctx: Context) -> None:
    managed = "domains" in ctx.doc
    declared = [d.lower().rstrip(".") for _, d in _domain_names(ctx.doc.get("domains"))]
    warned: set[str] = set()
    for path, endpoint, _ in _endpoints(ctx):
        for key in ("publicDomains", "systemDomains"):
            for index, host in _strings(endpoint.get(key)):
                if _covered(host, declared):
                    continue
                if managed:
                    listed = ", ".join(declared) or "none"
                    ctx.error((*path, key, index), f"{host} is not under any declared domain (declared: {listed})")
                elif host.lower() not in warned:
                    warned.add(host.lower())
                    ctx.warning((*path, key, index), f"domains are not managed in these manifests: {host} "
                                "must be under an active domain of the area")


def _domain_names(value: Any) -> Iterator[tuple[int, str]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            name = identity(item, "domain")
            if name is not None:
                yield index, name


def _authentication(ctx: Context) -> None:
    for path, endpoint, service in _endpoints(ctx):
        kind = endpoint.get("requestAuthenticationType", "apiKey")
        if kind == "oauth":
            if endpoint.get("apiKeyValueLocations"):
                ctx.error((*path, "apiKeyValueLocations"), "not allowed when requestAuthenticationType is oauth")
            _oauth_profile(ctx, path, endpoint, service)
        elif endpoint.get("oauthGrantTypes"):
            ctx.error((*path, "oauthGrantTypes"), "only allowed when requestAuthenticationType is oauth")


def _oauth_profile(ctx: Context, path: JsonPath, endpoint: dict[str, Any], service: dict[str, Any]) -> None:
    profile = service.get("securityProfile")
    if not isinstance(profile, dict) or "oauth" not in profile:
        return
    oauth = profile["oauth"]
    if oauth is None:
        ctx.error((*path, "requestAuthenticationType"),
                  "oauth needs the service's OAuth settings, but its securityProfile.oauth is null")
        return
    allowed = oauth.get("grantTypes") if isinstance(oauth, dict) else None
    if not isinstance(allowed, list):
        return
    for index, grant in _strings(endpoint.get("oauthGrantTypes")):
        if grant not in allowed:
            ctx.error((*path, "oauthGrantTypes", index),
                      f"grant type '{grant}' is not enabled in the service's securityProfile.oauth.grantTypes")


def secret_paths(doc: dict[str, Any]) -> Iterator[JsonPath]:
    """The paths of the secret fields present in ``doc``."""
    for s, service in _dicts(doc.get("services")):
        for e, endpoint in _dicts(service.get("endpoints")):
            base: JsonPath = ("services", s, "endpoints", e)
            if "systemDomainCredentialSecret" in endpoint:
                yield (*base, "systemDomainCredentialSecret")
            auth = endpoint.get("systemDomainAuthentication")
            if isinstance(auth, dict) and "password" in auth:
                yield (*base, "systemDomainAuthentication", "password")


_LITERAL_DEFAULT = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-[^}]")


def _secrets(ctx: Context) -> None:
    for path in secret_paths(ctx.doc):
        value = _get(ctx.doc, path)
        raw = ctx.refs.get(path)
        if isinstance(value, str) and value and raw is None:
            ctx.warning(path, "secret written as a literal value; write it as ${ENV_VAR} so it stays "
                              "out of version control")
        elif raw is not None and _LITERAL_DEFAULT.search(raw):
            ctx.warning(path, "secret has a literal default in ${NAME:-default}; leave the default empty "
                              "(${NAME:-}) so the value stays out of version control")
