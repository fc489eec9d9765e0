"""The one writer of nested parts: carries out whatever strategy a kind declares for a part.

A mixin of :class:`apimctl.applying.writes.Writer`. A kind's operations list the parts an
update writes apart from the object's own ``PUT`` (``Ops.writes``, strategies of
:mod:`apimctl.kinds.nested_writes`): singletons with a sub-resource of their own, links by id,
keyed items, a fixed catalog, entitlements. Each collection is made exactly what the manifest
lists (when it lists it; a catalog item it does not list is at its default). Extra copies of an item the plan repairs (``--repair-duplicates``:
changes ``methods[GET] (duplicates)``) are deleted first, by the ids the plan names; an item
listed twice under one id (a link, a catalog item) is written once again. Nothing here knows
which kind it writes.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from apimctl import kinds
from apimctl.api.ratelimit import Backoff
from apimctl.applying.bodies import BodyBuilder, LiveIndex, full_nested, path_value
from apimctl.applying.calls import Client, as_items, create_once, delete_quietly, find_in
from apimctl.errors import NotFound
from apimctl.kinds import Kind
from apimctl.kinds.dialects import SPEC, Dialect
from apimctl.kinds.nested_writes import Catalog, Entitlements, KeyedItems, Links, Singleton
from apimctl.plans.model import DUPLICATES, Step, address

# what a list of links is read for: each link's id and the linked object's name (every read
# names its fields: real areas honour no nested wildcard and leave some fields out unless
# named, SUPPLEMENT §10.10.8)
LINK_FIELDS = "id,name"


class CollectionWrites:
    """Writes of nested parts; the writer supplies the client, the ids and the paths."""

    client: Client
    index: LiveIndex
    backoff: Backoff
    bodies: BodyBuilder
    dialect: Dialect = SPEC

    def item(self, step: Step) -> str:
        raise NotImplementedError

    def resolved(self, step: Step) -> dict[str, Any]:
        raise NotImplementedError

    async def write_part(self, step: Step, name: str) -> None:
        """Make the part ``name`` of ``step``'s object what the manifest says, by the strategy
        its kind declares (``Kind.ops.writes``)."""
        kind = kinds.get(step.kind)
        match kind.ops.writes[name]:
            case Singleton():
                await self.write_singleton(step, kind, name)
            case Links() as links:
                await self.write_links(step, name, links)
            case KeyedItems() as keyed:
                await self.write_keyed(step, name, keyed)
            case Catalog() as catalog:
                await self.write_catalog(step, name, catalog)
            case Entitlements() as entitled:
                await self.write_entitlements(step, name, entitled)

    def listed(self, step: Step, name: str, items: Any) -> list[dict[str, Any]]:
        """The items of the part ``name`` as the kind's own write body carries them: names
        resolved to ids (its references), the dialect's additions made."""
        return list(self.bodies.body(step, {name: items}).get(name) or [])

    # -- singletons -------------------------------------------------------------------

    async def write_singleton(self, step: Step, kind: Kind, name: str) -> None:
        """A singleton written through its own sub-resource: the nullable object at or under
        ``name`` (``securityProfile.oauth``, ``systemDomainAuthentication``)."""
        desired = self.resolved(step)
        base = self.item(step)
        nullable = _nullable_under(kind, name)
        if nullable is not None:
            body = full_nested(kind, nullable, path_value(desired, nullable))
            await self.put_or_post(f"{base}/{nullable.replace('.', '/')}", body)
            return
        await self.client.put(f"{base}/{name}", full_nested(kind, name, desired.get(name) or {}))

    async def put_or_post(self, path: str, body: dict[str, Any] | None) -> None:
        """A nullable singleton: ``None`` deletes it; otherwise update, or create when absent."""
        if body is None:
            await delete_quietly(self.client, path)
            return
        try:
            await self.client.put(path, body)
        except NotFound:
            await self.client.post(path, body)

    # -- links ------------------------------------------------------------------------

    async def write_links(self, step: Step, name: str, links: Links) -> None:
        """Exactly the links the manifest lists (when it lists any; see :class:`Links`)."""
        wanted = (step.desired or {}).get(name)
        doubled = set() if links.named else doubled_keys(step, name)
        if wanted is None and not doubled:
            return
        path = f"{self.item(step)}/{name}"
        if wanted is not None and links.whole(self.dialect):
            await self.replace_links(path, name, self.listed(step, name, wanted), links.action)
            return
        listed = as_items(await self.client.get(path, {"fields": LINK_FIELDS}))
        items = None if wanted is None else self.listed(step, name, wanted)
        if links.named:
            await self.link_by_name(path, listed, items or [], links.action)
        else:
            await self.link_by_id(path, listed, items)

    async def replace_links(self, path: str, name: str, items: list[dict[str, Any]], action: str) -> None:
        """The whole set at once: ``PUT {name: [{id, action}]}``, ``DELETE`` to clear
        (idempotent, so retried safely)."""
        if not items:
            await delete_quietly(self.client, path)
            return
        await self.client.put(path, {name: [{"id": i["id"], **_action(action)} for i in items]})

    async def link_by_name(self, path: str, listed: list[dict[str, Any]], items: list[dict[str, Any]],
                           action: str) -> None:
        live = {obj.get("name"): obj for obj in listed}
        for item in items:
            if item["name"] not in live:
                body = {"id": item["id"], "name": item["name"], **_action(action)}
                await create_once(self.client, path, body, functools.partial(find_in, self.client, path, item["name"]),
                                  backoff=self.backoff)
        names = {i["name"] for i in items}
        for link, obj in live.items():
            if link not in names:
                await delete_quietly(self.client, f"{path}/{obj['id']}")

    async def link_by_id(self, path: str, listed: list[dict[str, Any]], items: list[dict[str, Any]] | None) -> None:
        have = {e["id"] for e in listed}
        # unlisted: the links held (the same set, so a link held twice is removed once and
        # not made again: the manifest leaves the links alone)
        want = have if items is None else {i["id"] for i in items}
        for eid in sorted(e for e in have & want if _count(listed, e) > 1):  # linked twice
            await delete_quietly(self.client, f"{path}/{eid}")
            have.discard(eid)
        for eid in sorted(want - have):
            await self.post_idempotent(path, {"id": eid})
        for eid in sorted(have - want):
            await delete_quietly(self.client, f"{path}/{eid}")

    async def post_idempotent(self, path: str, body: dict[str, Any]) -> None:
        """POST of a link (keyed by the linked object's id): look it up before a retry."""

        async def lookup() -> dict[str, Any] | None:
            items = as_items(await self.client.get(path, {"fields": LINK_FIELDS}))
            return next((i for i in items if i.get("id") == body["id"]), None)

        await create_once(self.client, path, body, lookup, backoff=self.backoff)

    # -- keyed items ------------------------------------------------------------------

    async def write_keyed(self, step: Step, name: str, keyed: KeyedItems) -> None:
        base = f"{self.item(step)}/{name}"
        items = as_items(await self.client.get(base, {"fields": ",".join(keyed.fields())}))
        items = await self.drop_copies(base, keyed, items, step.duplicate_deletes())
        if name not in (step.desired or {}):
            return  # only duplicates to repair: the manifest leaves the items alone
        await self.write_items(base, keyed, (step.desired or {}).get(name) or [], items, step.key)

    async def write_items(self, base: str, keyed: KeyedItems, desired_items: list[dict[str, Any]],
                          live_items: list[dict[str, Any]] | None, owner_key: str) -> None:
        """The items under ``base`` made ``desired_items`` (``live_items``: as read, or
        ``None`` to read them); the nested items of each after it."""
        if live_items is None:
            live_items = as_items(await self.client.get(base, {"fields": ",".join(keyed.fields())}))
        live = {i[keyed.key]: i for i in live_items}
        desired = {i[keyed.key]: i for i in desired_items}
        for key, item in desired.items():
            want = {**keyed.defaults, **{k: v for k, v in item.items() if k not in keyed.nested}}
            have = live.get(key)
            if have is None:
                have = await create_once(self.client, base, want,
                                         functools.partial(find_in, self.client, base, key, keyed.key),
                                         backoff=self.backoff)
                for nested in keyed.nested:
                    have.setdefault(nested, [])
                if keyed.indexed_as:  # later steps may name it (a plan entitling a method)
                    self.index.add(address(keyed.indexed_as, kinds.join_key(owner_key, key)), have)
            elif any(have.get(k) != v for k, v in want.items() if k != keyed.key):
                await self.client.put(f"{base}/{have['id']}", want)
            for nested, inner in keyed.nested.items():
                await self.write_items(f"{base}/{have['id']}/{nested}", inner, item.get(nested) or [],
                                       have.get(nested), kinds.join_key(owner_key, key))
        for key, have in live.items():
            if key not in desired:
                await delete_quietly(self.client, f"{base}/{have['id']}")

    async def drop_copies(self, base: str, keyed: KeyedItems, items: list[dict[str, Any]],
                          drop: set[str]) -> list[dict[str, Any]]:
        """Delete the extra copies of items and nested items the plan names
        (``--repair-duplicates``); answer the items that remain, without those."""
        if not drop:
            return items
        kept = []
        for item in items:
            if str(item.get("id")) in drop:
                await delete_quietly(self.client, f"{base}/{item['id']}")
                continue
            for nested, inner in keyed.nested.items():
                under = item.get(nested)
                if isinstance(under, list):
                    item = {**item, nested: await self.drop_copies(f"{base}/{item['id']}/{nested}", inner,
                                                                   under, drop)}
            kept.append(item)
        return kept

    # -- a fixed catalog --------------------------------------------------------------

    async def write_catalog(self, step: Step, name: str, catalog: Catalog) -> None:
        base = f"{self.item(step)}/{name}"
        overrides = {m[catalog.key]: m for m in (step.desired or {}).get(name) or []}
        fields = dict.fromkeys(("id", catalog.key, *(f for i in catalog.ids for f in catalog.default(i, self.dialect))))
        live = {m[catalog.key]: m for m in as_items(await self.client.get(base, {"fields": ",".join(fields)}))}
        doubled = doubled_keys(step, name)  # one id listed twice: written again, whole
        for item_id in catalog.ids:
            want = dict(catalog.default(item_id, self.dialect))
            want.update({k: v for k, v in overrides.get(item_id, {}).items() if k in want})
            have = live.get(item_id)
            if have is None or item_id in doubled or any(have.get(k) != v for k, v in want.items()):
                await self.client.put(f"{base}/{item_id}", {catalog.key: item_id, **want})

    # -- entitlements -----------------------------------------------------------------

    async def write_entitlements(self, step: Step, name: str, spec: Entitlements) -> None:
        wanted = (step.desired or {}).get(name)
        if wanted is None:
            return
        base = f"{self.item(step)}/{name}"
        want = {s["id"]: s for s in self.listed(step, name, wanted)}
        listed = as_items(await self.client.get(base, {"fields": ",".join(spec.fields)}))
        live = {s["id"]: s for s in listed}
        for sid, outer in want.items():
            if sid in live and _count(listed, sid) > 1:  # entitled twice: once again
                await delete_quietly(self.client, f"{base}/{sid}")
                live.pop(sid)
            if sid not in live:
                # the inner links are always listed: only those are entitled (SUPPLEMENT §10.6)
                await self.post_idempotent(base, outer)
                continue
            await self.write_inner(f"{base}/{sid}/{spec.inner}", spec, live[sid].get(spec.inner) or [],
                                   outer[spec.inner])
        for sid in live.keys() - want.keys():
            await delete_quietly(self.client, f"{base}/{sid}")

    async def write_inner(self, base: str, spec: Entitlements, listed: list[dict[str, Any]],
                          wanted: list[dict[str, Any]]) -> None:
        """The inner links of one outer link (a plan service's endpoints)."""
        have_all = {e["id"]: e for e in listed}
        want_all = {e["id"]: e for e in wanted}
        for eid in [e for e in want_all if _count(listed, e) > 1]:
            await delete_quietly(self.client, f"{base}/{eid}")
            have_all.pop(eid)
        for eid, want in want_all.items():
            have = have_all.get(eid)
            if have is not None and _same_flag(have, want, spec) and _same_leaves(have, want, spec):
                continue
            if have is not None and _same_flag(have, want, spec):
                # only the leaves differ: change them one by one, so that the plan's keys
                # never lose the endpoint in between
                await self.write_leaves(f"{base}/{eid}/{spec.leaf}", spec, have, want)
                continue
            if have is not None:
                await delete_quietly(self.client, f"{base}/{eid}")
            await self.post_idempotent(base, want)
        for eid in have_all.keys() - want_all.keys():
            await delete_quietly(self.client, f"{base}/{eid}")

    async def write_leaves(self, base: str, spec: Entitlements, have: Mapping[str, Any],
                           want: Mapping[str, Any]) -> None:
        have_ids = {str(m.get("id")) for m in have.get(spec.leaf) or []}
        want_ids = {str(m["id"]) for m in want.get(spec.leaf) or []}
        for mid in sorted(want_ids - have_ids):
            await self.post_idempotent(base, {"id": mid})
        for mid in sorted(have_ids - want_ids):
            await delete_quietly(self.client, f"{base}/{mid}")


def _action(action: str) -> dict[str, str]:
    return {"action": action} if action else {}


def _count(items: list[dict[str, Any]], item_id: Any) -> int:
    return sum(1 for i in items if i.get("id") == item_id)


def _same_flag(have: Mapping[str, Any], want: Mapping[str, Any], spec: Entitlements) -> bool:
    return bool(have.get(spec.flag, True)) == bool(want.get(spec.flag, True))


def _same_leaves(have: Mapping[str, Any], want: Mapping[str, Any], spec: Entitlements) -> bool:
    return {m.get("id") for m in have.get(spec.leaf) or []} == {m["id"] for m in want.get(spec.leaf) or []}


def _nullable_under(kind: Kind, name: str) -> str | None:
    """The nullable nested object at ``name`` or under it, if any."""
    return next((p for p in sorted(kind.compare.nullable) if p == name or p.startswith(name + ".")), None)


def doubled_keys(step: Step, collection: str) -> set[str]:
    """Keys of the ``collection`` items the step repairs (``errorMessages[X] (duplicates)``)."""
    head = f"{collection}["
    return {c.path[len(head):-len(DUPLICATES) - 1] for c in step.changes
            if c.path.startswith(head) and c.path.endswith(f"]{DUPLICATES}")}
