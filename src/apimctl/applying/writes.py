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
import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from apimctl import kinds
from apimctl.api.ratelimit import Backoff
from apimctl.applying.blame import blamed, named_positions
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
    resolve_secrets,
    service_name,
)
from apimctl.applying.calls import Client, create_once, delete_quietly, find_by_name
from apimctl.applying.collections import CollectionWrites
from apimctl.applying.schedule import PartlyDone, Unit
from apimctl.errors import ApiError, Invalid, NotFound
from apimctl.plans.model import Plan, Step, address


class Writer(CollectionWrites):
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

    # -- delete -----------------------------------------------------------------------

    async def delete(self, step: Step) -> None:
        if not kinds.get(step.kind).deletable:
            raise StepError(f"a {step.kind} cannot be deleted through the management API; remove it by hand")
        await delete_quietly(self.client, self.item(step))
