"""Request bodies from manifest-shaped objects: names to ids, domains, secrets, defaults.

``apimctl.applying.writes`` builds every body it sends with these: ``Step.desired`` (manifest shape)
becomes the API's shape, with references by name turned into ids (:class:`LiveIndex`: the
live ids read before the apply plus the ids created during it), domain strings into
``{"address": ...}`` and ``${VAR}`` secret references into their values (from the plan, or
from the environment for a saved plan). ``apimctl.applying.run`` uses the secret resolution to
refuse, before any write, a plan whose variables are missing.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.kinds import Kind
from apimctl.plans.model import Step, address

# Keys of ``desired`` that are not API fields of the object itself.
META_KEYS = kinds.META_FIELDS
CHILD_KEYS = {k.name: tuple(kinds.get(c).manifest_key for c in k.children) for k in kinds.KINDS}
SECRET_PATHS = {k.name: tuple(sorted(k.secret)) for k in kinds.KINDS if k.secret}
# Collections inside an object that apply reconciles against a fresh read when they changed.
COLLECTIONS = {
    "service": ("roles",),
    "endpoint": ("methods",),
    "errorSet": ("errorMessages",),
    "plan": ("services", "roles"),
    "maintenanceEvent": ("endpoints",),
}
# Nested singletons written through their own sub-resource (the others go in the object's PUT).
SUBRESOURCES = {"service": ("securityProfile",), "endpoint": ("systemDomainAuthentication",)}

_REF = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class StepError(ApimctlError):
    """A step cannot be carried out (a reference that resolves to nothing, a missing variable)."""


# --------------------------------------------------------------------------- live ids


@dataclass
class LiveIndex:
    """Address → live id, for every object apply may reference; grows as creates succeed.

    Methods are indexed as ``method:Service/Endpoint/Method``; organizations as
    ``organization:Name``.
    """

    ids: dict[str, str] = field(default_factory=dict)

    def id(self, addr: str) -> str:
        try:
            return self.ids[addr]
        except KeyError:
            raise StepError(f"{addr} does not exist in the area (and is not created by this plan)") from None

    def add(self, addr: str, obj: Mapping[str, Any]) -> None:
        if obj.get("id") is not None:
            self.ids[addr] = str(obj["id"])

    def add_service_tree(self, svc: Mapping[str, Any]) -> None:
        name = svc["name"]
        self.add(address("service", name), svc)
        for ep in svc.get("endpoints") or []:
            self.add(address("endpoint", f"{name}/{ep['name']}"), ep)
            for m in ep.get("methods") or []:
                self.add(address("method", f"{name}/{ep['name']}/{m['name']}"), m)
        for es in svc.get("errorSets") or []:
            self.add(address("errorSet", f"{name}/{es['name']}"), es)

    def add_renames(self, steps: Iterable[Step]) -> None:
        """Index renamed objects (``previousNames``, a pinned ``id``) under their new names too,
        with everything under them: a plan entitling ``Service v2/Endpoint`` finds the endpoint
        that is still called ``Service/Endpoint`` until its own step runs. Parents come first, so
        an endpoint renamed inside a renamed service gets both names replaced."""
        renames = [s for s in steps if s.action == "update" and s.id]
        for step in sorted(renames, key=lambda s: s.key.count("/")):
            prefix = f"{step.kind}:"
            olds = [a[len(prefix):] for a, i in self.ids.items()
                    if i == step.id and a.startswith(prefix) and a != step.address]
            for old in olds:
                moved: dict[str, str] = {}
                under = RENAMED_WITH.get(step.kind, ())
                for addr, oid in self.ids.items():
                    kind, _, key = addr.partition(":")
                    if (kind == step.kind and key == old) or (kind in under and key.startswith(old + "/")):
                        moved.setdefault(f"{kind}:{step.key}{key[len(old):]}", oid)
                for addr, oid in moved.items():
                    self.ids.setdefault(addr, oid)

    @classmethod
    def from_raw(cls, raw: Mapping[str, list[dict[str, Any]]]) -> LiveIndex:
        """The index of the raw lists ``apimctl.state.live.read_raw`` returns (keyed by kind)."""
        index = cls()
        for svc in raw.get("service", []):
            index.add_service_tree(svc)
        for pkg in raw.get("package", []):
            index.add_package_tree(pkg)
        for role in raw.get("role", []):
            index.add(address("role", str(role.get("name"))), role)
        for dom in raw.get("domain", []):
            index.add(address("domain", str(dom.get("domain"))), dom)
        for ev in raw.get("maintenanceEvent", []):
            index.add(address("maintenanceEvent", str(ev.get("name"))), ev)
        return index

    def add_package_tree(self, pkg: Mapping[str, Any]) -> None:
        self.add(address("package", pkg["name"]), pkg)
        for p in pkg.get("plans") or []:
            self.add(address("plan", f"{pkg['name']}/{p['name']}"), p)


# the kinds whose index keys start with the key of a kind (renaming it renames their keys)
RENAMED_WITH = {"service": ("endpoint", "errorSet", "method"), "endpoint": ("method",),
                "package": ("plan",)}
CREATE_FIELDS = {"endpoint": {"fields": "id,name,methods.id,methods.name"}}
SERVICE_FIELDS = ("id,name,updated,revisionNumber,endpoints.id,endpoints.name,endpoints.updated,"
                  "endpoints.methods.id,endpoints.methods.name,errorSets.id,errorSets.name,errorSets.updated")
PACKAGE_FIELDS = "id,name,updated,plans.id,plans.name,plans.updated"


# --------------------------------------------------------------------------- secrets


def substitute(text: str, env: Mapping[str, str], where: str) -> str:
    """Resolve ``${VAR}`` / ``${VAR:-default}``; ``$${`` stays a literal ``${``."""

    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$${":
            return "${"
        name, default = m.group(1), m.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise StepError(f"{where}: environment variable {name} is not set (it holds a secret value)")

    return _REF.sub(repl, text)


def path_value(obj: Any, dotted: str) -> Any:
    """The value at a dotted path of nested dicts, or ``None``."""
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _set_path(obj: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for part in parts[:-1]:
        nxt = obj.get(part)
        if not isinstance(nxt, dict):
            return
        obj = nxt
    obj[parts[-1]] = value


def resolve_secrets(step: Step, desired: dict[str, Any], secret_values: Mapping[str, str],
                    env: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``desired`` with its secret fields holding real values."""
    out = copy.deepcopy(desired)
    for path in SECRET_PATHS.get(step.kind, ()):
        value = path_value(out, path)
        if not isinstance(value, str):
            continue
        key = f"{step.address}#{path}"
        if key in secret_values:
            _set_path(out, path, secret_values[key])
        elif value == "(sensitive)":  # a redacted rendering, never a value to write
            raise StepError(f"{step.action} {step.address}: {path}: the plan holds no value for "
                            "this secret; write it as a ${VAR} reference and plan again")
        else:
            _set_path(out, path, substitute(value, env, f"{step.action} {step.address}: {path}"))
    return out


# --------------------------------------------------------------------------- bodies


def domains_body(values: Iterable[Any]) -> list[dict[str, Any]]:
    return [v if isinstance(v, dict) else {"address": v} for v in values or []]


@dataclass
class BodyBuilder:
    """Builds API bodies from manifest-shaped objects, resolving names to ids."""

    index: LiveIndex
    secret_values: Mapping[str, str]
    env: Mapping[str, str]

    def own_fields(self, step: Step, desired: Mapping[str, Any]) -> dict[str, Any]:
        skip = META_KEYS | set(CHILD_KEYS.get(step.kind, ())) | set(COLLECTIONS.get(step.kind, ()))
        return {k: copy.deepcopy(v) for k, v in desired.items() if k not in skip}

    def service(self, step: Step) -> dict[str, Any]:
        body = self.own_fields(step, step.desired or {})
        if (step.desired or {}).get("roles"):
            body["roles"] = self.roles((step.desired or {})["roles"])
        return body

    def endpoint(self, step: Step, service_name: str) -> dict[str, Any]:
        desired = resolve_secrets(step, step.desired or {}, self.secret_values, self.env)
        body = self.own_fields(step, desired)
        self.endpoint_refs(body, service_name)
        methods = (step.desired or {}).get("methods")
        if methods is not None:
            body["methods"] = [dict(m) for m in methods]
        return body

    def roles(self, names: list[str] | None) -> list[dict[str, Any]]:
        """Role permissions of a new service or plan, by role id (the action is the default)."""
        return [{"id": self.index.id(address("role", n)), "name": n} for n in names or []]

    def endpoint_refs(self, body: dict[str, Any], service_name: str) -> None:
        for key in ("publicDomains", "systemDomains"):
            if key in body:
                body[key] = domains_body(body[key])
        if "errorSet" in body:
            name = body["errorSet"]
            if name is None:
                body["errorSet"] = None
            else:  # by name: the server resolves it within the service, even in a nested create
                found = self.index.ids.get(address("errorSet", f"{service_name}/{name}"))
                body["errorSet"] = {"id": found, "name": name} if found else {"name": name}

    def error_set(self, step: Step) -> dict[str, Any]:
        body = self.own_fields(step, step.desired or {})
        messages = (step.desired or {}).get("errorMessages")
        if messages is not None:
            body["errorMessages"] = [dict(m) for m in messages]
        return body

    def package(self, step: Step) -> dict[str, Any]:
        return self.own_fields(step, step.desired or {})

    def plan(self, step: Step) -> dict[str, Any]:
        body = self.own_fields(step, step.desired or {})
        services = (step.desired or {}).get("services")
        if services is not None:
            body["services"] = self.entitlements(services)
        if (step.desired or {}).get("roles"):
            body["roles"] = self.roles((step.desired or {})["roles"])
        return body

    def entitlements(self, services: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for svc in services:
            sname = svc["name"]
            eps = []
            for ep in svc.get("endpoints") or []:
                ep = {"name": ep} if isinstance(ep, str) else ep
                ekey = f"{sname}/{ep['name']}"
                methods = [{"id": self.index.id(address("method", f"{ekey}/{m if isinstance(m, str) else m['name']}"))}
                           for m in ep.get("methods") or []]
                eps.append({"id": self.index.id(address("endpoint", ekey)), "name": ep["name"],
                            "undefinedMethodsAllowed": ep.get("undefinedMethodsAllowed", True),
                            "methods": methods})
            out.append({"id": self.index.id(address("service", sname)), "name": sname, "endpoints": eps})
        return out

    def role(self, step: Step) -> dict[str, Any]:
        body = self.own_fields(step, step.desired or {})
        if "organization" in body:
            org = body["organization"]
            body["organization"] = None if org is None else {"id": self.index.id(address("organization", org))}
        return body

    def maintenance_event(self, step: Step) -> dict[str, Any]:
        body = self.own_fields(step, step.desired or {})
        endpoints = (step.desired or {}).get("endpoints")
        if endpoints is not None:
            body["endpoints"] = [{"id": self.index.id(address("endpoint", f"{e['service']}/{e['endpoint']}"))}
                                 for e in endpoints]
        return body

    def domain(self, step: Step) -> dict[str, Any]:
        return {"domain": (step.desired or {}).get("domain", step.key)}


def method_body(method: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in method.items() if k != "responseFilters"}


def env_mapping(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def service_name(step: Step) -> str:
    """The parent service's name of an endpoint or error set step."""
    return kinds.split_key(kinds.get(step.kind), step.key)[0] or ""


def changed_fields(step: Step) -> list[str]:
    """Top-level fields an update changes (``cors.maxAge`` -> ``cors``, ``methods[x].y`` -> ``methods``)."""
    out: list[str] = []
    for change in step.changes:
        top = re.split(r"[.\[]", change.path, maxsplit=1)[0]
        if top and top not in out:
            out.append(top)
    return out


def full_nested(kind: Kind, name: str, value: Any) -> Any:
    """A nested singleton with its defaults filled in (``None`` stays ``None``)."""
    if value is None:
        return None
    return {**copy.deepcopy(dict(kind.nested.get(name, {}))), **copy.deepcopy(value)}


def default_of(kind: Kind, name: str) -> Any:
    if name in kind.nested:
        return None if name in kind.nullable else dict(kind.nested[name])
    return copy.deepcopy(kind.defaults.get(name))

