"""The plan: a value describing what apply will do.

``plan`` builds a :class:`Plan` (see ``apimctl.planning.build`` for how); ``apply`` executes exactly
it; ``render`` prints it; ``--out`` saves it with :meth:`Plan.to_json`. Nothing here talks to
the network or prints. Secret values never enter the serialised form: steps carry secrets as
``${VAR}`` references, and resolved values live only in :attr:`Plan.secret_values`, which is
not serialised (a saved plan resolves them again from the environment when applied).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

FORMAT_VERSION = "1.0"

Action = Literal["create", "update", "delete"]
ACTIONS: tuple[Action, ...] = ("create", "update", "delete")


def address(kind: str, key: str) -> str:
    """The stable address of an object: ``kind:key`` (``endpoint:Weather/Forecast``)."""
    return f"{kind}:{key}"


@dataclass(frozen=True)
class Change:
    """One field-level change. ``path`` is dotted within the object (``cors.maxAge``)."""

    path: str
    before: Any
    after: Any
    sensitive: bool = False

    def to_json(self) -> dict[str, Any]:
        if self.sensitive:
            return {"path": self.path, "before": "(sensitive)", "after": "(sensitive)", "sensitive": True}
        return {"path": self.path, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Change:
        sensitive = bool(data.get("sensitive", False))
        return cls(data["path"], None if sensitive else data.get("before"),
                   None if sensitive else data.get("after"), sensitive)


@dataclass(frozen=True)
class Step:
    """One write: create, update or delete of one object of one kind.

    ``desired`` is the object as the manifests declare it (manifest shape: references by
    name, secrets as ``${VAR}`` references, without its child kinds); ``None`` for deletes.
    ``parent`` is the parent's address for nested kinds; ``depends_on`` lists addresses of
    steps that must succeed first.
    """

    action: Action
    kind: str
    key: str
    id: str | None = None
    parent: str | None = None
    parent_id: str | None = None
    changes: tuple[Change, ...] = ()
    depends_on: tuple[str, ...] = ()
    desired: dict[str, Any] | None = None

    @property
    def address(self) -> str:
        return address(self.kind, self.key)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "kind": self.kind,
            "key": self.key,
            "address": self.address,
            "id": self.id,
            "parent": self.parent,
            "parent_id": self.parent_id,
            "changes": [c.to_json() for c in self.changes],
            "depends_on": list(self.depends_on),
            "desired": self.desired,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        return cls(
            action=data["action"],
            kind=data["kind"],
            key=data["key"],
            id=data.get("id"),
            parent=data.get("parent"),
            parent_id=data.get("parent_id"),
            changes=tuple(Change.from_json(c) for c in data.get("changes", [])),
            depends_on=tuple(data.get("depends_on", [])),
            desired=data.get("desired"),
        )


@dataclass(frozen=True)
class Fingerprint:
    """What a touched live object looked like when planned (for stale-plan detection)."""

    kind: str
    key: str
    id: str
    updated: str | None = None
    revision: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "id": self.id,
                "updated": self.updated, "revision": self.revision}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fingerprint:
        return cls(data["kind"], data["key"], data["id"], data.get("updated"), data.get("revision"))


@dataclass(frozen=True)
class Unmanaged:
    """A live top-level object no manifest declares: listed, left alone unless pruned."""

    kind: str
    key: str
    id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "id": self.id}


@dataclass
class Plan:
    """An ordered list of steps plus what is needed to apply them safely later."""

    steps: list[Step] = field(default_factory=list)
    unmanaged: list[Unmanaged] = field(default_factory=list)
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)
    ignored: list[dict[str, str]] = field(default_factory=list)  # {target, reason}
    target: str = ""
    warnings: list[str] = field(default_factory=list)
    secret_values: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def has_changes(self) -> bool:
        return bool(self.steps)

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {a: 0 for a in ACTIONS}
        for step in self.steps:
            counts[step.action] += 1
        counts["unmanaged"] = len(self.unmanaged)
        return counts

    def step(self, addr: str) -> Step | None:
        return next((s for s in self.steps if s.address == addr), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "target": self.target,
            "summary": self.summary(),
            "steps": [s.to_json() for s in self.steps],
            "unmanaged": [u.to_json() for u in self.unmanaged],
            "fingerprints": {a: f.to_json() for a, f in sorted(self.fingerprints.items())},
            "ignored": self.ignored,
            "warnings": self.warnings,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        """The plan saved by :meth:`dumps`; ``PlanError`` naming every place where ``data``
        is not one (a truncated, hand-edited or foreign file never reaches apply)."""
        from apimctl.errors import PlanError

        version = str(data.get("format_version", "")) if isinstance(data, dict) else ""
        if version.split(".")[0] != FORMAT_VERSION.split(".")[0]:
            raise PlanError(f"saved plan has format_version {version!r}; this apimctl reads {FORMAT_VERSION}")
        problems = saved_plan_problems(data)
        if problems:
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise PlanError("not a valid saved plan: " + "; ".join(problems[:5]) + more)
        return cls(
            steps=[Step.from_json(s) for s in data.get("steps", [])],
            unmanaged=[Unmanaged(**u) for u in data.get("unmanaged", [])],
            fingerprints={a: Fingerprint.from_json(f) for a, f in data.get("fingerprints", {}).items()},
            ignored=list(data.get("ignored", [])),
            target=str(data.get("target", "")),
            warnings=list(data.get("warnings", [])),
        )


def saved_plan_problems(data: Any) -> list[str]:
    """Every place where ``data`` does not have the shape :meth:`Plan.to_json` writes, as
    ``path: what`` (``steps[2].kind: unknown kind 'x'``); empty when it is a plan apply can
    execute: known kinds and actions, unique addresses, ``depends_on`` and ``parent`` naming
    steps or objects of the plan, ids for updates and deletes, a ``desired`` object for creates.
    """
    from apimctl import kinds

    if not isinstance(data, dict):
        return [f"expected a JSON object, got {_json_type(data)}"]
    problems: list[str] = []

    def expect(where: str, value: Any, types: tuple[type, ...], what: str) -> bool:
        if isinstance(value, types) and not isinstance(value, bool):
            return True
        problems.append(f"{where}: expected {what}, got {_json_type(value)}")
        return False

    steps: list[Any] = data.get("steps") or []
    if not expect("steps", data.get("steps"), (list,), "an array"):
        steps = []
    for name in ("unmanaged", "ignored", "warnings"):
        expect(name, data.get(name, []), (list,), "an array")
    expect("target", data.get("target", ""), (str,), "a string")
    fingerprints = data.get("fingerprints", {})
    if expect("fingerprints", fingerprints, (dict,), "an object"):
        for addr, fp in fingerprints.items():
            where = f"fingerprints[{addr!r}]"
            if expect(where, fp, (dict,), "an object"):
                for key in ("kind", "key", "id"):
                    expect(f"{where}.{key}", fp.get(key), (str,), "a string")
    seen: set[str] = set()
    for i, step in enumerate(steps):
        where = f"steps[{i}]"
        if not expect(where, step, (dict,), "an object"):
            continue
        action, kind, key = step.get("action"), step.get("kind"), step.get("key")
        if action not in ACTIONS:
            problems.append(f"{where}.action: expected one of {', '.join(ACTIONS)}, got {action!r}")
        if kind not in kinds.BY_NAME:
            problems.append(f"{where}.kind: unknown kind {kind!r} (known: {', '.join(kinds.BY_NAME)})")
        if expect(f"{where}.key", key, (str,), "a string") and not key:
            problems.append(f"{where}.key: must not be empty")
        addr = address(str(kind), str(key))
        if "address" in step and step["address"] != addr:
            problems.append(f"{where}.address: {step['address']!r} does not match kind and key ({addr!r})")
        if addr in seen:
            problems.append(f"{where}: a second step for {addr}")
        seen.add(addr)
        step_id = step.get("id")
        if action in ("update", "delete"):
            if not isinstance(step_id, str) or not step_id:
                problems.append(f"{where}.id: an {action} needs the live object's id, got {_json_type(step_id)}")
        elif step_id is not None:
            expect(f"{where}.id", step_id, (str,), "a string or null")
        for name in ("parent", "parent_id"):
            if step.get(name) is not None:
                expect(f"{where}.{name}", step.get(name), (str,), "a string or null")
        desired = step.get("desired")
        if action == "create":
            expect(f"{where}.desired", desired, (dict,), "the object to create")
        elif desired is not None:
            expect(f"{where}.desired", desired, (dict,), "an object or null")
        changes = step.get("changes", [])
        if expect(f"{where}.changes", changes, (list,), "an array"):
            for j, change in enumerate(changes):
                if expect(f"{where}.changes[{j}]", change, (dict,), "an object"):
                    expect(f"{where}.changes[{j}].path", change.get("path"), (str,), "a string")
        depends = step.get("depends_on", [])
        if expect(f"{where}.depends_on", depends, (list,), "an array"):
            for j, dep in enumerate(depends):
                expect(f"{where}.depends_on[{j}]", dep, (str,), "a string")
    addresses = {address(str(s.get("kind")), str(s.get("key"))) for s in steps if isinstance(s, dict)}
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("depends_on", []), list):
            continue
        for dep in step.get("depends_on", []):
            if isinstance(dep, str) and dep not in addresses:
                problems.append(f"steps[{i}].depends_on: {dep!r} is not a step of this plan")
    return problems


def _json_type(value: Any) -> str:
    """How a JSON reader would name the type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return "an array" if isinstance(value, list) else "an object"
