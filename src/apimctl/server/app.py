"""The Starlette application of the reference server: HTTP in, engine, HTTP out.

:func:`create_app` wires the store, the authenticator, the request engine, the event
dispatcher and the server-side controls. Routes are generated from the resource tree (one
per path template, so call counters see ``/v3/rest/services/{serviceId}``), all served by
one adapter that reads the body (size-capped, JSON), authenticates, runs the engine in the
thread pool and renders the answer; every failure becomes a clean JSON error
(SUPPLEMENT §6), never a stack trace. Outside, :class:`~apimctl.server.uri_limit.UriLimit`
answers over-long request targets 414, and (where the dialect has them)
:class:`~apimctl.server.answer_headers.AnswerHeaders` adds the dialect's headers to every answer. Works in-process through ``httpx.ASGITransport``
(nothing depends on lifespan events) and under uvicorn (with
:data:`~apimctl.server.uri_limit.UVICORN_OPTIONS`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from apimctl.server import answer_headers
from apimctl.server.auth import Authenticator
from apimctl.server.config import ServerConfig
from apimctl.server.controls import install_controls
from apimctl.server.dialects import SPEC, Dialect
from apimctl.server.engine import Engine
from apimctl.server.errors import HttpProblem, Invalid, NotFound, PayloadTooLarge, Unauthorized
from apimctl.server.events import EventDispatcher, event_log_endpoint
from apimctl.server.fields import MISSING
from apimctl.server.messages import ApiRequest, ApiResponse, dumps
from apimctl.server.store import Store
from apimctl.server.streaming import parts_response
from apimctl.server.traffic.log import CallLog, traffic_log_endpoint
from apimctl.server.tree import _PARAM_NAMES, ROOTS, Node
from apimctl.server.uri_limit import UriLimit

log = logging.getLogger("apimctl.server")

API = "/v3/rest"
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]


def _error(status: int, message: str, dialect: Dialect = SPEC) -> Response:
    headers = dialect.auth_headers(status) if status in (401, 403) else None
    return JSONResponse(dialect.error_body(status, message), status_code=status, headers=headers)


def error_response(exc: BaseException, dialect: Dialect = SPEC) -> Response:
    """The JSON answer of a failure (SUPPLEMENT §6; the dialect's body and headers, §10)."""
    if isinstance(exc, HttpProblem):
        items = exc.items if isinstance(exc, Invalid) else None
        headers = dialect.auth_headers(exc.status) if exc.status in (401, 403) else None
        return JSONResponse(dialect.error_body(exc.status, exc.message, items), status_code=exc.status,
                            headers=headers)
    if isinstance(exc, HTTPException):
        return _error(exc.status_code, str(exc.detail), dialect)
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        response = _error(503, "the database is busy; retry shortly", dialect)
        response.headers["Retry-After"] = "1"
        return response
    log.exception("unexpected failure", exc_info=exc)
    return _error(500, "internal server error", dialect)


def _templates(node: Node, prefix: str) -> list[str]:
    out: list[str] = []
    for child in node.children.values():
        base = f"{prefix}/{child.segment}"
        out.append(base)
        if child.single:
            out.extend(_templates(child, base))
        else:
            item = f"{base}/{{{_PARAM_NAMES.get(child.segment, 'id')}}}"
            out.append(item)
            out.extend(_templates(child, item))
    return out


class ServerApp:
    """The parts of one server instance, and its HTTP adapters."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.dialect = config.dialect_table
        self.store = Store(config.db_path)
        self.auth = Authenticator(config, self.store)
        self.events = EventDispatcher(config.events_config)
        self.engine = Engine(config, self.store, self.events)
        self.traffic_log = CallLog()  # the traffic listener's recent calls (GET /operator/traffic)

    def close(self) -> None:
        """Stop the event calls and close every database connection (an in-process server
        done with: each thread's connection holds the database files open)."""
        self.events.close()
        self.store.close()

    async def read_body(self, request: Request) -> Any:
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"request body larger than {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"request body larger than {limit} bytes")
            chunks.append(chunk)
        raw = b"".join(chunks)
        if not raw.strip():
            return MISSING
        try:
            return msgspec.json.decode(raw)  # strict JSON: no NaN, no trailing garbage
        except msgspec.DecodeError as exc:
            raise Invalid.at("", f"malformed JSON body: {exc}") from None
        except RecursionError:
            raise Invalid.at("", "JSON body nested too deeply") from None

    async def api(self, request: Request) -> Response:
        try:
            caller = await run_in_threadpool(self.auth.caller, request.headers.get("authorization"))
            body = await self.read_body(request) if request.method in ("POST", "PUT", "PATCH") else MISSING
            path = str(request.scope["path"])[len(API):]
            segments = [s for s in path.split("/") if s]
            if any(not s.isprintable() or s.strip() != s for s in segments):
                raise NotFound(f"no such resource: {path!r}")
            req = ApiRequest(request.method, segments, request.query_params, body, caller.area, caller.user)
            resp = await run_in_threadpool(self.engine.handle, req)
        except Exception as exc:
            return error_response(exc, self.dialect)
        return self.render(request, resp)

    def render(self, request: Request, resp: ApiResponse) -> Response:
        headers = dict(resp.headers)
        if resp.parts is not None:
            return parts_response(resp.parts, resp.status, headers, head=request.method == "HEAD",
                                  indent=request.query_params.get("indent", "").lower() == "true")
        if resp.body is None and resp.raw is None:
            return Response(b"", status_code=resp.status, headers=headers)
        indent = request.query_params.get("indent", "").lower() == "true"
        if resp.raw is not None:
            content = msgspec.json.format(resp.raw, indent=2) if indent else resp.raw
        else:
            content = dumps(resp.body, indent)
        if request.method == "HEAD":
            headers["content-length"] = str(len(content))
            return Response(b"", status_code=resp.status, headers=headers, media_type="application/json")
        return Response(content, status_code=resp.status, headers=headers, media_type="application/json")

    async def token(self, request: Request) -> Response:
        if request.method != "POST":
            return _error(405, f"{request.method} is not supported on /v3/token", self.dialect)
        try:
            form = await request.form()
            fields = {k: str(v) for k, v in form.items()}
            reply = await run_in_threadpool(self.auth.token, request.headers.get("authorization"), fields)
        except Exception as exc:
            return error_response(exc, self.dialect)
        headers = self.dialect.auth_headers(reply.status, token=True) if reply.status >= 400 else None
        return JSONResponse(reply.body, status_code=reply.status, headers=headers)

    def operator_ok(self, request: Request) -> bool:
        import hmac

        expected = self.config.operator_token
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return bool(expected and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected.encode()))

    async def approve(self, request: Request) -> Response:
        if not self.operator_ok(request):
            return _error(401, "operator token required", self.dialect)
        area, domain_id = request.path_params["area"], request.path_params["domain_id"]
        try:
            doc = await run_in_threadpool(self._approve, area, domain_id)
        except Exception as exc:
            return error_response(exc, self.dialect)
        return JSONResponse(doc if self.config.bare_objects else [doc])

    def _approve(self, area: str, domain_id: str) -> dict[str, Any]:
        with self.store.write() as txn:
            doc = txn.get(area, "domain", domain_id)
            if doc is None:
                raise NotFound(f"no domain with id {domain_id!r} in area {area!r}")
            doc["status"] = "active"
            txn.put(area, "domain", domain_id, doc)
        return {k: doc.get(k) for k in ("id", "created", "updated", "domain", "status")}

    def guarded(self, endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def wrapper(request: Request) -> Response:
            if not self.operator_ok(request):
                return _error(401, "operator token required", self.dialect)
            return await endpoint(request)

        return wrapper

    async def not_found(self, request: Request) -> Response:
        if request.url.path.startswith(API):
            try:
                self.auth.caller(request.headers.get("authorization"))
            except Unauthorized as exc:
                return error_response(exc, self.dialect)
        return _error(404, f"no such resource: {request.url.path}", self.dialect)

    def routes(self) -> list[BaseRoute]:
        routes: list[BaseRoute] = [
            Route("/v3/token", self.token, methods=ALL_METHODS),
            Route("/operator/areas/{area}/domains/{domain_id}/approve", self.approve, methods=["POST"]),
            Route(f"{API}/domains/public/hostnames", self.api, methods=ALL_METHODS),
            Route(f"{API}/domains/system/hostnames", self.api, methods=ALL_METHODS),
        ]
        routes.append(Route("/operator/events", self.guarded(event_log_endpoint(self.events)), methods=["GET"]))
        routes.append(Route("/operator/traffic", self.guarded(traffic_log_endpoint(self.traffic_log)), methods=["GET"]))
        routes += [Route(API + t, self.api, methods=ALL_METHODS) for t in _templates(ROOTS[self.config.dialect], "")]
        routes.append(Route("/{path:path}", self.not_found, methods=ALL_METHODS))
        return routes


def create_app(config: ServerConfig) -> Starlette:
    """The reference server as an ASGI application (see the module docstring)."""
    server = ServerApp(config)

    async def on_error(request: Request, exc: Exception) -> Response:
        return error_response(exc, server.dialect)

    app = Starlette(routes=server.routes(), exception_handlers={Exception: on_error, HTTPException: on_error})
    app.state.server = server
    app.state.controls = install_controls(app, config)  # around Starlette's own middleware
    app.middleware_stack = UriLimit(app.middleware_stack or app.build_middleware_stack(), dialect=server.dialect)
    if answer_headers.needed(server.dialect):
        app.middleware_stack = answer_headers.AnswerHeaders(app.middleware_stack, server.dialect)
    return app
