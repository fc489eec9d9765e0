"""Step → API calls: the bodies apply sends and the calls that carry them.

``apimctl.applying.run`` asks a :class:`Writer` to group a plan's steps into units (a new service
with its new endpoints and error sets is one ``POST /services``; a new package with its new
plans is one ``POST /packages``; the endpoint updates of one service are one
``PUT /services/{id}/endpoints``) and then to execute each unit. Bodies are built from
``Step.desired`` (manifest shape): names become ids (live ids from :class:`LiveIndex`, plus
ids created earlier in the same apply), domain strings become ``{"address": ...}``, secret
references are resolved (:mod:`apimctl.applying.bodies`). A create whose outcome is unknown (5xx,
timeout, dropped connection) is looked up by its natural key before it is tried again, so
nothing is created twice. A nested write the API refuses (400) because of some children only
is sent again without them, and those children fail on their own (``PartlyDone``): one bad
endpoint does not hold back its service, its error sets and its other endpoints.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from apimctl import kinds
from apimctl.api.ratelimit import Backoff
from apimctl.applying.bodies import (
    COLLECTIONS,
    CREATE_FIELDS,
    PACKAGE_FIELDS,
    SERVICE_FIELDS,
    SUBRESOURCES,
    BodyBuilder,
    LiveIndex,
    StepError,
    changed_fields,
    default_of,
    env_mapping,
    full_nested,
    method_body,
    resolve_secrets,
    service_name,
)
from apimctl.applying.schedule import PartlyDone, Unit, is_acyclic
from apimctl.errors import ApiError, Invalid, NotFound, ServerError, TransportError
from apimctl.plans.model import Plan, Step, address

UNKNOWN_OUTCOME_RETRIES = 4  # further POSTs of one create after unknown outcomes, each after a lookup


class Client(Protocol):
    """The part of ``apimctl.api.client.ApiClient`` apply uses."""

    async def get(self, path: str, params: Any = None) -> Any: ...
    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]: ...
    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]: ...
    async def put(self, path: str, body: Any, params: Any = None) -> Any: ...
    async def delete(self, path: str) -> None: ...


# --------------------------------------------------------------------------- creating once


LookupFn = Callable[[], Awaitable[dict[str, Any] | None]]


async def find_by_name(client: Client, path: str, name: str, *, key: str = "name",
                       params: Mapping[str, str] | None = None, page_index: bool = False) -> dict[str, Any] | None:
    """The object under ``path`` whose natural key ``key`` is exactly ``name``, if any."""
    query: dict[str, str] = {"filter": f"{key}:{name}", **(params or {})}
    for obj in await client.list_all(path, query, page_index=page_index):
        if obj.get(key) == name:
            return obj
    return None


async def create_once(client: Client, path: str, body: Any, lookup: LookupFn, *,
                      params: Any = None, backoff: Backoff | None = None,
                      retries: int = UNKNOWN_OUTCOME_RETRIES) -> dict[str, Any]:
    """POST ``body``; when the outcome is unknown, look the object up before trying again.

    A ``duplicate`` refusal after an unknown outcome means an earlier attempt did create it
    (and the lookup ran before the write was visible): it is looked up once more.
    """
    backoff = backoff or Backoff()
    attempt = 0
    while True:
        try:
            return await client.post(path, body, params)
        except Invalid as exc:
            if attempt == 0 or "duplicate" not in str(exc).lower():
                raise
            found = await lookup()
            if found is None:
                raise
            return found
        except (ServerError, TransportError):
            if attempt >= retries:
                raise
            await asyncio.sleep(backoff.delay(attempt))
            attempt += 1
            found = await lookup()
            if found is not None:
                return found


async def delete_quietly(client: Client, path: str) -> None:
    """DELETE, where an object already gone counts as deleted (a retried or repeated delete)."""
    with contextlib.suppress(NotFound):
        await client.delete(path)


# --------------------------------------------------------------------------- grouping

# Child kinds written by their parent's call: created inside a new parent's POST, and gone
# with a deleted parent (the API deletes the whole tree).
NESTED_KINDS = {"service": ("endpoint", "errorSet"), "package": ("plan",)}


def group_units(plan: Plan, *, batch: bool = True) -> list[Unit]:
    """Group steps into units: a created parent carries its created children; the endpoint
    updates of one service go together. One step per unit if grouping would make a cycle."""
    singles = [Unit((s,)) for s in plan.steps]
    if not batch:
        return singles
    by_addr = {s.address: s for s in plan.steps}
    absorbed: dict[str, list[Step]] = {}
    ep_updates: dict[str, list[Step]] = {}
    for s in plan.steps:
        parent = by_addr.get(s.parent or "")
        if (s.action in ("create", "delete") and parent is not None and parent.action == s.action
                and s.kind in NESTED_KINDS.get(parent.kind, ())):
            absorbed.setdefault(parent.address, []).append(s)  # covered by the parent's call
        elif s.action == "update" and s.kind == "endpoint" and s.parent:
            ep_updates.setdefault(s.parent, []).append(s)
    taken = {c.address for children in absorbed.values() for c in children}
    units: list[Unit] = []
    batched: set[str] = set()
    for s in plan.steps:
        if s.address in taken:
            continue
        group = ep_updates.get(s.parent or "", []) if s.action == "update" and s.kind == "endpoint" else []
        if len(group) > 1:
            if s.parent not in batched:
                batched.add(s.parent or "")
                units.append(Unit(tuple(group)))
            continue
        units.append(Unit((s, *absorbed.get(s.address, []))))
    return units if is_acyclic(units) else singles


# --------------------------------------------------------------------------- executing


class Writer:
    """Executes units of a plan against the API (see the module docstring)."""

    def __init__(self, client: Client, plan: Plan, index: LiveIndex, *,
                 env: Mapping[str, str] | None = None, backoff: Backoff | None = None,
                 note: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.index = index
        self.bodies = BodyBuilder(index, plan.secret_values, env_mapping(env))
        self.backoff = backoff or Backoff()
        self.note = note or (lambda line: None)

    # -- entry point ------------------------------------------------------------------

    async def execute(self, unit: Unit) -> None:
        first = unit.steps[0]
        if len(unit.steps) > 1 and first.action == "update":
            await self.update_endpoints(unit.steps)
        elif first.action == "create":
            await self.create(first, unit.steps[1:])
        elif first.action == "update":
            await self.update(first)
        else:
            await self.delete(first)

    # -- ids --------------------------------------------------------------------------

    def parent_id(self, step: Step) -> str:
        if step.parent is None:
            raise StepError(f"{step.address} has no parent")
        return self.index.ids.get(step.parent) or step.parent_id or self.index.id(step.parent)

    def own_id(self, step: Step) -> str:
        # a step planned against a live object carries its id: trust it over a name lookup,
        # which can be ambiguous when a pinned object shares its name with a pruned duplicate
        found = step.id or self.index.ids.get(step.address)
        if not found:
            raise StepError(f"{step.action} {step.address}: its live id is unknown")
        return found

    def collection(self, step: Step) -> str:
        kind = kinds.get(step.kind)
        if kind.parent is None:
            return kind.collection_path()
        return kind.collection_path(**{kind.parent: self.parent_id(step)})

    def item(self, step: Step) -> str:
        return f"{self.collection(step)}/{self.own_id(step)}"

    def name_of(self, step: Step) -> str:
        kind = kinds.get(step.kind)
        return kinds.split_key(kind, step.key)[1]

    # -- create -----------------------------------------------------------------------

    async def create(self, step: Step, children: tuple[Step, ...]) -> None:
        handler = {"service": self.create_service, "package": self.create_package}.get(step.kind)
        if handler is not None:
            await handler(step, children)
            return
        kind = kinds.get(step.kind)
        body = self.body_for(step)
        name = self.name_of(step)
        path = self.collection(step)
        made = await self.post_once(step, path, body, name, kind.identity, params=CREATE_FIELDS.get(step.kind))
        if step.kind == "endpoint":
            self.index.add_service_tree({"name": service_name(step), "endpoints": [made]})
        else:
            self.index.add(step.address, made)

    async def post_once(self, step: Step, path: str, body: Any, name: str, identity: str = "name",
                        params: Mapping[str, str] | None = None) -> dict[str, Any]:
        kind = kinds.get(step.kind)

        async def lookup() -> dict[str, Any] | None:
            found = await find_by_name(self.client, path, name, key=identity, params=params,
                                       page_index=kind.page_index)
            if found is not None:
                self.note(f"{step.address}: the create had an unknown outcome; found it created")
            return found

        return await create_once(self.client, path, body, lookup, params=params, backoff=self.backoff)

    def body_for(self, step: Step) -> dict[str, Any]:
        b = self.bodies
        if step.kind == "endpoint":
            return b.endpoint(step, service_name(step))
        builders: dict[str, Callable[[Step], dict[str, Any]]] = {
            "domain": b.domain, "role": b.role, "errorSet": b.error_set, "plan": b.plan,
            "maintenanceEvent": b.maintenance_event, "service": b.service, "package": b.package,
        }
        return builders[step.kind](step)

    # -- nested creates ---------------------------------------------------------------

    async def post_tree(self, step: Step, path: str, body: dict[str, Any], name: str, fields: str,
                        key: str, children: Sequence[Step], names: Mapping[str, list[str]],
                        ) -> tuple[dict[str, Any], dict[str, str]]:
        """POST a parent with its new children in ``body[key]``. When the API refuses the tree
        because of some children only, the parent and the rest go on without them, so that only
        what depends on those is held back: returns the created object and the addresses of the
        children left out, with why."""
        try:
            return await self.post_once(step, path, body, name, params={"fields": fields}), {}
        except Invalid as exc:
            bad = blamed(exc, key, len(children))
            if bad is None:
                raise named_positions(exc, names) from None
            body[key] = [b for i, b in enumerate(body[key]) if i not in bad]
            try:
                made = await self.post_once(step, path, body, name, params={"fields": fields})
            except ApiError as again:
                raise named_positions(exc if isinstance(again, Invalid) else again, names) from None
            return made, {children[i].address: why for i, why in bad.items()}
        except ApiError as exc:
            raise named_positions(exc, names) from None

    async def create_service(self, step: Step, children: tuple[Step, ...]) -> None:
        """One ``POST /services`` with the new error sets, endpoints (cors, cache, methods and
        their filters, system-domain authentication) and role permissions."""
        name = self.name_of(step)
        body = self.bodies.service(step)
        sets = [c for c in children if c.kind == "errorSet"]
        endpoints = [c for c in children if c.kind == "endpoint"]
        if sets:
            body["errorSets"] = [self.bodies.error_set(c) for c in sets]
        if endpoints:
            body["endpoints"] = [self.bodies.endpoint(c, name) for c in endpoints]
        names = {"endpoints": [self.name_of(c) for c in endpoints], "errorSets": [self.name_of(c) for c in sets]}
        made, left_out = await self.post_tree(step, "/services", body, name, SERVICE_FIELDS,
                                              "endpoints", endpoints, names)
        self.index.add_service_tree({"endpoints": [], "errorSets": [], **made, "name": name})
        if left_out:
            raise PartlyDone(left_out)

    async def create_package(self, step: Step, children: tuple[Step, ...]) -> None:
        """One ``POST /packages`` with the new plans (entitlements and role permissions)."""
        name = self.name_of(step)
        body = self.bodies.package(step)
        if children:
            body["plans"] = [self.bodies.plan(c) for c in children]
        names = {"plans": [self.name_of(c) for c in children]}
        made, left_out = await self.post_tree(step, "/packages", body, name, PACKAGE_FIELDS,
                                              "plans", children, names)
        self.index.add_package_tree({"plans": [], **made, "name": name})
        if left_out:
            raise PartlyDone(left_out)

    # -- update -----------------------------------------------------------------------

    def resolved(self, step: Step) -> dict[str, Any]:
        return resolve_secrets(step, step.desired or {}, self.bodies.secret_values, self.bodies.env)

    def own_update(self, step: Step) -> dict[str, Any]:
        """The body of the object's own PUT: the changed plain fields, references resolved."""
        kind = kinds.get(step.kind)
        desired = self.resolved(step)
        body: dict[str, Any] = {}
        for name in changed_fields(step):
            if name in COLLECTIONS.get(step.kind, ()) or name in SUBRESOURCES.get(step.kind, ()):
                continue
            if name in desired:
                value = desired[name]
                body[name] = full_nested(kind, name, value) if name in kind.nested else copy.deepcopy(value)
            else:
                body[name] = default_of(kind, name)
        if step.kind == "endpoint":
            self.bodies.endpoint_refs(body, service_name(step))
        elif step.kind == "role" and body.get("organization") is not None:
            body["organization"] = {"id": self.index.id(address("organization", body["organization"]))}
        return body

    async def update(self, step: Step) -> None:
        body = self.own_update(step)
        if step.kind == "domain" and body:
            body = {"domain": (step.desired or {}).get("domain", step.key)}
        if body:
            await self.client.put(self.item(step), body)
        await self.update_parts(step)

    async def update_endpoints(self, steps: tuple[Step, ...]) -> None:
        """Several endpoint updates of one service: one ``PUT /services/{id}/endpoints``."""
        entries: list[dict[str, Any]] = []
        sent: list[Step] = []  # the step of each entry
        for step in steps:
            body = self.own_update(step)
            if body:
                entries.append({"id": self.own_id(step), **body})
                sent.append(step)
        left_out: dict[str, str] = {}
        if entries:
            names = {"": [self.name_of(s) for s in sent]}
            try:
                await self.client.put(self.collection(steps[0]), entries)
            except Invalid as exc:
                # refused because of some endpoints only (all or nothing): the others go again
                bad = blamed(exc, "", len(entries))
                if bad is None or len(bad) == len(entries):
                    raise named_positions(exc, names) from None
                try:
                    await self.client.put(self.collection(steps[0]), [e for i, e in enumerate(entries) if i not in bad])
                except ApiError as again:
                    raise named_positions(exc if isinstance(again, Invalid) else again, names) from None
                left_out = {sent[i].address: why for i, why in bad.items()}
            except ApiError as exc:
                raise named_positions(exc, names) from None
        await asyncio.gather(*(self.update_parts(s) for s in steps if s.address not in left_out))
        if left_out:
            raise PartlyDone(left_out)

    async def update_parts(self, step: Step) -> None:
        """Sub-resources (singletons) and nested collections an update changes."""
        fields_ = changed_fields(step)
        for name in SUBRESOURCES.get(step.kind, ()):
            if name in fields_:
                await self.write_singleton(step, name)
        for name in COLLECTIONS.get(step.kind, ()):
            if name in fields_:
                await self.reconcile(step, name)

    async def write_singleton(self, step: Step, name: str) -> None:
        kind = kinds.get(step.kind)
        desired = self.resolved(step)
        base = self.item(step)
        if step.kind == "service" and name == "securityProfile":
            oauth = (desired.get("securityProfile") or {}).get("oauth")
            await self.put_or_post(f"{base}/securityProfile/oauth",
                                   full_nested(kind, "securityProfile.oauth", oauth))
            return
        value = desired.get(name)
        if name == "systemDomainAuthentication":
            await self.put_or_post(f"{base}/{name}", full_nested(kind, name, value))
            return
        await self.client.put(f"{base}/{name}", full_nested(kind, name, value or {}))

    async def put_or_post(self, path: str, body: dict[str, Any] | None) -> None:
        """A nullable singleton: ``None`` deletes it; otherwise update, or create when absent."""
        if body is None:
            await delete_quietly(self.client, path)
            return
        try:
            await self.client.put(path, body)
        except NotFound:
            await self.client.post(path, body)

    # -- nested collections -----------------------------------------------------------

    async def reconcile(self, step: Step, name: str) -> None:
        if name == "roles":
            action = "read" if step.kind == "service" else "register_keys"
            await self.set_roles(step, self.item(step) + "/roles", action)
        elif name == "methods":
            await self.reconcile_methods(step)
        elif name == "errorMessages":
            await self.reconcile_messages(step)
        elif name == "services":
            await self.reconcile_entitlements(step)
        elif name == "endpoints":
            await self.reconcile_event_endpoints(step)

    async def set_roles(self, step: Step, path: str, action: str) -> None:
        """Role permissions: exactly the roles the manifest names (when it names any)."""
        names = (step.desired or {}).get("roles")
        if names is None:
            return
        live = await self.client.get(path)
        live_by_name = {r.get("name"): r for r in as_items(live)}
        for role in names:
            if role not in live_by_name:
                rid = self.index.id(address("role", role))
                await create_once(self.client, path, {"id": rid, "name": role, "action": action},
                                  functools.partial(find_in, self.client, path, role), backoff=self.backoff)
        for role, obj in live_by_name.items():
            if role not in names:
                await delete_quietly(self.client, f"{path}/{obj['id']}")

    async def reconcile_methods(self, step: Step) -> None:
        base = self.item(step) + "/methods"
        desired = {m["name"]: m for m in (step.desired or {}).get("methods") or []}
        live = {m["name"]: m for m in as_items(await self.client.get(base, {"fields": METHOD_FIELDS}))}
        for name, method in desired.items():
            want = {**kinds.METHOD_DEFAULTS, **method_body(method)}
            have = live.get(name)
            if have is None:
                have = await create_once(self.client, base, want, functools.partial(find_in, self.client, base, name),
                                         backoff=self.backoff)
                have.setdefault("responseFilters", [])
                self.index.add(address("method", f"{step.key}/{name}"), have)  # plans may entitle it next
            elif any(have.get(k) != v for k, v in want.items() if k != "name"):
                await self.client.put(f"{base}/{have['id']}", want)
            await self.reconcile_filters(f"{base}/{have['id']}/responseFilters",
                                         method.get("responseFilters") or [], have.get("responseFilters"))
        for name, have in live.items():
            if name not in desired:
                await delete_quietly(self.client, f"{base}/{have['id']}")

    async def reconcile_filters(self, base: str, desired: list[dict[str, Any]],
                                live_items: list[dict[str, Any]] | None) -> None:
        if live_items is None:
            live_items = as_items(await self.client.get(base))
        live = {f["name"]: f for f in live_items}
        for filt in desired:
            want = {**kinds.RESPONSE_FILTER_DEFAULTS, **filt}
            have = live.get(filt["name"])
            if have is None:
                await create_once(self.client, base, want, functools.partial(find_in, self.client, base, filt["name"]),
                                  backoff=self.backoff)
            elif any(have.get(k) != v for k, v in want.items()):
                await self.client.put(f"{base}/{have['id']}", want)
        names = {f["name"] for f in desired}
        for name, have in live.items():
            if name not in names:
                await delete_quietly(self.client, f"{base}/{have['id']}")

    async def reconcile_messages(self, step: Step) -> None:
        base = self.item(step) + "/errorMessages"
        overrides = {m["id"]: m for m in (step.desired or {}).get("errorMessages") or []}
        live = {m["id"]: m for m in as_items(await self.client.get(base))}
        for mid, (_code, status) in kinds.ERROR_CATALOG.items():
            want = {"status": status, "detailHeader": "", "responseBody": ""}
            want.update({k: v for k, v in overrides.get(mid, {}).items() if k in kinds.ERROR_MESSAGE_FIELDS})
            have = live.get(mid)
            if have is None or any(have.get(k) != v for k, v in want.items()):
                await self.client.put(f"{base}/{mid}", {"id": mid, **want})

    async def reconcile_entitlements(self, step: Step) -> None:
        services = (step.desired or {}).get("services")
        if services is None:
            return
        base = self.item(step) + "/services"
        want = {s["id"]: s for s in self.bodies.entitlements(services)}
        live = {s["id"]: s for s in as_items(await self.client.get(base))}
        for sid, svc in want.items():
            if sid not in live:
                await self.post_idempotent(base, svc)
                continue
            have_eps = {e["id"]: e for e in live[sid].get("endpoints") or []}
            want_eps = {e["id"]: e for e in svc["endpoints"]}
            for eid, ep in want_eps.items():
                have = have_eps.get(eid)
                if have is not None and entitlement_equal(have, ep):
                    continue
                if have is not None and same_undefined_methods(have, ep):
                    # only the listed methods differ: change them one by one, so that the
                    # plan's keys never lose the endpoint in between
                    await self.reconcile_entitled_methods(f"{base}/{sid}/endpoints/{eid}/methods", have, ep)
                    continue
                if have is not None:
                    await delete_quietly(self.client, f"{base}/{sid}/endpoints/{eid}")
                await self.post_idempotent(f"{base}/{sid}/endpoints", ep)
            for eid in have_eps.keys() - want_eps.keys():
                await delete_quietly(self.client, f"{base}/{sid}/endpoints/{eid}")
        for sid in live.keys() - want.keys():
            await delete_quietly(self.client, f"{base}/{sid}")

    async def reconcile_entitled_methods(self, base: str, have: Mapping[str, Any], want: Mapping[str, Any]) -> None:
        have_ids = {str(m.get("id")) for m in have.get("methods") or []}
        want_ids = {str(m["id"]) for m in want.get("methods") or []}
        for mid in sorted(want_ids - have_ids):
            await self.post_idempotent(base, {"id": mid})
        for mid in sorted(have_ids - want_ids):
            await delete_quietly(self.client, f"{base}/{mid}")

    async def reconcile_event_endpoints(self, step: Step) -> None:
        refs = (step.desired or {}).get("endpoints")
        if refs is None:
            return
        base = self.item(step) + "/endpoints"
        want = {self.index.id(address("endpoint", f"{e['service']}/{e['endpoint']}")) for e in refs}
        have = {e["id"] for e in as_items(await self.client.get(base))}
        for eid in sorted(want - have):
            await self.post_idempotent(base, {"id": eid})
        for eid in sorted(have - want):
            await delete_quietly(self.client, f"{base}/{eid}")

    async def post_idempotent(self, path: str, body: dict[str, Any]) -> None:
        """POST of a link (keyed by the linked object's id): look it up before a retry."""

        async def lookup() -> dict[str, Any] | None:
            items = as_items(await self.client.get(path))
            return next((i for i in items if i.get("id") == body["id"]), None)

        await create_once(self.client, path, body, lookup, backoff=self.backoff)

    # -- delete -----------------------------------------------------------------------

    async def delete(self, step: Step) -> None:
        if not kinds.get(step.kind).deletable:
            raise StepError(f"a {step.kind} cannot be deleted through the management API; remove it by hand")
        await delete_quietly(self.client, self.item(step))


METHOD_FIELDS = ("id,name,sampleJsonResponse,sampleXmlResponse,responseFilters.id,responseFilters.name,"
                 "responseFilters.notes,responseFilters.jsonFilterFields,responseFilters.xmlFilterFields")


# a child's position in a nested write's property path: `endpoints[1].x`, or `[1].x` when the
# body is a bare array (PUT /services/{id}/endpoints)
POSITION = re.compile(r"(\bendpoints|\berrorSets|\bplans|(?<![\w\]]))\[(\d+)\]")


def blamed(exc: Invalid, collection: str, count: int) -> dict[int, str] | None:
    """The positions of the children of ``collection`` that every validation item of ``exc``
    blames (``endpoints[2].maxAge``), each with its reason; ``None`` when an item blames
    anything else (the parent itself, another collection)."""
    head = ": ".join(exc.message.split(": ")[:2])  # "POST /services: 400 Bad Request"
    found: dict[int, list[str]] = {}
    for item in exc.items:
        match = re.fullmatch(rf"{collection}\[(\d+)\](?:\.(.*))?", str(item.get("property") or ""))
        if match is None or int(match.group(1)) >= count:
            return None
        found.setdefault(int(match.group(1)), []).append(
            f"{match.group(2)}: {item.get('message', '')}" if match.group(2) else str(item.get("message", "")))
    if not found:
        return None
    return {i: f"{head}: " + "; ".join(msgs) for i, msgs in found.items()}


def named_positions(exc: ApiError, names: Mapping[str, Sequence[str]]) -> ApiError:
    """``exc`` with the positions of a nested write's children (``endpoints[1].maxAge``) shown
    as their names (``endpoints[Forecast].maxAge``), so that a failure names the object."""

    def name(match: re.Match[str]) -> str:
        listed, at = names.get(match.group(1), ()), int(match.group(2))
        label = match.group(1) or "endpoints"  # the only bare array apply sends
        return f"{label}[{listed[at]}]" if at < len(listed) else match.group(0)

    message = POSITION.sub(name, exc.message)
    return exc if message == exc.message else dataclasses.replace(exc, message=message)


def as_items(data: Any) -> list[dict[str, Any]]:
    if data is None:
        return []
    if isinstance(data, list):
        return [d for d in data if isinstance(d, dict)]
    return [data] if isinstance(data, dict) else []


async def find_in(client: Client, path: str, name: str) -> dict[str, Any] | None:
    """An item of a small (unpaged) collection by name."""
    return next((i for i in as_items(await client.get(path)) if i.get("name") == name), None)


def same_undefined_methods(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    return bool(have.get("undefinedMethodsAllowed", True)) == bool(want.get("undefinedMethodsAllowed", True))


def entitlement_equal(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    if not same_undefined_methods(have, want):
        return False
    return {m.get("id") for m in have.get("methods") or []} == {m["id"] for m in want.get("methods") or []}
