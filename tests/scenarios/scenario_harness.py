"""Runs one golden scenario: seed the reference server, plan the manifests, render."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from apimctl.api.client import ApiClient
from apimctl.api.dialect import PROBE_PATH
from apimctl.errors import ApimctlError
from apimctl.planning import make_plan
from apimctl.render.json import render_plan as render_json
from apimctl.render.text import render_plan as render_text
from apimctl.server.app import create_app
from apimctl.server.config import ServerConfig
from apimctl.state.live import LiveState, read_call_bound, read_live

TOKEN = "scenario-token"
BASE = "http://scenario/v3/rest"
_PLACEHOLDER = re.compile(r"\{(\w+):([^}]+)\}")
_SERVER_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000")


@dataclass
class Outcome:
    text: str
    json: str
    reads: int
    bound: int


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


async def seed(client: ApiClient, requests: list[dict[str, Any]]) -> None:
    """Send the raw requests; ``{kind:key}`` in paths and bodies become live ids."""
    for req in requests:
        ids = _ids(await read_live(client)) if _PLACEHOLDER.search(str(req)) else {}
        method, path, body = req["method"].upper(), _fill(req["path"], ids), _fill(req.get("body"), ids)
        if method == "POST":
            await client.post(path, body)
        elif method == "PUT":
            await client.put(path, body)
        elif method == "DELETE":
            await client.delete(path)
        else:
            raise ValueError(f"seed: unsupported method {method}")


def scrub(text: str, ids: dict[str, str]) -> str:
    """Stable output: live ids as ``<id kind:key>``, server timestamps as ``<time>``."""
    for addr, obj_id in sorted(ids.items(), key=lambda kv: -len(kv[1])):
        text = text.replace(obj_id, f"<id {addr}>")
    return _SERVER_TIME.sub("<time>", text)


async def run(folder: Path) -> Outcome:
    options: dict[str, Any] = {}
    if (folder / "options.yaml").exists():
        options = yaml.safe_load((folder / "options.yaml").read_text()) or {}
    seed_doc = yaml.safe_load((folder / "seed.yaml").read_text()) or {}
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(db_path=str(Path(tmp) / "area.db"), tokens={TOKEN: "area"},
                              auto_approve_domains=True,
                              object_responses=bool(options.get("object_responses", False)))
        transport = httpx.ASGITransport(app=create_app(config))
        async with _client(transport) as client:
            await seed(client, seed_doc.get("requests") or [])
            live = await read_live(client)
        ids = _ids(live)
        from apimctl.manifests import load_manifests

        async with _client(transport) as client:
            try:
                manifest = load_manifests([str(folder / "manifests")], env=options.get("env") or {})
                plan = await make_plan(client, manifest, prune=bool(options.get("prune")),
                                       targets=options.get("targets") or [],
                                       ignores=options.get("ignores") or [],
                                       max_deletes=options.get("max_deletes"))
            except ApimctlError as exc:
                # paths in messages are relative to the scenario folder: goldens travel
                message = scrub(f"Error: {exc}\n".replace(f"{folder}/", ""), ids)
                return Outcome(message, "", client.stats.reads(), read_call_bound(live))
            # the dialect probe (an area without endpoints: one GET) is not part of the live read
            reads = client.stats.reads() - client.stats.calls[("GET", PROBE_PATH)]
        return Outcome(scrub(render_text(plan, color=False), ids), scrub(render_json(plan), ids),
                       reads, read_call_bound(live))
