"""Shared vocabulary of the export, drift and examples tests: an in-process reference server
(``httpx.ASGITransport``, one SQLite file per test) in either dialect (``server_app(db,
dialect=...)``, SUPPLEMENT §10; the suites take it from the ``dialect`` fixture), the pipeline
steps as plain calls (load, plan, apply, export), and the secret variables an export
references.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from apimctl.api.auth import Credentials
from apimctl.api.client import ApiClient
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.export import Export, export_area, write_export
from apimctl.manifests import Manifest, load_manifests, validate_paths
from apimctl.planning import make_plan
from apimctl.plans.model import Plan
from apimctl.server import ServerConfig, create_app

from .inprocess import close_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BASE = "http://testserver/v3/rest"
TOKEN = "export-tests-token"
AREA = "area-export"
CLIENT_KEY, CLIENT_SECRET = "ci-key", "ci-secret"
EDITOR, EDITOR_PASSWORD = "alice", "alice-password-1"


def server_app(db: Path, *, object_responses: bool = False, dialect: str = "spec") -> Any:
    """The reference server app on ``db``: a static token and one user for the token exchange;
    ``dialect``: ``spec`` or ``mashery`` (SUPPLEMENT §10)."""
    return create_app(ServerConfig(
        db_path=str(db), tokens={TOKEN: AREA}, clients={CLIENT_KEY: CLIENT_SECRET},
        users=[(EDITOR, EDITOR_PASSWORD, AREA)], auto_approve_domains=True,
        object_responses=object_responses, dialect=dialect))


@asynccontextmanager
async def client_for(app: Any, *, as_user: bool = False) -> AsyncIterator[ApiClient]:
    """A client of ``app``: with the static token, or as the user ``alice`` (token exchange)."""
    transport = httpx.ASGITransport(app=app)
    if as_user:
        creds = Credentials(CLIENT_KEY, CLIENT_SECRET, EDITOR, EDITOR_PASSWORD, AREA)
        client = ApiClient(BASE, credentials=creds, qps=None, transport=transport)
    else:
        client = ApiClient(BASE, token=TOKEN, qps=None, transport=transport)
    try:
        async with client:
            yield client
    finally:
        close_server(app)


def read_env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of an ``example.env`` (comments and blanks skipped)."""
    env: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.lstrip().startswith("#") and "=" in line:
                name, _, value = line.partition("=")
                env[name.strip()] = value.strip()
    return env


def load(paths: Sequence[Path | str], env: Mapping[str, str],
         overlays: Sequence[Path | str] = ()) -> Manifest:
    problems = [p for p in validate_paths([str(p) for p in paths], [str(o) for o in overlays],
                                          env=dict(env)) if p.severity == "error"]
    assert not problems, "\n".join(str(p) for p in problems)
    return load_manifests([str(p) for p in paths], [str(o) for o in overlays], env=dict(env))


async def apply(client: ApiClient, manifest: Manifest, env: Mapping[str, str]) -> Plan:
    """Plan and apply ``manifest``; assert every step was done and converged."""
    plan = await make_plan(client, manifest)
    result = await apply_plan(client, plan, ApplyOptions(env=dict(env)))
    assert result.ok, result.to_json()
    return plan


async def replan(client: ApiClient, manifest: Manifest) -> Plan:
    return await make_plan(client, manifest)


def describe(plan: Plan) -> str:
    return "\n".join(f"{s.action} {s.address}: " + ", ".join(
        f"{c.path}: {c.before!r} -> {c.after!r}" for c in s.changes) for s in plan.steps)


SECRET_FIELDS = ("systemDomainCredentialSecret",)
_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def secret_values(manifest: Manifest) -> dict[tuple[str, str], str]:
    """(service, endpoint) -> the resolved ``systemDomainCredentialSecret`` a manifest set."""
    out = {}
    for svc in manifest.doc.get("services") or []:
        for ep in svc.get("endpoints") or []:
            value = ep.get("systemDomainCredentialSecret")
            if isinstance(value, str) and value:
                out[(svc["name"], ep["name"])] = value
    return out


def export_env(folder: Path, known: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """Values for the variables an export in ``folder`` references: each endpoint's secret
    as the area holds it (``known``), and any value for write-only passwords."""
    env: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for svc in doc.get("services") or []:
            for ep in svc.get("endpoints") or []:
                ref = _REF.match(str(ep.get("systemDomainCredentialSecret", "")))
                if ref:
                    names = (_unescape(svc["name"]), _unescape(ep["name"]))
                    env[ref.group(1)] = known[names]
                auth = ep.get("systemDomainAuthentication")
                if isinstance(auth, dict):
                    pw = _REF.match(str(auth.get("password", "")))
                    if pw:
                        env[pw.group(1)] = "write-only-password"
    return env


def _unescape(text: str) -> str:
    return text.replace("$${", "${")


async def export_to(client: ApiClient, folder: Path, **options: Any) -> Export:
    result = await export_area(client, **options)
    write_export(result, str(folder))
    return result
