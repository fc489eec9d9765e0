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
from apimctl.kinds.capabilities import NestedIds
from apimctl.kinds.dialects import SPEC, Dialect
from apimctl.kinds.nested_writes import Catalog, Links
from apimctl.plans.model import Step, address

SECRET_PATHS = {k.name: tuple(sorted(k.compare.secret)) for k in kinds.KINDS if k.compare.secret}
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

    def add_tree(self, kind: Kind, obj: Mapping[str, Any], parent_key: str | None = None) -> None:
        """Index ``obj`` with its nested items (an endpoint's methods) and its child objects."""
        key = kind.key_of(str(obj.get(kind.identity)), parent_key)
        self.add(address(kind.name, key), obj)
        nested = kinds.capability(kind, NestedIds)
        for label, item_id, name in nested.nested(obj) if nested is not None else ():
            self.add(address(label, kinds.join_key(key, name)), {"id": item_id})
        for child in kinds.children_of(kind):
            for item in obj.get(child.manifest_key) or []:
                self.add_tree(child, item, key)

    def add_renames(self, steps: Iterable[Step]) -> None:
        """Index renamed objects (``previousNames``, a pinned ``id``) under their new names too,
        with everything under them: a plan entitling ``Service v2/Endpoint`` finds the endpoint
        that is still called ``Service/Endpoint`` until its own step runs. Parents come first, so
        an endpoint renamed inside a renamed service gets both names replaced."""
        renames = [s for s in steps if s.action == "update" and s.id]
        # the addresses of each updated object's id, kept up to date as names are added (one
        # pass over the index, not one per update: a plan updates thousands at 50,000 endpoints)
        wanted = {s.id for s in renames}
        addresses: dict[str, list[str]] = {}
        for addr, oid in self.ids.items():
            if oid in wanted:
                addresses.setdefault(oid, []).append(addr)
        for step in sorted(renames, key=lambda s: s.key.count("/")):
            prefix = f"{step.kind}:"
            olds = [a[len(prefix):] for a in addresses.get(step.id or "", [])
                    if a.startswith(prefix) and a != step.address]
            for old in olds:
                moved: dict[str, str] = {}
                under = RENAMED_WITH.get(step.kind, ())
                for addr, oid in self.ids.items():
                    kind, _, key = addr.partition(":")
                    if (kind == step.kind and key == old) or (kind in under and key.startswith(old + "/")):
                        moved.setdefault(f"{kind}:{step.key}{key[len(old):]}", oid)
                for addr, oid in moved.items():
                    if addr not in self.ids:
                        self.ids[addr] = oid
                        if oid in wanted:
                            addresses.setdefault(oid, []).append(addr)

    @classmethod
    def from_raw(cls, raw: Mapping[str, list[dict[str, Any]]]) -> LiveIndex:
        """The index of the raw lists ``apimctl.state.live.read_raw`` returns (keyed by kind)."""
        index = cls()
        for kind in kinds.TOP_LEVEL:
            for obj in raw.get(kind.name, []):
                index.add_tree(kind, obj)
        return index


# the kinds whose index keys start with the key of a kind (renaming it renames their keys)
def _under(kind: Kind) -> tuple[str, ...]:
    """The child kinds and nested item labels below ``kind``, at any depth."""
    out = tuple(kind.item_labels.values())
    for child in kinds.children_of(kind):
        out += (child.name, *_under(child))
    return out


RENAMED_WITH = {k.name: _under(k) for k in kinds.KINDS if _under(k)}


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


@dataclass
class BodyBuilder:
    """Builds API bodies from manifest-shaped objects (by the kind's ``ops.body``), resolving
    names to ids: it is the kinds' :class:`~apimctl.kinds.base.Resolver`."""

    index: LiveIndex
    secret_values: Mapping[str, str]
    env: Mapping[str, str]
    dialect: Dialect = SPEC

    def id(self, label: str, key: str) -> str:
        return self.index.id(address(label, key))

    def find(self, label: str, key: str) -> str | None:
        return self.index.ids.get(address(label, key))

    def body(self, step: Step, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The body of ``step``'s object: all of it (secrets resolved), or only ``fields``."""
        kind = kinds.get(step.kind)
        desired = resolve_secrets(step, step.desired or {}, self.secret_values, self.env) if fields is None else fields
        body = kind.ops.body(desired, self, step.key, kinds.split_key(kind, step.key)[0])
        return with_dialect_additions(kind, body, self.dialect)


def with_dialect_additions(kind: Kind, body: dict[str, Any], dialect: Dialect) -> dict[str, Any]:
    """``body`` (changed in place) with what the target dialect needs in the items of the
    kind's nested parts: links with their ``action`` where it is required (role permissions,
    SUPPLEMENT §10.7); catalog items with the dialect's own defaults of the fields they leave
    out (an error message's ``detailHeader``: not writing it means "the platform's default",
    SUPPLEMENT §10.5, which a listed message would otherwise lose)."""
    for name, write in kind.ops.writes.items():
        items = body.get(name)
        if not isinstance(items, list):
            continue
        if isinstance(write, Links) and write.action and write.action_required(dialect):
            body[name] = [{**i, "action": i.get("action", write.action)} if isinstance(i, dict) else i
                          for i in items]
        elif isinstance(write, Catalog):
            body[name] = [_filled(i, write, dialect) if isinstance(i, dict) else i for i in items]
    return body


def _filled(item: dict[str, Any], catalog: Catalog, dialect: Dialect) -> dict[str, Any]:
    extra = {k: v for k, v in catalog.filled(str(item.get(catalog.key)), dialect).items() if k not in item}
    return {**item, **extra} if extra else item


def env_mapping(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


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
        return None if name in kind.compare.nullable else dict(kind.nested[name])
    return copy.deepcopy(kind.defaults.get(name))

