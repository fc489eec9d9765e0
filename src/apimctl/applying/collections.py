"""Nested collections an update writes item by item: role permissions, methods and their
response filters, error messages, plan entitlements, maintenance-event endpoints.

A mixin of :class:`apimctl.applying.writes.Writer`: each collection is made exactly what the
manifest lists (when it lists it), creating and deleting items through the API. Extra copies
of an item the plan repairs (``--repair-duplicates``: changes ``methods[GET] (duplicates)``)
are deleted first, by the ids the plan names; an item listed twice under one id (a link, an
error message) is written once again.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from apimctl import kinds
from apimctl.api.ratelimit import Backoff
from apimctl.applying.bodies import (
    BodyBuilder,
    LiveIndex,
    method_body,
)
from apimctl.applying.calls import Client, as_items, create_once, delete_quietly, find_in
from apimctl.kinds.dialects import ROLE_ACTIONS, SPEC, Dialect, message_default
from apimctl.kinds.endpoint import METHOD, METHODS
from apimctl.kinds.error_set import MESSAGES
from apimctl.kinds.maintenance_event import ENDPOINTS, endpoint_key
from apimctl.kinds.plan import SERVICES
from apimctl.kinds.service import ROLES
from apimctl.plans.model import DUPLICATES, Step, address

# a plan's entitlements, read with explicit nested fields: a plan service's endpoints and a
# plan endpoint's methods are Exp where real deployments run (SUPPLEMENT §10.6)
ENTITLEMENT_FIELDS = ("id,name,endpoints.id,endpoints.name,endpoints.undefinedMethodsAllowed,"
                      "endpoints.methods.id,endpoints.methods.name")
METHOD_FIELDS = ("id,name,sampleJsonResponse,sampleXmlResponse,responseFilters.id,responseFilters.name,"
                 "responseFilters.notes,responseFilters.jsonFilterFields,responseFilters.xmlFilterFields")


class CollectionWrites:
    """Writes of nested collections; the writer supplies the client, the ids and the paths."""

    client: Client
    index: LiveIndex
    backoff: Backoff
    bodies: BodyBuilder
    dialect: Dialect = SPEC

    def item(self, step: Step) -> str:
        raise NotImplementedError

    def resolved(self, step: Step) -> dict[str, Any]:
        raise NotImplementedError

    async def reconcile(self, step: Step, name: str) -> None:
        """Make the collection ``name`` of ``step``'s object (``Kind.ops.collections``) what
        the manifest lists."""
        handlers: dict[str, Callable[[Step], Awaitable[None]]] = {
            ROLES: self.reconcile_roles, METHODS: self.reconcile_methods,
            MESSAGES: self.reconcile_messages, SERVICES: self.reconcile_entitlements,
            ENDPOINTS: self.reconcile_event_endpoints,
        }
        await handlers[name](step)

    async def reconcile_roles(self, step: Step) -> None:
        # a service's roles may read it; a plan's roles may register keys
        action = ROLE_ACTIONS[kinds.SERVICE.name if step.kind == kinds.SERVICE.name else kinds.PLAN.name]
        await self.set_roles(step, f"{self.item(step)}/{ROLES}", action)

    async def set_roles(self, step: Step, path: str, action: str) -> None:
        """Role permissions: exactly the roles the manifest names (when it names any); item by
        item, or as one collection where the target writes them so (SUPPLEMENT §10.7)."""
        names = (step.desired or {}).get(ROLES)
        if names is None:
            return
        if self.dialect.roles_as_collection:
            await self.replace_roles(path, list(names), action)
            return
        live = await self.client.get(path)
        live_by_name = {r.get("name"): r for r in as_items(live)}
        for role in names:
            if role not in live_by_name:
                rid = self.index.id(address(kinds.ROLE.name, role))
                await create_once(self.client, path, {"id": rid, "name": role, "action": action},
                                  functools.partial(find_in, self.client, path, role), backoff=self.backoff)
        for role, obj in live_by_name.items():
            if role not in names:
                await delete_quietly(self.client, f"{path}/{obj['id']}")

    async def replace_roles(self, path: str, names: list[str], action: str) -> None:
        """The whole set at once: ``PUT {"roles": [{id, action}]}``, ``DELETE`` to clear
        (idempotent, so retried safely)."""
        if not names:
            await delete_quietly(self.client, path)
            return
        roles = [{"id": self.index.id(address(kinds.ROLE.name, n)), "action": action} for n in names]
        await self.client.put(path, {ROLES: roles})

    async def reconcile_methods(self, step: Step) -> None:
        base = f"{self.item(step)}/{METHODS}"
        items = as_items(await self.client.get(base, {"fields": METHOD_FIELDS}))
        items = await self.drop_copies(base, items, step.duplicate_deletes())
        if METHODS not in (step.desired or {}):
            return  # only duplicates to repair: the manifest leaves the methods alone
        desired = {m["name"]: m for m in (step.desired or {}).get(METHODS) or []}
        live = {m["name"]: m for m in items}
        for name, method in desired.items():
            want = {**kinds.METHOD_DEFAULTS, **method_body(method)}
            have = live.get(name)
            if have is None:
                have = await create_once(self.client, base, want, functools.partial(find_in, self.client, base, name),
                                         backoff=self.backoff)
                have.setdefault("responseFilters", [])
                self.index.add(address(METHOD, kinds.join_key(step.key, name)), have)  # plans may entitle it next
            elif any(have.get(k) != v for k, v in want.items() if k != "name"):
                await self.client.put(f"{base}/{have['id']}", want)
            await self.reconcile_filters(f"{base}/{have['id']}/responseFilters",
                                         method.get("responseFilters") or [], have.get("responseFilters"))
        for name, have in live.items():
            if name not in desired:
                await delete_quietly(self.client, f"{base}/{have['id']}")

    async def drop_copies(self, base: str, methods: list[dict[str, Any]],
                          drop: set[str]) -> list[dict[str, Any]]:
        """Delete the extra copies of methods and response filters the plan names
        (``--repair-duplicates``); answer the methods that remain, without those filters."""
        if not drop:
            return methods
        kept = []
        for method in methods:
            if str(method.get("id")) in drop:
                await delete_quietly(self.client, f"{base}/{method['id']}")
                continue
            filters = method.get("responseFilters")
            if isinstance(filters, list):
                for filt in filters:
                    if str(filt.get("id")) in drop:
                        await delete_quietly(self.client, f"{base}/{method['id']}/responseFilters/{filt['id']}")
                method = {**method, "responseFilters": [f for f in filters if str(f.get("id")) not in drop]}
            kept.append(method)
        return kept

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
        base = f"{self.item(step)}/{MESSAGES}"
        overrides = {m["id"]: m for m in (step.desired or {}).get("errorMessages") or []}
        live = {m["id"]: m for m in as_items(await self.client.get(base))}
        doubled = doubled_keys(step, MESSAGES)  # one id listed twice: written again, whole
        for mid, (_code, status) in kinds.ERROR_CATALOG.items():
            want = message_default(mid, status, self.dialect)
            want.update({k: v for k, v in overrides.get(mid, {}).items() if k in kinds.ERROR_MESSAGE_FIELDS})
            have = live.get(mid)
            if have is None or mid in doubled or any(have.get(k) != v for k, v in want.items()):
                await self.client.put(f"{base}/{mid}", {"id": mid, **want})

    async def reconcile_entitlements(self, step: Step) -> None:
        services = (step.desired or {}).get(SERVICES)
        if services is None:
            return
        base = f"{self.item(step)}/{SERVICES}"
        want = {s["id"]: s for s in self.bodies.entitlements(services)}
        listed = as_items(await self.client.get(base, {"fields": ENTITLEMENT_FIELDS}))
        live = {s["id"]: s for s in listed}
        for sid, svc in want.items():
            if sid in live and _count(listed, sid) > 1:  # entitled twice: once again
                await delete_quietly(self.client, f"{base}/{sid}")
                live.pop(sid)
            if sid not in live:
                # the endpoints are always listed: only those are entitled (SUPPLEMENT §10.6)
                await self.post_idempotent(base, svc)
                continue
            have_eps = {e["id"]: e for e in live[sid].get(ENDPOINTS) or []}
            want_eps = {e["id"]: e for e in svc[ENDPOINTS]}
            for eid in [e for e in want_eps if _count(live[sid].get(ENDPOINTS) or [], e) > 1]:
                await delete_quietly(self.client, f"{base}/{sid}/endpoints/{eid}")
                have_eps.pop(eid)
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
        have_ids = {str(m.get("id")) for m in have.get(METHODS) or []}
        want_ids = {str(m["id"]) for m in want.get(METHODS) or []}
        for mid in sorted(want_ids - have_ids):
            await self.post_idempotent(base, {"id": mid})
        for mid in sorted(have_ids - want_ids):
            await delete_quietly(self.client, f"{base}/{mid}")

    async def reconcile_event_endpoints(self, step: Step) -> None:
        refs = (step.desired or {}).get(ENDPOINTS)
        if refs is None and not doubled_keys(step, ENDPOINTS):
            return
        base = f"{self.item(step)}/{ENDPOINTS}"
        listed = as_items(await self.client.get(base))
        have = {e["id"] for e in listed}
        want = have if refs is None else {
            self.index.id(address(kinds.ENDPOINT.name, endpoint_key(e))) for e in refs}
        for eid in sorted(e for e in have & want if _count(listed, e) > 1):  # linked twice
            await delete_quietly(self.client, f"{base}/{eid}")
            have.discard(eid)
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


def _count(items: list[dict[str, Any]], item_id: Any) -> int:
    return sum(1 for i in items if i.get("id") == item_id)


def doubled_keys(step: Step, collection: str) -> set[str]:
    """Keys of the ``collection`` items the step repairs (``errorMessages[X] (duplicates)``)."""
    head = f"{collection}["
    return {c.path[len(head):-len(DUPLICATES) - 1] for c in step.changes
            if c.path.startswith(head) and c.path.endswith(f"]{DUPLICATES}")}


def same_undefined_methods(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    return bool(have.get("undefinedMethodsAllowed", True)) == bool(want.get("undefinedMethodsAllowed", True))


def entitlement_equal(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    if not same_undefined_methods(have, want):
        return False
    return {m.get("id") for m in have.get(METHODS) or []} == {m["id"] for m in want.get(METHODS) or []}
