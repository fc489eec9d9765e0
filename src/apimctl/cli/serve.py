"""`apimctl serve`: run the reference server under uvicorn.

Parses the options into a :class:`~apimctl.server.ServerConfig` and hands over to uvicorn;
nothing else happens here.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from apimctl.errors import ApimctlError
from apimctl.server.dialects import NAMES as DIALECT_NAMES
from apimctl.server.errors import ServerConfigError

if TYPE_CHECKING:  # the server itself is imported when it is started, not for every command
    from apimctl.server import ServerConfig

DEV_TOKEN, DEV_AREA = "dev", "default"
SHUTDOWN_GRACE = 3  # seconds calls in flight get after SIGTERM before they are cancelled
DEFAULT_DB = str(Path(".apimctl") / "server.db")
SHAPES = {"--token": "TOKEN=AREA", "--client": "KEY:SECRET", "--user": "USER:PASSWORD:AREA"}


def _pairs(values: tuple[str, ...], sep: str, option: str, parts: int = 2) -> list[list[str]]:
    out = []
    for value in values:
        items = value.split(sep, parts - 1)
        if len(items) != parts or not all(items):
            raise click.BadParameter(f"expected {SHAPES[option]}, got {value!r}", param_hint=option)
        out.append(items)
    return out


def _check_db(db: str) -> None:
    """The database's directory must exist (only the default ``.apimctl/`` is created): a typo
    in ``--db`` must not silently start an empty area somewhere else."""
    parent = Path(db).parent
    if db != DEFAULT_DB and not parent.is_dir():
        raise ApimctlError(f"--db {db}: the directory {parent} does not exist (create it first)")


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything is created or printed."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ApimctlError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ApimctlError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _events_config(path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    from apimctl.server.events import load_events_config

    try:
        return load_events_config(path)
    except ServerConfigError as exc:  # already says where
        raise ApimctlError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise ApimctlError(f"{path}: {exc}") from None


def build_config(db: str, tokens: tuple[str, ...], clients: tuple[str, ...], users: tuple[str, ...],
                 **options: Any) -> tuple[ServerConfig, bool]:
    """The server configuration of the options; True when the development token was added."""
    token_map = {t: a for t, a in _pairs(tokens, "=", "--token")}
    client_map = {k: s for k, s in _pairs(clients, ":", "--client")}
    user_list = [(u, p, a) for u, p, a in _pairs(users, ":", "--user", 3)]
    dev = not token_map and not user_list
    if dev:
        token_map[DEV_TOKEN] = DEV_AREA
    from apimctl.server import ServerConfig

    return ServerConfig(db_path=db, tokens=token_map, clients=client_map, users=user_list, **options), dev


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="Port to listen on.")
@click.option("--db", default=DEFAULT_DB, show_default=True, help="SQLite database file (its directory must exist).")
@click.option("--token", "tokens", multiple=True, metavar="TOKEN=AREA", help="Static bearer token bound to an area (repeatable).")
@click.option("--client", "clients", multiple=True, metavar="KEY:SECRET", help="API client for POST /v3/token (repeatable).")
@click.option("--user", "users", multiple=True, metavar="USER:PASSWORD:AREA", help="User for the password grant (repeatable).")
@click.option("--auto-approve-domains", is_flag=True, help="New domains are active at once.")
@click.option("--object-responses", is_flag=True, help="Answer single objects bare instead of as one-element arrays.")
@click.option("--operator-token", default=None, help="Bearer token of the /operator endpoints.")
@click.option("--qps", type=click.FloatRange(0, min_open=True), default=None, help="Per-token calls per second (403 ERR_403_DEVELOPER_OVER_QPS beyond).")
@click.option("--daily-quota", type=click.IntRange(0), default=None, help="Per-token calls per day (403 ERR_403_DEVELOPER_OVER_RATE beyond).")
@click.option("--quota-headers", is_flag=True,
              help="With --daily-quota: answers carry X-Packagekey-Quota-Allotted, -Current and X-Plan-Quota-Reset.")
@click.option("--fault-rate", type=click.FloatRange(0.0, 1.0), default=0.0, help="Share of management calls that fail on purpose.")
@click.option("--fault-seed", type=int, default=None, help="Seed of the fault injector.")
@click.option("--fault-token", "fault_tokens", multiple=True, metavar="TOKEN",
              help="Inject faults only into the calls made with this bearer token (repeatable; default: every call).")
@click.option("--fault-kind", "fault_kinds", multiple=True, type=click.Choice(["503", "500", "drop", "delay", "lost"]),
              help="The faults injected (repeatable; default: every kind).")
@click.option("--events-config", type=click.Path(exists=True, dir_okay=False), default=None, help="YAML file of event triggers.")
@click.option("--dialect", type=click.Choice(DIALECT_NAMES), default="spec", show_default=True,
              envvar="APIMCTL_SERVE_DIALECT",
              help="spec: the platform's specification; mashery: as real deployments answer "
                   "(README, Against a real area).")
@click.option("--nested-wildcards/--no-nested-wildcards", default=None,
              help="Whether `X.*` in `fields` returns every field of X; without, only a top-level "
                   "`fields=*` is a wildcard, as on real areas (README, Against a real area). Default: the dialect's.")
@click.option("--traffic-port", type=click.IntRange(0, 65535), default=None,
              help="Also run the traffic manager (what callers of the endpoints see: README, What will a caller see) on this port.")
@click.option("--traffic-host", default="127.0.0.1", show_default=True, help="Address of the traffic listener.")
@click.option("--traffic-max-connections", type=click.IntRange(1), default=1000, show_default=True,
              help="Connections open at once to the traffic listener (one more is answered 503 and closed).")
@click.option("--traffic-idle-timeout", type=click.FloatRange(0, min_open=True), default=5.0, show_default=True,
              help="Seconds a traffic connection may stay without a complete request head before it is closed.")
@click.option("--backend-connections", type=click.IntRange(1), default=20, show_default=True,
              help="Connections open at once to one back end (scheme, host, port); a call finding none free "
                   "within the endpoint's connect timeout is a 502.")
@click.option("--backend-max-answer", type=click.IntRange(1), default=64 * 1024 * 1024, show_default=True,
              help="Longest back-end answer body forwarded, in bytes (a longer one is a 502).")
def command(host: str, port: int, db: str, tokens: tuple[str, ...], clients: tuple[str, ...],
            users: tuple[str, ...], auto_approve_domains: bool, object_responses: bool,
            operator_token: str | None, qps: float | None, daily_quota: int | None,
            quota_headers: bool, fault_rate: float, fault_seed: int | None, fault_tokens: tuple[str, ...],
            fault_kinds: tuple[str, ...], events_config: str | None, dialect: str,
            nested_wildcards: bool | None, traffic_port: int | None, traffic_host: str,
            traffic_max_connections: int, traffic_idle_timeout: float, backend_connections: int,
            backend_max_answer: int) -> None:
    """Run the reference server (management API under /v3/rest)."""
    _check_db(db)
    config, dev = build_config(
        db, tokens, clients, users,
        auto_approve_domains=auto_approve_domains, object_responses=object_responses,
        operator_token=operator_token, qps=qps, daily_quota=daily_quota, quota_headers=quota_headers, fault_rate=fault_rate,
        fault_seed=fault_seed, fault_tokens=fault_tokens, fault_kinds=fault_kinds,
        events_config=_events_config(events_config), dialect=dialect,
        nested_wildcards=nested_wildcards,
    )
    sock = _bind(host, port)
    traffic_sock = _bind(traffic_host, traffic_port) if traffic_port is not None else None
    app = _app(config)
    port = sock.getsockname()[1]
    shown = "" if dialect == "spec" else f", dialect {dialect}"
    click.echo(f"apimctl reference server on http://{host}:{port}/v3/rest (database {db}{shown})", err=True)
    listeners = [(app, host, port, sock)]
    bounds = None
    if traffic_sock is not None:
        from apimctl.server.traffic import create_traffic_app
        from apimctl.server.traffic.connections import KeepAliveTransport
        from apimctl.server.traffic.listener import Bounds

        bounds = Bounds(idle_timeout=traffic_idle_timeout, max_connections=traffic_max_connections)
        traffic_port = traffic_sock.getsockname()[1]
        traffic_app = create_traffic_app(app, transport=KeepAliveTransport(per_backend=backend_connections),
                                         max_answer_bytes=backend_max_answer)
        listeners.append((traffic_app, traffic_host, traffic_port, traffic_sock))
        click.echo(f"traffic manager on http://{traffic_host}:{traffic_port} (calls routed by Host and path; "
                   "recent calls: GET /operator/traffic with the operator token)", err=True)
    if dev:
        click.echo(f"No --token or --user given: accepting the development token "
                   f"'Authorization: Bearer {DEV_TOKEN}' for area '{DEV_AREA}'.", err=True)
    _run(listeners, bounds)


def _app(config: ServerConfig) -> Any:
    from apimctl.server import create_app

    try:
        return create_app(config)
    except (OSError, sqlite3.Error) as exc:
        raise ApimctlError(f"cannot open the database {config.db_path}: {exc}") from None


def _run(listeners: list[tuple[Any, str, int, socket.socket]], bounds: Any = None) -> None:
    """Serve until interrupted (the management API, and the traffic manager when asked for,
    in one event loop); a server that cannot start is an error (exit 1), not uvicorn's exit 3.
    The management API keeps uvicorn's h11 parser (:data:`UVICORN_OPTIONS`); the traffic
    listener takes uvicorn's fastest one installed (httptools, else h11) with the bounds of
    :mod:`~apimctl.server.traffic.listener` (``bounds``), and the loop is uvloop's where it is
    installed. After SIGTERM (or Ctrl-C) calls in flight get :data:`SHUTDOWN_GRACE` seconds,
    then are cancelled (a forward waiting on a slow back end with them)."""
    import uvicorn

    from apimctl.server import UVICORN_OPTIONS

    def options(index: int) -> dict[str, Any]:
        if not index:
            return dict(UVICORN_OPTIONS)
        from apimctl.server.traffic.listener import Bounds, protocol_class

        own = bounds if bounds is not None else Bounds()
        return {"http": protocol_class(own), "timeout_keep_alive": own.idle_timeout}

    servers = [uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                             timeout_graceful_shutdown=SHUTDOWN_GRACE, **options(index)))
               for index, (app, host, port, _) in enumerate(listeners)]
    with contextlib.suppress(SystemExit):  # uvicorn exits with 3 when it cannot start
        if len(servers) == 1:
            servers[0].run(sockets=[listeners[0][3]])
        else:
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                runner.run(_serve_all(servers, [sock for *_, sock in listeners]))
    for server, (_, host, port, _) in zip(servers, listeners, strict=True):
        if not server.started:
            raise ApimctlError(f"cannot listen on {host}:{port} (see the message above)")


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (as uvicorn picks for one server), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _serve_all(servers: list[Any], sockets: list[socket.socket]) -> None:
    """Run several uvicorn servers together; when one is told to stop (a signal reaches the
    one whose handler is installed last) or stops, all stop at once (each with its grace)."""
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in zip(servers, sockets, strict=True)]
    try:
        while not any(server.should_exit for server in servers) and not any(t.done() for t in tasks):
            await asyncio.sleep(0.1)
    finally:
        for server in servers:
            server.should_exit = True
        await asyncio.gather(*tasks, return_exceptions=True)
