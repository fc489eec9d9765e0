"""`apply` of a small change reads again only what it touched, and counts every call.

A change to a few objects of a larger area (endpoints of one service updated, one removed and
one added in two others, a service description, one plan, a new role, a maintenance event)
is applied; the convergence check must read again exactly the touched top-level objects (the
services, the package, the role, the event), each kind in one list call filtered by id, with
the ``fields`` projection of the live read, and nothing else; the plan is not made again under
the lease (the area did not change meanwhile), and the result's call count is every call the
server saw. Asserted by call counts, never by timings; against both dialects:

- in-process (the reference server app behind ``httpx.ASGITransport``, every request recorded
  with its query), through the apply command's core function;
- against ``apimctl serve`` in a subprocess, through the CLI (`apply --format json`), with the
  server's own count (``GET /operator/calls``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
import yaml

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.snapshot import snapshot_fields
from apimctl.plans.result import ApplyResult

from .apply_support import Runs, Server, apply_summary, count_calls, server
from .export_support import client_for, server_app

SERVICES = 60
API = "/v3/rest"
TOP = {k.collection_path(): k for k in kinds.TOP_LEVEL}
# the kinds an apply reads: the data sources (read only) when the manifests name one; these name none
READ = {p: k for p, k in TOP.items() if not k.read_only}


def endpoint(s: int, e: int, max_age: int = 60) -> dict[str, Any]:
    return {"name": f"ep-{e}", "requestPathAlias": f"/s{s}/e{e}", "trafficManagerDomain": "api.example.com",
            "publicDomains": ["api.example.com"], "systemDomains": ["backend.example.com"],
            "cors": {"allDomainsEnabled": False, "maxAge": max_age}}


def area(changed: bool = False) -> dict[str, Any]:
    """``SERVICES`` services of two endpoints, three packages of three plans, two roles, an
    event; ``changed``: the small change (see the module docstring)."""
    services = []
    for s in range(SERVICES):
        svc: dict[str, Any] = {"name": f"svc-{s:02d}", "description": f"service {s}",
                               "endpoints": [endpoint(s, 0), endpoint(s, 1)]}
        services.append(svc)
    packages = [{"name": f"pkg-{p}", "plans": [
        {"name": f"plan-{k}", "qpsLimitCeiling": 10,
         "services": [{"name": f"svc-{3 * p + k:02d}", "endpoints": [{"name": "ep-0"}]}]} for k in range(3)]}
        for p in range(3)]
    doc: dict[str, Any] = {
        "domains": ["example.com"], "roles": ["Partners", "Interns"], "services": services,
        "packages": packages,
        "scheduledMaintenanceEvents": [{"name": "Upgrade", "startDateTime": "2026-12-01T02:00:00Z",
                                        "endDateTime": "2026-12-01T04:00:00Z",
                                        "endpoints": [{"service": "svc-00", "endpoint": "ep-0"}]}],
    }
    if changed:
        services[3]["endpoints"] = [endpoint(3, 0, 120), endpoint(3, 1, 120)]
        services[11]["description"] = "service 11 (changed)"
        services[7]["endpoints"] = [endpoint(7, 0)]
        services[15]["endpoints"].append(endpoint(15, 2))
        packages[1]["plans"][2]["qpsLimitCeiling"] = 20
        doc["roles"].append("Readers")
        doc["scheduledMaintenanceEvents"][0]["endDateTime"] = "2026-12-01T05:00:00Z"
    return doc


TOUCHED = {"/services": {"svc-03", "svc-07", "svc-11", "svc-15"}, "/packages": {"pkg-1"},
           "/roles": {"Readers"}, "/scheduledMaintenanceEvents": {"Upgrade"}}


def write(folder: Path, doc: dict[str, Any]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "area.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(folder)


# --- in-process: every request with its query ---------------------------------------------------


class Recorded:
    """The server app, recording ``(method, path, query pairs)`` of every request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, str, list[tuple[str, str]]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            query = scope.get("query_string", b"").decode()
            if "?" in path:  # some transports keep the query in the path
                path, _, query = path.partition("?")
            self.requests.append((scope["method"], path, parse_qsl(query, keep_blank_values=True)))
        await self.app(scope, receive, send)

    def api(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """The management API's requests, paths relative to its base."""
        return [(m, p[len(API):], q) for m, p, q in self.requests if p.startswith(API + "/")]


def run_apply(app: Recorded, folder: str) -> ApplyResult:
    return asyncio.run(apply(ApplyRequest(paths=(folder,), target="in-process"), lambda: client_for(app)))


async def ids_by_name(app: Any) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    async with client_for(app) as client:
        assert isinstance(client, ApiClient)
        for path, kind in TOP.items():
            items = await client.list_all(path, {"fields": f"id,{kind.identity}"}, page_index=kind.page_index)
            out[path] = {str(i[kind.identity]): str(i["id"]) for i in items}
    return out


@pytest.fixture
def recorded(tmp_path: Path, dialect: str) -> Iterator[Recorded]:
    yield Recorded(server_app(tmp_path / "area.db", dialect=dialect))


def test_a_small_apply_reads_again_only_the_touched_parents(recorded: Recorded, tmp_path: Path) -> None:
    loaded = run_apply(recorded, write(tmp_path / "base", area()))
    assert loaded.ok, loaded.to_json()
    recorded.requests.clear()
    result = run_apply(recorded, write(tmp_path / "changed", area(changed=True)))
    assert result.ok, result.to_json()
    assert result.summary()["done"] == 8 and not result.non_converged
    seen = recorded.api()
    assert result.calls == len(seen)  # every call: the reads, the lease, the writes, the check
    assert result.write_calls == sum(1 for m, _, _ in seen if m not in ("GET", "HEAD"))

    ids = asyncio.run(ids_by_name(recorded.app))
    by_id = [(p, dict(q)) for m, p, q in seen if m == "GET" and dict(q).get("filter", "").startswith("id:")]
    # one list call per touched kind, with the ids of exactly the touched objects and the
    # projection of the live read
    assert sorted(p for p, _ in by_id) == sorted(TOUCHED)
    for path, query in by_id:
        wanted = {ids[path][name] for name in TOUCHED[path]}
        assert set(query["filter"][3:].split("|")) == wanted, path
        assert query["fields"] == TOP[path].fields_param()

    # the area read once in full (the plan), then only its snapshot under the lease
    full = Counter(p for m, p, q in seen if m == "GET" and p in TOP and "filter" not in dict(q)
                   and dict(q).get("fields") == TOP[p].fields_param())
    light = Counter(p for m, p, q in seen if m == "GET" and p in TOP and "filter" not in dict(q)
                    and dict(q).get("fields") == ",".join(snapshot_fields(TOP[p])))
    same = {p for p, k in READ.items() if ",".join(snapshot_fields(k)) == k.fields_param()}
    assert full == {p: 1 + (p in same) for p in READ}
    assert light == {p: 1 + (p in same) for p in READ}

    recorded.requests.clear()
    again = run_apply(recorded, write(tmp_path / "changed", area(changed=True)))
    assert again.ok and again.plan is not None and not again.plan.steps  # converged: nothing left
    assert again.calls == len(recorded.api()) == len(READ)  # the read the plan was made from


# --- against `apimctl serve`: the server's own count ----------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect_options: tuple[str, ...]) -> Iterator[Server]:
    with server(tmp_path_factory.mktemp("convergence"), *dialect_options, areas=2) as srv:
        yield srv


def gets(srv: Server) -> Counter[str]:
    return Counter({str(c["path"])[len(API):]: int(c["count"]) for c in srv.calls()["calls"]
                    if c["method"] == "GET" and str(c["path"]).startswith(API + "/")})


def test_the_calls_line_counts_every_call_the_server_saw(served: Server, tmp_path: Path) -> None:
    token = served.fresh_token()
    runs = Runs()
    base = runs.run(served, "apply", "--auto-approve", write(tmp_path / "base", area()), token=token)
    assert base.returncode == 0, base.stdout + base.stderr
    all_methods = ("GET", "HEAD", "POST", "PUT", "DELETE")
    before, before_gets, before_writes = count_calls(served.calls(), all_methods), gets(served), served.writes()
    proc = runs.run(served, "apply", "--auto-approve", "--format", "json",
                    write(tmp_path / "changed", area(changed=True)), token=token)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = apply_summary(proc.stdout)
    assert summary["summary"]["non_converged"] == 0 and summary["summary"]["done"] == 8
    assert summary["calls"]["total"] == count_calls(served.calls(), all_methods) - before
    assert summary["calls"]["writes"] == served.writes() - before_writes
    lists = gets(served) - before_gets
    # each top-level list: the plan's read and the snapshot under the lease, and one call of
    # the convergence check for each kind the change touched (the lease is released by its id,
    # with no look-up)
    assert {p: lists[p] for p in TOP} == {p: 2 + (p in TOUCHED) if p in READ else 0 for p in TOP}
    text = runs.run(served, "apply", "--auto-approve", write(tmp_path / "changed", area(changed=True)),
                    token=token)
    assert text.returncode == 0 and "No changes" in text.stdout
