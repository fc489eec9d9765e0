"""The plan: a value describing what apply will do.

``plan`` builds a :class:`Plan` (see ``apimctl.planning.build`` for how); ``apply`` executes exactly
it; ``render`` prints it; ``--out`` saves it with :meth:`Plan.dumps` (:mod:`apimctl.plans.file`,
which also reads it back). Nothing here talks to the network or prints. Secret values never
enter the serialised form: steps carry secrets as ``${VAR}`` references, and resolved values
live only in :attr:`Plan.secret_values`, which is not serialised (a saved plan resolves them
again from the environment when applied).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from apimctl import __version__

FORMAT_VERSION = "1.0"

Action = Literal["create", "update", "delete"]
ACTIONS: tuple[Action, ...] = ("create", "update", "delete")


# The key suffix of an extra update that moves an endpoint to a temporary route first, so
# that routes can be swapped in one apply (``endpoint:Weather/Forecast (temporary route)``).
TEMPORARY_ROUTE = " (temporary route)"

# The path suffix of a change that deletes the extra copies of a nested item
# (``methods[GET] (duplicates)``: before the ids listed, after the one kept).
DUPLICATES = " (duplicates)"


def address(kind: str, key: str) -> str:
    """The stable address of an object: ``kind:key`` (``endpoint:Weather/Forecast``). The key
    is already escaped (``apimctl.kinds.escape_name``: a ``/`` in a name is ``\\/``, a ``\\``
    is ``\\\\``), so an address is unambiguous for any name."""
    return f"{kind}:{key}"


WRITE_ONLY_NOTE = ("cannot be compared (write-only); sent only with --rotate-secrets "
                   "or when its block changes")


@dataclass(frozen=True)
class WriteOnly:
    """A declared write-only secret field (``systemDomainAuthentication.password``): the API
    never returns it, so the plan cannot tell whether the area holds the declared value.
    ``sent``: this plan writes it (its block changes, or it is rotated)."""

    kind: str
    key: str
    path: str
    sent: bool = False

    @property
    def address(self) -> str:
        return address(self.kind, self.key)

    @property
    def note(self) -> str:
        return "sent by this plan" if self.sent else WRITE_ONLY_NOTE

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "address": self.address, "path": self.path,
                "sent": self.sent, "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WriteOnly:
        return cls(str(data["kind"]), str(data["key"]), str(data["path"]), bool(data.get("sent", False)))


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


EFFECTS = ("cuts_off", "tightens", "loosens", "grants", "informs")
"""What an :class:`Impact` does to callers; ``cuts_off`` and ``tightens`` are what
``apply --max-affected-keys`` counts."""
GUARDED_EFFECTS = frozenset({"cuts_off", "tightens"})


@dataclass(frozen=True)
class Impact:
    """Who one change of a step affects, in words and counts (:mod:`apimctl.planning.impact`).

    ``path`` is the change's path (``None``: the whole step, a delete). ``plans`` counts the
    keys affected on each plan concerned (``(address, keys)``); ``keys`` is their sum, or
    ``None`` for a line that is not about keys (what goes with a delete). ``applications``:
    how many applications own those keys, when they were read. ``key_ids`` names the keys the
    platform will clamp (ids, never the key values)."""

    text: str
    effect: str = "informs"
    path: str | None = None
    keys: int | None = None
    applications: int | None = None
    plans: tuple[tuple[str, int], ...] = ()
    key_ids: tuple[str, ...] = ()

    @property
    def guarded(self) -> bool:
        """Whether the change cuts off or tightens keys (``--max-affected-keys`` counts it)."""
        return self.effect in GUARDED_EFFECTS and bool(self.keys)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "effect": self.effect, "text": self.text, "keys": self.keys,
                "applications": self.applications,
                "by_plan": [{"address": a, "keys": n} for a, n in self.plans],
                "key_ids": list(self.key_ids)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Impact:
        keys, apps = data.get("keys"), data.get("applications")
        return cls(str(data.get("text", "")), str(data.get("effect", "informs")), data.get("path"),
                   int(keys) if isinstance(keys, int) else None,
                   int(apps) if isinstance(apps, int) else None,
                   tuple((str(p["address"]), int(p["keys"])) for p in data.get("by_plan") or []),
                   tuple(str(i) for i in data.get("key_ids") or []))


@dataclass(frozen=True)
class ImpactRead:
    """How a plan's caller impact was made: ``mode`` (``auto``, ``always``, ``never``),
    whether the keys were ``read``, the list ``calls`` it took, the keys (or applications)
    read, and ``unknown``: why the impact could not be made (empty when it was)."""

    mode: str
    read: bool = False
    calls: int = 0
    items: int = 0
    applications: bool = False
    unknown: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "read": self.read, "calls": self.calls, "items": self.items,
                "applications": self.applications, "unknown": self.unknown or None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ImpactRead:
        return cls(str(data.get("mode", "auto")), bool(data.get("read", False)),
                   int(data.get("calls") or 0), int(data.get("items") or 0),
                   bool(data.get("applications", False)), str(data.get("unknown") or ""))


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
    impact: tuple[Impact, ...] = ()

    @property
    def address(self) -> str:
        return address(self.kind, self.key)

    @property
    def temporary(self) -> bool:
        """An extra update moving an endpoint to a temporary route (its final step follows)."""
        return self.key.endswith(TEMPORARY_ROUTE)

    def duplicate_deletes(self) -> set[str]:
        """Ids of extra copies of nested items this step deletes (``--repair-duplicates``)."""
        out: set[str] = set()
        for change in self.changes:
            if change.path.endswith(DUPLICATES) and isinstance(change.before, list):
                keep = set(change.after) if isinstance(change.after, list) else set()
                out |= {str(i) for i in change.before if str(i) not in keep}
        return out

    def to_json(self) -> dict[str, Any]:
        out = {
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
        if self.impact:  # optional (format 1.x): present only when the step affects callers
            out["impact"] = [i.to_json() for i in self.impact]
        return out

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
            impact=tuple(Impact.from_json(i) for i in data.get("impact", [])),
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


@dataclass(frozen=True)
class Duplicate:
    """Live objects (or nested items of one object) sharing one identity.

    ``kind``/``key`` name the object, or the owner of the nested items at ``path``
    (``methods[GET]``; empty for whole objects). ``keep`` is the copy the plan manages and
    ``reason`` why (``pinned by id``, ``oldest``, ``first listed``); ``repair``: the plan
    deletes the other copies (``--repair-duplicates``).
    """

    kind: str
    key: str
    ids: tuple[str, ...]
    keep: str
    reason: str
    path: str = ""
    repair: bool = False

    @property
    def address(self) -> str:
        return address(self.kind, self.key)

    @property
    def where(self) -> str:
        """``maintenanceEvent:Upgrade`` or ``endpoint:Weather/Forecast methods[GET]``."""
        return f"{self.address} {self.path}" if self.path else self.address

    @property
    def extra(self) -> tuple[str, ...]:
        """The ids of the copies that are not kept."""
        return tuple(i for i in self.ids if i != self.keep)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "path": self.path, "ids": list(self.ids),
                "keep": self.keep, "reason": self.reason, "repair": self.repair}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Duplicate:
        return cls(data["kind"], data["key"], tuple(str(i) for i in data.get("ids", [])),
                   str(data.get("keep", "")), str(data.get("reason", "")),
                   str(data.get("path", "")), bool(data.get("repair", False)))


@dataclass(frozen=True)
class Budget:
    """The calls applying a plan makes (:func:`apimctl.applying.budget.estimate`): reading the
    area, taking and releasing the lease, the writes and the convergence check; ``qps`` the
    configured client-side rate (``None``: unlimited)."""

    reads: int
    lease: int
    writes: int
    checks: int
    qps: float | None = None

    @property
    def calls(self) -> int:
        return self.reads + self.lease + self.writes + self.checks

    @property
    def seconds(self) -> float | None:
        """The time the calls take at the configured rate (``None``: no rate set)."""
        return self.calls / self.qps if self.qps else None

    def counts(self) -> str:
        return (f"{self.calls} calls ({self.reads} reads, {self.lease} lease, {self.writes} writes, "
                f"{self.checks} checks)")

    def text(self) -> str:
        pace = (f", about {self.seconds:.0f} s at --qps {self.qps:g}" if self.seconds is not None
                else " (no client-side rate limit)")
        return f"Budget: {self.counts()}{pace}."

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "reads": self.reads, "lease": self.lease, "writes": self.writes,
                "checks": self.checks, "qps": self.qps,
                "seconds": round(self.seconds, 1) if self.seconds is not None else None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Budget:
        qps = data.get("qps")
        return cls(int(data.get("reads", 0)), int(data.get("lease", 0)), int(data.get("writes", 0)),
                   int(data.get("checks", 0)), float(qps) if qps else None)


@dataclass
class Plan:
    """An ordered list of steps plus what is needed to apply them safely later."""

    steps: list[Step] = field(default_factory=list)
    unmanaged: list[Unmanaged] = field(default_factory=list)
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)
    ignored: list[dict[str, str]] = field(default_factory=list)  # {target, reason}
    target: str = ""
    warnings: list[str] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    write_only: list[WriteOnly] = field(default_factory=list)
    secret_values: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # the dialect of the target the plan was made for, and why (SUPPLEMENT §10); empty: unknown
    dialect: str = ""
    dialect_reason: str = ""
    impact: ImpactRead | None = None  # how the caller impact was made; None: not made
    budget: Budget | None = field(default=None, compare=False)  # the calls applying it makes
    # what the deletes take away, as the area was read (the apply journal keeps it); not saved
    deleted_images: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False, compare=False)
    # what recorded callers would see (``--replay``): apimctl.plans.replay.Replay; None: not asked
    replay: Any = field(default=None, compare=False)

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
        out = {
            "format_version": FORMAT_VERSION,
            "target": self.target,
            **({"dialect": self.dialect, "dialect_reason": self.dialect_reason} if self.dialect else {}),
            "summary": self.summary(),
            "steps": [s.to_json() for s in self.steps],
            "unmanaged": [u.to_json() for u in self.unmanaged],
            "fingerprints": {a: f.to_json() for a, f in sorted(self.fingerprints.items())},
            "ignored": self.ignored,
            "warnings": self.warnings,
        }
        if self.duplicates:  # optional (format 1.x): present only when the area holds some
            out["duplicates"] = [d.to_json() for d in self.duplicates]
        if self.write_only:  # optional (format 1.x): present only when the manifests declare some
            out["write_only"] = [w.to_json() for w in self.write_only]
        if self.impact is not None:  # optional (format 1.x): present when impact was made
            out["impact"] = self.impact.to_json()
        if self.budget is not None:  # optional (format 1.x): present when the plan was budgeted
            out["budget"] = self.budget.to_json()
        return out

    def affected_keys(self) -> int:
        """Keys cut off or tightened by the plan: for each plan concerned, the most any one
        change cuts off or tightens there (a key is counted once per plan)."""
        most: dict[str, int] = {}
        for step in self.steps:
            for item in step.impact:
                if item.guarded:
                    for plan, keys in item.plans:
                        most[plan] = max(most.get(plan, 0), keys)
        return sum(most.values())

    def dumps(self) -> str:
        """The saved plan (``plan --out``): :meth:`to_json` and, after ``format_version``, the
        ``apimctl_version`` that wrote it (named when another version refuses the file)."""
        doc = self.to_json()
        saved = {"format_version": doc.pop("format_version"), "apimctl_version": __version__, **doc}
        return json.dumps(saved, indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        """The plan :meth:`to_json` wrote. ``data`` is trusted: a file is checked first by
        :func:`apimctl.plans.file.load_plan`, which names every problem of a bad one."""
        return cls(
            steps=[Step.from_json(s) for s in data.get("steps", [])],
            unmanaged=[Unmanaged(**u) for u in data.get("unmanaged", [])],
            fingerprints={a: Fingerprint.from_json(f) for a, f in data.get("fingerprints", {}).items()},
            ignored=list(data.get("ignored", [])),
            target=str(data.get("target", "")),
            warnings=list(data.get("warnings", [])),
            duplicates=[Duplicate.from_json(d) for d in data.get("duplicates", [])],
            write_only=[WriteOnly.from_json(w) for w in data.get("write_only", [])],
            dialect=str(data.get("dialect", "")),
            dialect_reason=str(data.get("dialect_reason", "")),
            impact=ImpactRead.from_json(data["impact"]) if data.get("impact") else None,
            budget=Budget.from_json(data["budget"]) if data.get("budget") else None,
        )
