"""Runs one golden scenario: seed the reference server, plan the manifests, render.

The server speaks one of the platform's dialects (``spec`` or ``mashery``, SUPPLEMENT §10).
Seeds are written once, in ``spec`` shapes; :func:`to_dialect` rewrites each request into
what a ``mashery`` server accepts. The client is never told the dialect: it detects it.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.api.dialect import PROBE_PATH
from apimctl.errors import ApimctlError
from apimctl.kinds.dialects import SPEC_NAME, Dialect, dialect_of, translate
from apimctl.manifests import load_manifests
from apimctl.planning import PlanOptions, make_plan
from apimctl.render.json import render_plan as render_json
from apimctl.render.text import render_plan as render_text
from apimctl.server.app import create_app
from apimctl.server.config import ServerConfig
from apimctl.state.live import LiveState, read_call_bound, read_live, unnamed_sources

TOKEN = "scenario-token"
BASE = "http://scenario/v3/rest"
# golden files of a dialect: expected{suffix}.txt / .json beside the scenario's manifests
GOLDEN_SUFFIXES: dict[str, str] = {"spec": "", "mashery": ".mashery"}
DIALECTS: tuple[str, ...] = tuple(GOLDEN_SUFFIXES)
SEED_DIALECT = SPEC_NAME  # the dialect seed.yaml is written in
_PLACEHOLDER = re.compile(r"\{(\w+):([^}]+)\}")
_SERVER_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000")

Request = tuple[str, str, Any]  # method, path, body


@dataclass
class Outcome:
    text: str
    json: str
    reads: int
    bound: int


def goldens(folder: Path, dialect: str) -> tuple[Path, Path]:
    """The expected text and JSON plans of ``folder`` against a ``dialect`` server."""
    suffix = GOLDEN_SUFFIXES[dialect]
    return folder / f"expected{suffix}.txt", folder / f"expected{suffix}.json"


def _client(transport: httpx.AsyncBaseTransport) -> ApiClient:
    return ApiClient(BASE, token=TOKEN, qps=None, transport=transport)


def _ids(state: LiveState) -> dict[str, str]:
    return {f"{o.kind}:{o.key}": o.id for objs in state.objects.values() for o in objs}


def _fill(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: ids[f"{m.group(1)}:{m.group(2)}"], value)
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


# --- seeds in the mashery dialect (SUPPLEMENT §10) ----------------------------------------------

# bodies holding enum values (§10.2): path -> kind, and where the body sits in that kind's object
_ENUM_BODIES: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"/services(/[^/]+)?"), "service", ()),
    (re.compile(r"/services/[^/]+/endpoints(/[^/]+)?"), "endpoint", ()),
    (re.compile(r"/services/[^/]+/securityProfile"), "service", ("securityProfile",)),
    (re.compile(r"/services/[^/]+/securityProfile/oauth"), "service", ("securityProfile", "oauth")),
)
# role permissions (§10.7): written as the holder's whole collection, each with its action
_ROLE_HOLDERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?P<holder>/services/[^/]+)/roles(?:/(?P<id>[^/]+))?"), "service"),
    (re.compile(r"(?P<holder>/packages/[^/]+/plans/[^/]+)/roles(?:/(?P<id>[^/]+))?"), "plan"),
)


def _translate_enums(path: str, body: Any, dialect: Dialect) -> None:
    """The body's enum values (and those of a service's nested endpoints) in place."""
    for pattern, kind, nesting in _ENUM_BODIES:
        if isinstance(body, dict) and pattern.fullmatch(path):
            doc: dict[str, Any] = body
            for key in reversed(nesting):
                doc = {key: doc}
            translate(kinds.get(kind), doc, dialect)
            if kind == "service" and not nesting:
                for endpoint in body.get("endpoints") or []:
                    translate(kinds.ENDPOINT, endpoint, dialect)


async def _role_collection(client: ApiClient, method: str, path: str, body: Any) -> Request | None:
    """An item-level role permission write (POST, PUT or DELETE of one role) as the write of
    the whole collection that has its effect, every role with its action; ``None`` for any
    other request."""
    for pattern, kind in _ROLE_HOLDERS:
        match = pattern.fullmatch(path)
        if match is None or not (match["id"] or method == "POST"):
            continue  # a write of the whole collection is already the collection's way
        collection, action = f"{match['holder']}/roles", kinds.get(kind).ops.writes["roles"].action
        role_id = match["id"] or body["id"]
        roles = [{"id": r["id"], "action": r.get("action") or action}
                 for r in await client.get(collection) or [] if r["id"] != role_id]
        if method != "DELETE":
            roles.append({"id": role_id, "action": (body or {}).get("action") or action})
        return ("PUT", collection, {"roles": roles}) if roles else ("DELETE", collection, None)
    return None


async def to_dialect(client: ApiClient, dialect: Dialect, request: Request) -> Request:
    """``request`` (written for a ``spec`` server) as a server of ``dialect`` accepts it."""
    if dialect.name == SEED_DIALECT:
        return request
    method, path, body = request
    _translate_enums(path, body, dialect)
    if dialect.roles_as_collection:
        return await _role_collection(client, method, path, body) or request
    return request


async def seed(client: ApiClient, requests: list[dict[str, Any]], dialect: str = SEED_DIALECT) -> None:
    """Send the raw requests; ``{kind:key}`` in paths and bodies become live ids; each request
    in the shapes ``dialect`` accepts (:func:`to_dialect`)."""
    table = dialect_of(dialect)
    for req in requests:
        ids = _ids(await read_live(client)) if _PLACEHOLDER.search(str(req)) else {}
        method, path, body = await to_dialect(
            client, table, (req["method"].upper(), _fill(req["path"], ids), _fill(req.get("body"), ids)))
        if method == "POST":
            await client.post(path, body)
        elif method == "PUT":
            await client.put(path, body)
        elif method == "DELETE":
            await client.delete(path)
        else:
            raise ValueError(f"seed: unsupported method {method}")


def scrub(text: str, ids: dict[str, str]) -> str:
    """Stable output: live ids as ``<id kind:key>``, server timestamps as ``<time>``. Ids of
    read-only kinds are left alone: no plan shows them, and the seeded ones are short
    (email template set ``1``) and would match inside other text."""
    for addr, obj_id in sorted(ids.items(), key=lambda kv: -len(kv[1])):
        if kinds.get(addr.partition(":")[0]).read_only:
            continue
        text = text.replace(obj_id, f"<id {addr}>")
    return _SERVER_TIME.sub("<time>", text)


async def run(folder: Path, dialect: str = SEED_DIALECT) -> Outcome:
    """Seed a ``dialect`` server with the folder's requests and plan its manifests."""
    options: dict[str, Any] = {}
    if (folder / "options.yaml").exists():
        options = yaml.safe_load((folder / "options.yaml").read_text()) or {}
    seed_doc = yaml.safe_load((folder / "seed.yaml").read_text()) or {}
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(db_path=str(Path(tmp) / "area.db"), tokens={TOKEN: "area"},
                              auto_approve_domains=True,
                              object_responses=bool(options.get("object_responses", False)),
                              dialect=dialect)
        transport = httpx.ASGITransport(app=create_app(config))
        async with _client(transport) as client:
            await seed(client, seed_doc.get("requests") or [], dialect)
            live = await read_live(client)
        ids = _ids(live)

        async with _client(transport) as client:
            try:
                manifest = load_manifests([str(folder / "manifests")], env=options.get("env") or {})
                # a plan lists no data source its manifests do not name: nor does the bound
                live.skipped = unnamed_sources(manifest.doc)
                plan = await make_plan(client, manifest, PlanOptions(
                    prune=bool(options.get("prune")), targets=tuple(options.get("targets") or ()),
                    ignores=tuple(options.get("ignores") or ()),
                    max_deletes=options.get("max_deletes")))
            except ApimctlError as exc:
                # paths in messages are relative to the scenario folder: goldens travel
                message = scrub(f"Error: {exc}\n".replace(f"{folder}/", ""), ids)
                return Outcome(message, "", client.stats.reads(), read_call_bound(live))
            # the dialect probe (an area without endpoints: one GET) is not part of the live read
            reads = client.stats.reads() - client.stats.calls[("GET", PROBE_PATH)]
        return Outcome(scrub(render_text(plan, color=False), ids), scrub(render_json(plan), ids),
                       reads, read_call_bound(live))
