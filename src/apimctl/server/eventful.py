"""Writes of resources with event triggers (members, applications, package keys).

The engine hands a write here when the document it addresses has ``events`` in its catalog
rules. Order: preview payloads (read transaction), a trial of the write when any receiver
would hear of it (rolled back, so a write the server refuses never reaches one), the pre
events (theirs may change the body or veto), the write itself (:func:`apimctl.server.writes.write`),
then the post events after the commit. Objects created inside the body and objects a delete
takes along get events of their own, each with its own ``txn``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Protocol

from apimctl.server import catalog
from apimctl.server.config import ServerConfig
from apimctl.server.context import Env
from apimctl.server.fields import Resource
from apimctl.server.messages import ApiRequest, ApiResponse
from apimctl.server.store import Store
from apimctl.server.tree import Step, method_not_allowed
from apimctl.server.triggers import (
    NestedCreate,
    apply_event_changes,
    event_after,
    event_preview,
    payload_of,
)
from apimctl.server.writes import write

_EVENTS = {"create": "create", "update": "update", "delete": "delete"}
_Post = tuple[str, dict[str, Any], str, str]  # event object, payload, id, body path


class Dispatcher(Protocol):
    """What the engine needs of an event dispatcher (:class:`apimctl.server.events.EventDispatcher`)."""

    def pre(self, area: str, obj: str, event: str, payload: dict[str, Any] | None,
            obj_id: str | None, txn: str) -> dict[str, Any]: ...

    def post(self, area: str, obj: str, event: str, payload: dict[str, Any] | None,
             obj_id: str | None, txn: str) -> None: ...

    def new_txn(self) -> str: ...

    def enabled(self, area: str, obj: str, event: str) -> bool: ...


class NoEvents:
    """Stands in for the event dispatcher when none is configured."""

    def pre(self, area: str, obj: str, event: str, payload: dict[str, Any] | None,
            obj_id: str | None, txn: str) -> dict[str, Any]:
        return {}

    def post(self, area: str, obj: str, event: str, payload: dict[str, Any] | None,
             obj_id: str | None, txn: str) -> None:
        return None

    def new_txn(self) -> str:
        return "0" * 32

    def enabled(self, area: str, obj: str, event: str) -> bool:
        return False

    def log(self) -> list[dict[str, Any]]:
        return []


@dataclass
class _Preview:
    """What the pre events show, read before anything is written."""

    payload: dict[str, Any] | None
    obj_id: str | None
    nested: list[NestedCreate] = field(default_factory=list)
    cascade: list[tuple[str, str]] = field(default_factory=list)  # (event object, id)


class EventfulWrites:
    """Runs writes of resources with event triggers around the dispatcher's calls."""

    def __init__(self, config: ServerConfig, store: Store, events: Dispatcher) -> None:
        self.config = config
        self.store = store
        self.events = events

    def write(self, req: ApiRequest, steps: list[Step], op: str, di: int) -> ApiResponse:
        event = _EVENTS.get(op)
        if event is None:
            raise method_not_allowed(req.method, "/" + "/".join(req.segments))
        res = catalog.resource(steps[di].node.resource, self.config.dialect)
        obj = res.rules.events
        assert obj is not None, res.name
        txn_id = self.events.new_txn()
        preview = self._preview(req, steps, op, di, res)
        self._trial(req, steps, op, di, obj, event, preview)
        changes = self.events.pre(req.area, obj, f"pre-{event}", preview.payload, preview.obj_id, txn_id)
        if changes and isinstance(req.body, dict):
            req.body = apply_event_changes(req.body, changes)
        nested_txns = self._nested_pre(req.area, preview.nested)
        cascade_txns = self._cascade_pre(req.area, preview.cascade)
        resp, (payload, obj_id), nested_posts = self._commit(req, steps, op, di, res, preview)
        self.events.post(req.area, obj, f"post-{event}", payload, obj_id, txn_id)
        for kind, payload, obj_id, where in nested_posts:
            nested_txn = nested_txns.get(where) or self.events.new_txn()
            self.events.post(req.area, kind, "post-create", payload, obj_id, nested_txn)
        for kind, child, child_txn in cascade_txns:
            self.events.post(req.area, kind, "post-delete", None, child, child_txn)
        return resp

    def _env(self, txn: Any, req: ApiRequest) -> Env:
        return Env(txn, req.area, self.config, req.user, catalog.of(self.config.dialect))

    def _preview(self, req: ApiRequest, steps: list[Step], op: str, di: int, res: Resource) -> _Preview:
        with self.store.read() as txn:
            env = self._env(txn, req)
            payload, obj_id = event_preview(env, steps, di, op, req.body)
            preview = _Preview(payload, obj_id)
            if op == "create" and res.rules.event_nested is not None:
                preview.nested = res.rules.event_nested(env, steps, di, req.body)
            if op == "delete" and res.rules.event_cascade is not None:
                preview.cascade = res.rules.event_cascade(env, obj_id)
        return preview

    def _trial(self, req: ApiRequest, steps: list[Step], op: str, di: int, obj: str, event: str,
               preview: _Preview) -> None:
        """A write the server would refuse anyway is refused before any receiver hears of it."""
        pres = [(obj, f"pre-{event}")] + [(n.kind, "pre-create") for n in preview.nested] + \
               [(kind, "pre-delete") for kind, _ in preview.cascade]
        if any(self.events.enabled(req.area, o, e) for o, e in pres):
            with self.store.trial() as txn:
                write(copy.deepcopy(req), steps, op, di, txn, self.config)

    def _nested_pre(self, area: str, nested: list[NestedCreate]) -> dict[str, str]:
        """Pre-create events of the objects created inside the body (each its own txn);
        their changes go into the body before anything is written."""
        txns: dict[str, str] = {}
        for item in nested:
            txns[item.path] = txn_id = self.events.new_txn()
            changes = self.events.pre(area, item.kind, "pre-create", item.payload, None, txn_id)
            if changes:
                item.holder[item.index] = apply_event_changes(item.holder[item.index], changes)
        return txns

    def _cascade_pre(self, area: str, cascade: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
        txns = [(kind, child, self.events.new_txn()) for kind, child in cascade]
        for kind, child, child_txn in txns:
            self.events.pre(area, kind, "pre-delete", None, child, child_txn)
        return txns

    def _commit(self, req: ApiRequest, steps: list[Step], op: str, di: int, res: Resource, preview: _Preview
                ) -> tuple[ApiResponse, tuple[dict[str, Any] | None, str | None], list[_Post]]:
        """The write; the post payload of the object, and those of the objects created inside."""
        with self.store.write() as txn:
            resp = write(req, steps, op, di, txn, self.config)
            env = self._env(txn, req)
            post = event_after(env, res, op, resp.stored, preview.obj_id)
            nested: list[_Post] = []
            for created, doc, where in resp.created:
                assert created.rules.events is not None, created.name
                nested.append((created.rules.events, payload_of(env, created, doc), doc["id"], where))
        return resp, post, nested
