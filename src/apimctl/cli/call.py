"""``apimctl call METHOD URL [-H NAME:VALUE]... [--key KEY] [--data BODY]``: one call against
the traffic emulator on the embedded area, with every step's decision.

The call is handled by the reference server's traffic manager on ``.apimctl/local.db`` (the
area ``plan``/``apply`` without ``--url`` work on), exactly as ``apimctl serve
--traffic-port`` would handle it: route, transport, maintenance, key, entitlement, limits,
CORS, forward, return (SUPPLEMENT §11). ``--key`` puts a key (or the first active key of the
member of that username, looked up through the management API) where the routed endpoint reads
keys (:mod:`apimctl.calltests.placing`), on the embedded area as on a running server
(``--traffic-url`` with ``--url``). Back ends are called over the
network; ``--backend ADDRESS=URL`` sends the calls to a system domain to a local back end
instead. ``--at`` runs the call at another time (maintenance windows). Exit 0 whatever the
call's status; 1 on bad input.

``--token`` and ``--operator-token`` (``APIMCTL_CALL_TOKEN``, ``APIMCTL_CALL_OPERATOR_TOKEN``)
are registered with :mod:`apimctl.sensitive` as credentials, and what the call shows (the
decisions, the answer's headers and body) goes through its scrubber.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import click
import httpx

from apimctl import sensitive
from apimctl.cli.common import EXIT_OK
from apimctl.cli.target import EMBEDDED_AREA, EMBEDDED_DB
from apimctl.errors import ApimctlError


def parse_headers(values: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME: VALUE, got {value!r}", param_hint="-H/--header")
        out.append((name.strip(), rest.strip()))
    return out


def parse_backends(values: tuple[str, ...]) -> list[Any]:
    from apimctl.calltests.backends import Stub

    out = []
    for value in values:
        address, sep, url = value.partition("=")
        parsed = httpx.URL(url) if sep else None
        if not address or parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise click.BadParameter(f"expected ADDRESS=http(s)://HOST[:PORT], got {value!r}", param_hint="--backend")
        out.append(Stub(address.lower(), url=url))
    return out


def parse_time(value: str | None) -> float | None:
    if value is None:
        return None
    from apimctl.calltests.timing import parse_instant

    moment = parse_instant(value)
    if moment is None:
        raise click.BadParameter(f"expected an ISO 8601 date-time such as 2030-01-07T10:00:00Z, got {value!r}",
                                 param_hint="--at")
    return moment


@click.command("call")
@click.argument("method")
@click.argument("url")
@click.option("-H", "--header", "headers", multiple=True, metavar="NAME:VALUE", help="A request header (repeatable).")
@click.option("-d", "--data", default=None, help="The request body.")
@click.option("--key", default=None, metavar="KEY", help="A key, or the username of a member (its first active key).")
@click.option("--origin", default=None, help="An Origin header (CORS).")
@click.option("--at", "at", default=None, metavar="TIME", help="Make the call at this time (ISO 8601, UTC by default).")
@click.option("--backend", "backends", multiple=True, metavar="ADDRESS=URL",
              help="Send calls to the system domain ADDRESS to URL instead (repeatable).")
@click.option("--db", default=EMBEDDED_DB, show_default=True, help="Database of the emulated area.")
@click.option("--traffic-url", default=None,
              help="The traffic listener of a running apimctl serve --traffic-port, instead of the embedded area.")
@click.option("--url", "api_url", default=None,
              help="With --traffic-url: that server's management API (to place --key where the endpoint reads it, "
                   "and to find a member's first active key).")
@click.option("--token", default=None, help="Bearer token of --url.")
@click.option("--operator-token", default=None,
              help="With --traffic-url and --url: read the call's decisions from /operator/traffic.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("-i", "--include", is_flag=True, help="Show the answer's headers.")
def command(method: str, url: str, headers: tuple[str, ...], data: str | None, key: str | None,
            origin: str | None, at: str | None, backends: tuple[str, ...], db: str, fmt: str,
            include: bool, traffic_url: str | None, api_url: str | None, token: str | None,
            operator_token: str | None) -> int:
    """Make one call against the traffic emulator and show why it got its answer."""
    sensitive.register_credentials(token, operator_token)  # never shown, nor read by a manifest
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise click.BadParameter(f"expected http(s)://HOST/PATH, got {url!r}", param_hint="URL")
    if traffic_url:
        if at or backends:
            raise click.UsageError("--at and --backend need the embedded area (a running server keeps its own clock "
                                   "and back ends)")
        if key is not None and not api_url:
            raise click.UsageError("--key with --traffic-url needs --url: where the endpoint reads keys, and the "
                                   "keys of a member, are read from that management API")
        result = asyncio.run(_remote(traffic_url, api_url, token, operator_token, method.upper(), parsed,
                                     parse_headers(headers) + ([("Origin", origin)] if origin else []),
                                     (data or "").encode(), key))
        click.echo(render(result, fmt, include), nl=False)
        return EXIT_OK
    if not os.path.isfile(db):
        raise ApimctlError(f"{db}: no such database (apply manifests to the embedded area first, or give --db)")
    header_list = parse_headers(headers) + ([("Origin", origin)] if origin else [])
    when = parse_time(at)
    stubs = parse_backends(backends)
    result = asyncio.run(_call(db, method.upper(), parsed, header_list, (data or "").encode(), key, when, stubs))
    click.echo(render(result, fmt, include), nl=False)
    return EXIT_OK


async def _call(db: str, method: str, url: httpx.URL, headers: list[tuple[str, str]], body: bytes,
                key: str | None, when: float | None, stubs: list[Any]) -> dict[str, Any]:
    import time

    from apimctl.calltests.backends import BackendTransport
    from apimctl.calltests.placing import place_key
    from apimctl.cli.emulator import emulated_services, open_emulator
    from apimctl.server.traffic.model import Call

    transport = BackendTransport(stubs)
    emulator = open_emulator(db, EMBEDDED_AREA, transport=transport)
    try:
        if key is not None:
            async with httpx.AsyncClient(transport=emulator.management, base_url="http://embedded/v3/rest",
                                         headers={"Authorization": f"Bearer {emulator.token}"}) as api:
                value = await key_named(api, key)
            full, headers, body = place_key(emulated_services(emulator)(), method, str(url), headers, body, value)
            url = httpx.URL(full)
        host = url.netloc.decode("ascii")
        if not any(n.lower() == "host" for n, _ in headers):
            headers = [("Host", host), *headers]
        path = url.raw_path.split(b"?", 1)[0].decode("ascii") or "/"  # as sent: the manager normalises it
        call = Call(method, url.scheme, host, path, list(httpx.QueryParams(url.query).multi_items()),
                    headers, body, when if when is not None else time.time())
        answer, trace = await emulator.manager.handle(call)
        await emulator.manager.aclose()
    finally:
        emulator.close()
    return {"status": answer.status, "headers": answer.headers, "body": answer.body.decode("utf-8", "replace"),
            "decidedBy": trace.deciding, "steps": [{"step": d.step, "decision": trace.masked(d.text)} for d in trace.decisions]}


async def _remote(traffic_url: str, api_url: str | None, token: str | None, operator_token: str | None,
                  method: str, url: httpx.URL, headers: list[tuple[str, str]], body: bytes,
                  key: str | None) -> dict[str, Any]:
    """The call sent to a running traffic listener; its decisions from ``/operator/traffic``
    (the latest call of that method, host and path) when the operator token is given."""
    from apimctl.calltests.placing import CallerError, place_key, read_services
    from apimctl.cli.target import api_base

    base = api_base(api_url) if api_url else None
    full = str(url)
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=60) as client:
        if key is not None and base:
            try:
                async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as api:
                    value = await key_named(api, key)
                    services = await read_services(api)
            except httpx.HTTPError as exc:
                raise ApimctlError(f"cannot reach the management API {base}: {type(exc).__name__}") from None
            except CallerError as exc:
                raise ApimctlError(f"{base}: {exc}") from None
            full, headers, body = place_key(services, method, full, headers, body, value)
        target = httpx.URL(full)
        sent = [*headers, ("Host", target.netloc.decode("ascii")), ("X-Forwarded-Proto", target.scheme)]
        path = target.raw_path.decode("ascii")
        try:
            answer = await client.request(method, traffic_url.rstrip("/") + path, headers=sent, content=body)
        except httpx.HTTPError as exc:
            raise ApimctlError(f"cannot reach the traffic listener {traffic_url}: {exc}") from None
        entry: dict[str, Any] = {}
        if base and operator_token:
            origin = httpx.URL(base).copy_with(path="/operator/traffic", query=None)
            log = await client.get(str(origin), headers={"Authorization": f"Bearer {operator_token}"})
            if log.status_code == 200:
                entry = next((e for e in reversed(log.json()) if e["method"] == method and e["path"] == target.path
                              and e["host"] == target.netloc.decode("ascii")), {})
    steps = entry.get("steps") or [{"step": "decisions", "decision": "not read (give --url and --operator-token)"}]
    return {"status": answer.status_code, "headers": list(answer.headers.multi_items()), "body": answer.text,
            "decidedBy": entry.get("decidedBy", "unknown"), "steps": steps}


async def key_named(api: httpx.AsyncClient, named: str) -> str:
    """The key ``--key`` names: the first active key of the member of that username (read
    through the management API ``api``), else ``named`` itself."""
    from apimctl.calltests.placing import member_key

    return await member_key(api, named) or named


def render(result: dict[str, Any], fmt: str, include: bool) -> str:
    """The call's decisions and answer, as text or JSON; scrubbed (:mod:`apimctl.sensitive`)
    before it is escaped for JSON, and after."""
    return sensitive.scrub(_render(_scrubbed(result), fmt, include))


def _scrubbed(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with every text scrubbed."""
    return {**result, "headers": [(sensitive.scrub(n), sensitive.scrub(v)) for n, v in result["headers"]],
            "body": sensitive.scrub(result["body"]), "decidedBy": sensitive.scrub(str(result["decidedBy"])),
            "steps": [{k: sensitive.scrub(str(v)) for k, v in step.items()} for step in result["steps"]]}


def _render(result: dict[str, Any], fmt: str, include: bool) -> str:
    if fmt == "json":
        shown = {**result, "headers": [[n, v] for n, v in result["headers"]]}
        return json.dumps(shown, indent=2) + "\n"
    lines = [f"{s['step']}: {s['decision']}" for s in result["steps"]]
    lines.append(f"answer: {result['status']} (decided by {result['decidedBy']})")
    if include:
        lines += [f"{n}: {v}" for n, v in result["headers"]]
    if result["body"]:
        lines += ["", result["body"].rstrip("\n")]
    return "\n".join(lines) + "\n"
