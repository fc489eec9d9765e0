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
    BodyBuilder,
    LiveIndex,
    StepError,
    changed_fields,
    default_of,
    env_mapping,
    full_nested,
    resolve_secrets,
)
from apimctl.applying.calls import Client, create_once, delete_quietly, find_by_name
from apimctl.applying.collections import CollectionWrites
from apimctl.applying.schedule import PartlyDone, Unit
from apimctl.errors import ApiError, Invalid
from apimctl.kinds import Kind
from apimctl.kinds.dialects import dialect_of, field_default
from apimctl.kinds.projections import created_fields, tree_fields
from apimctl.plans.model import Plan, Step


class Writer(CollectionWrites):
    """Executes units of a plan against the API (see the module docstring)."""

    def __init__(self, client: Client, plan: Plan, index: LiveIndex, *,
                 env: Mapping[str, str] | None = None, backoff: Backoff | None = None,
                 note: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.index = index
        # the target's dialect, as the plan was made for it (SUPPLEMENT §10)
        self.dialect = dialect_of(plan.dialect)
        self.bodies = BodyBuilder(index, plan.secret_values, env_mapping(env), self.dialect)
        self.backoff = backoff or Backoff()
        self.note = note or (lambda line: None)

    # -- entry point ------------------------------------------------------------------

    async def execute(self, unit: Unit) -> None:
        first = unit.steps[0]
        if len(unit.steps) > 1 and first.action == "update":
            await self.update_batch(unit.steps)
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
        kind = kinds.get(step.kind)
        if kind.children:
            await self.create_tree(step, children)
            return
        name = self.name_of(step)
        fields = created_fields(kind)
        made = await self.post_once(step, self.collection(step), self.bodies.body(step), name,
                                    kind.identity, params={"fields": ",".join(fields)} if fields else None)
        self.index.add_tree(kind, {**made, kind.identity: name}, kinds.split_key(kind, step.key)[0])

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

    async def create_tree(self, step: Step, children: tuple[Step, ...]) -> None:
        """One POST of a new parent with its new children: a service with its error sets and
        endpoints (cors, cache, methods and their filters, system-domain authentication) and
        role permissions; a package with its plans (entitlements and role permissions)."""
        kind = kinds.get(step.kind)
        name = self.name_of(step)
        body = self.bodies.body(step)
        kids = kinds.children_of(kind)
        steps = {c.name: [s for s in children if s.kind == c.name] for c in kids}
        for child in kids:
            if steps[child.name]:
                body[child.manifest_key] = [self.bodies.body(s) for s in steps[child.name]]
        names = {c.manifest_key: [self.name_of(s) for s in steps[c.name]] for c in kids}
        optional = _optional_child(kids)
        made, left_out = await self.post_tree(step, kind.collection_path(), body, name,
                                              ",".join(tree_fields(kind, kids)), optional.manifest_key,
                                              steps[optional.name], names)
        self.index.add_tree(kind, {**{c.manifest_key: [] for c in kids}, **made, kind.identity: name})
        if left_out:
            raise PartlyDone(left_out)

    # -- update -----------------------------------------------------------------------

    def resolved(self, step: Step) -> dict[str, Any]:
        return resolve_secrets(step, step.desired or {}, self.bodies.secret_values, self.bodies.env)

    def own_update(self, step: Step) -> dict[str, Any]:
        """The body of the object's own PUT: the changed plain fields, references resolved."""
        kind = kinds.get(step.kind)
        desired = self.resolved(step)
        fields: dict[str, Any] = {}
        for name in changed_fields(step):
            if name in kind.ops.writes:
                continue
            if name in desired:
                value = desired[name]
                fields[name] = full_nested(kind, name, value) if name in kind.nested else copy.deepcopy(value)
            else:
                own = field_default(kind, name, self.dialect)
                fields[name] = own if own is not None else default_of(kind, name)
        return self.bodies.body(step, fields) if fields else {}

    async def update(self, step: Step) -> None:
        body = self.own_update(step)
        if body:
            await self.client.put(self.item(step), body)
        await self.update_parts(step)

    async def update_batch(self, steps: tuple[Step, ...]) -> None:
        """Several updates of objects of one kind under one parent (``Kind.write.batch_updates``):
        one ``PUT`` of the parent's collection (``PUT /services/{id}/endpoints``) with an entry
        per object, then the nested parts of each."""
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
            bare = kinds.get(steps[0].kind).manifest_key
            try:
                await self.client.put(self.collection(steps[0]), entries)
            except Invalid as exc:
                # refused because of some entries only (all or nothing): the others go again
                bad = blamed(exc, "", len(entries))
                if bad is None or len(bad) == len(entries):
                    raise named_positions(exc, names, bare) from None
                try:
                    await self.client.put(self.collection(steps[0]), [e for i, e in enumerate(entries) if i not in bad])
                except ApiError as again:
                    raise named_positions(exc if isinstance(again, Invalid) else again, names, bare) from None
                left_out = {sent[i].address: why for i, why in bad.items()}
            except ApiError as exc:
                raise named_positions(exc, names, bare) from None
        await asyncio.gather(*(self.update_parts(s) for s in steps if s.address not in left_out))
        if left_out:
            raise PartlyDone(left_out)

    async def update_parts(self, step: Step) -> None:
        """The nested parts an update changes (``Kind.ops.writes``), in the order declared."""
        fields_ = changed_fields(step)
        for name in kinds.get(step.kind).ops.writes:
            if name in fields_:
                await self.write_part(step, name)

    # -- delete -----------------------------------------------------------------------

    async def delete(self, step: Step) -> None:
        if not kinds.get(step.kind).write.deletable:
            raise StepError(f"a {step.kind} cannot be deleted through the management API; remove it by hand")
        await delete_quietly(self.client, self.item(step))


def _optional_child(kids: Sequence[Kind]) -> Kind:
    """The child kind a nested create may leave out items of: the one no sibling depends on
    (a service's endpoints, not the error sets they use)."""
    return [c for c in kids if not any(c.name in o.depends_on for o in kids)][-1]
