"""The management API client: one place that talks HTTP to the platform.

Live-state reading, ``apply`` and ``export`` call :class:`ApiClient`; ``apimctl.cli.target``
builds it from the connection options. It owns

- authentication: a static bearer token or the token exchange (``apimctl.api.auth``, sent by
  ``apimctl.api.exchange``), renewed once and the call repeated when the API answers 401;
- pacing: one shared client-side rate limiter (``--qps``) and at most ``parallelism``
  requests in flight, for every call of the client (``apimctl.api.ratelimit``);
- retries decided by error type (STYLE §7): 5xx, timeouts and connection failures are retried
  with backoff for idempotent calls, throttling (``ERR_403_DEVELOPER_OVER_QPS``) for every
  call after the server's ``Retry-After``; the daily quota (``ERR_403_DEVELOPER_OVER_RATE``)
  stops; no other 4xx is ever retried;
- a total deadline per call (``timeout``): connecting, sending and reading the whole reply,
  however slowly a server drips it, the token exchange included;
- failing fast on a dead server (:class:`Breaker`): after ``max_connect_failures`` attempts
  in a row that could not connect at all (refused, reset, DNS; not a 5xx) or got no complete
  reply within the call's deadline, across every request of the client, every further call
  fails at once with ``Unreachable`` naming the host, instead of each call retrying on its own
  for minutes;
- the reply quirks of spec/SUPPLEMENT.md §9 (``apimctl.api.quirks``) and the mapping of every
  failure onto ``apimctl.errors``;
- paging by ``X-Total-Count`` (``apimctl.api.paging``), the remaining pages fetched
  concurrently within the limiter: :meth:`ApiClient.list_all` answers every item at once;
  :meth:`ApiClient.pages` hands the pages over in order as they arrive, a few requested
  ahead.

Messages say what and where (``GET /services: 500 Internal Server Error: <message>``) and
never carry a token, a secret or a request body.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any

import httpx

from apimctl import __version__, sensitive
from apimctl.api import paging
from apimctl.api import requests as req
from apimctl.api.auth import (
    Credentials,
    StaticToken,
    TokenExchange,
    TokenSource,
)
from apimctl.api.calls import Breaker, CallStats
from apimctl.api.dialect import DialectChoice
from apimctl.api.exchange import Calls
from apimctl.api.paging import MAX_PAGE, PAGES_AHEAD
from apimctl.api.quirks import as_list, parse_datetime, unwrap_one
from apimctl.api.ratelimit import Backoff, Clock, RateLimiter, Sleep
from apimctl.api.replies import (
    Reply,
    connect_failed,
    final_error,
    one_object,
    read_reply,
    transport_error,
)
from apimctl.errors import (
    ApiError,
    AuthError,
    NotFound,
    ServerError,
    Throttled,
    TransportError,
)

__all__ = [
    "ApiClient",
    "Breaker",
    "CallStats",
    "Credentials",
    "Page",
    "Params",
    "RateLimiter",
    "as_list",
    "parse_datetime",
    "unwrap_one",
]

Params = req.Params
Page = req.Page
Buffer = memoryview  # a list reply's body, read apart (see ``requests.body``)

DEADLINE_MARGIN = 1.0  # seconds httpx's own timeouts wait beyond a call's total deadline
_READS = frozenset({"GET", "HEAD"})
_NO_BODY = object()


@functools.cache
def default_tls(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS context of a client given no other (the CA bundle, or the one the environment's
    ``SSL_CERT_FILE``/``SSL_CERT_DIR`` name, which key the cache), made once per process:
    loading a bundle takes about 50 ms, once per client otherwise (a command opening a client
    per area, the tests running many commands in one process)."""
    return httpx.create_ssl_context(trust_env=True)


class ApiClient(Calls):
    """Async client of the management API v3 at ``base_url`` (``https://host/v3/rest``)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        credentials: Credentials | None = None,
        qps: float | None = 2.0,
        parallelism: int = 8,
        timeout: float = 30.0,
        max_retries: int = 6,
        transport: httpx.AsyncBaseTransport | None = None,
        log: Callable[[str], None] | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        backoff: Backoff | None = None,
        max_throttle_waits: int = 30,
        max_connect_failures: int = 3,
        verify: ssl.SSLContext | bool = True,
        on_response: Callable[[httpx.Response], None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.breaker = Breaker(req.host(self.base_url), max_connect_failures)
        # which dialect the target speaks: asked for, or told by its replies (api.dialect)
        self.dialect = DialectChoice(host=req.hostname(self.base_url))
        self.stats = CallStats()
        self.limiter = RateLimiter(qps, clock=clock, sleep=sleep)
        self._timeout = timeout
        self._max_retries = max(0, max_retries)
        self._max_throttle_waits = max(0, max_throttle_waits)
        # every log and retry line is scrubbed of the registered secrets: a server may echo a
        # request body or the token form in an error that a retry line quotes
        self._log = None if log is None else _scrubbed(log)
        self._clock = clock
        self._sleep = sleep
        self._backoff = backoff or Backoff()
        self._gate = asyncio.Semaphore(max(1, parallelism))
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            transport=transport,
            # each read, write and connect a little longer than the call's total deadline
            # (``_send``), which so is what ends a call that gets no complete reply in time
            timeout=httpx.Timeout(timeout + DEADLINE_MARGIN, connect=timeout),
            limits=httpx.Limits(max_connections=parallelism, max_keepalive_connections=parallelism),
            headers={"Accept": "application/json", "User-Agent": f"apimctl/{__version__}"},
            follow_redirects=False,
            # a context for --ca-bundle, False for --insecure (cli.tls), else the default one
            verify=default_tls(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
            if verify is True else verify,
            event_hooks={"response": [_hook(on_response)]} if on_response else None,
        )
        self._auth = self._token_source(token, credentials, clock)

    def _token_source(
        self, token: str | None, credentials: Credentials | None, clock: Clock
    ) -> TokenSource:
        if token:
            return StaticToken(token)
        if credentials is not None:
            return TokenExchange(credentials, self._exchange, clock=clock)
        raise ValueError("ApiClient needs a token or credentials")

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- the operations -------------------------------------------------------------------

    async def get(self, path: str, params: Params | None = None) -> Any:
        """The decoded body of a GET: a dict for one object, a list for a list."""
        return (await self._call("GET", path, params=params)).data

    async def get_object(self, path: str, params: Params | None = None) -> dict[str, Any]:
        """One object, whether rendered bare or as a one-element array."""
        reply = await self._call("GET", path, params=params)
        if reply.data == []:
            raise NotFound(
                f"GET {req.route(path)}: the API answered an empty list",
                status=reply.status,
                method="GET",
            )
        return one_object("GET", path, reply)

    async def list_all(
        self,
        path: str,
        params: Params | None = None,
        *,
        page_size: int = MAX_PAGE,
        page_index: bool = False,
    ) -> list[dict[str, Any]]:
        """Every item of a list, checked against ``X-Total-Count``
        (:func:`apimctl.api.paging.list_all`)."""
        return await paging.list_all(self._fetch, path, params, page_size=page_size,
                                     page_index=page_index)

    async def list_page(
        self, path: str, params: Params | None = None, *, size: int = MAX_PAGE, offset: int = 0
    ) -> tuple[list[dict[str, Any]], int | None]:
        """One page of a list and the list's ``X-Total-Count``
        (:func:`apimctl.api.paging.list_page`)."""
        return await paging.list_page(self._fetch, path, params, size=size, offset=offset)

    def pages(
        self,
        path: str,
        params: Params | None = None,
        *,
        page_size: int = MAX_PAGE,
        page_index: bool = False,
        ahead: int = PAGES_AHEAD,
    ) -> AsyncGenerator[Page, None]:
        """The items of a list page by page, in order, ``ahead`` pages requested beyond the
        one being read (:func:`apimctl.api.paging.pages`)."""
        return paging.pages(self._fetch, path, params, page_size=page_size,
                            page_index=page_index, ahead=ahead)

    def _fetch(self, path: str, params: Params, *, lazy: bool = False) -> Awaitable[Reply]:
        """One GET of a list page (:class:`apimctl.api.paging.Fetch`)."""
        return self._call("GET", path, params=params, lazy=lazy)

    async def post(self, path: str, body: Any, params: Params | None = None) -> dict[str, Any]:
        """Create. Not retried when the outcome is unknown (5xx, transport failure): the caller
        looks the object up by its natural key first. Throttling is retried: nothing was done."""
        reply = await self._call("POST", path, params=params, body=body, idempotent=False)
        if reply.data is None:
            return {}
        return one_object("POST", path, reply)

    async def put(self, path: str, body: Any, params: Params | None = None) -> Any:
        """Update (idempotent, retried). An object body answers one object, an array an array."""
        reply = await self._call("PUT", path, params=params, body=body)
        if isinstance(body, Mapping) and isinstance(reply.data, list) and len(reply.data) == 1:
            return reply.data[0]
        return reply.data

    async def delete(self, path: str) -> None:
        """Delete (idempotent, retried). 404 raises ``NotFound`` unless an earlier attempt of
        this same call may have done the delete (then the object being gone is success)."""
        await self._call("DELETE", path, missing_is_done=True)

    # -- one call: attempts, retries, renewal ---------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = _NO_BODY,
        idempotent: bool = True,
        missing_is_done: bool = False,
        lazy: bool = False,
    ) -> Reply:
        where = f"{method} {req.route(path)}"
        renewed, retries, waits, unknown = False, 0, 0, False
        while True:
            self.breaker.check(where)
            token = await self._token()
            outcome = await self._attempt(method, path, params, body, token, lazy)
            if isinstance(outcome, Reply):
                return outcome
            if self.breaker.open:
                self.breaker.check(where)  # it opened with this attempt: no retry
            transient = isinstance(outcome, ServerError | TransportError)
            if (
                isinstance(outcome, AuthError)
                and outcome.status == 401
                and self._auth.can_renew
                and not renewed
            ):
                renewed = True
                self._note(f"{where}: 401, renewing the access token")
                await self._auth.renew(token)
            elif isinstance(outcome, Throttled) and waits < self._max_throttle_waits:
                self._slow_down(outcome, waits)
                waits += 1
            elif isinstance(outcome, NotFound) and missing_is_done and unknown:
                self._note(f"{where}: already gone after an earlier attempt; done")
                return Reply(404, httpx.Headers(), None)
            elif transient and idempotent and retries < self._max_retries:
                unknown = True
                await self._back_off(outcome, retries)
                retries += 1
            else:
                raise final_error(outcome, idempotent)

    async def _token(self) -> str:
        """The bearer token of an attempt, counted in :attr:`awaiting_token` while it is
        obtained (see :meth:`Calls._exchange_once`)."""
        self.awaiting_token += 1
        try:
            return await self._auth.token()
        finally:
            self.awaiting_token -= 1

    async def _attempt(
        self, method: str, path: str, params: Params | None, body: Any, token: str,
        lazy: bool = False,
    ) -> Reply | ApiError:
        """Send once; the reply, or the error it maps to (returned, for ``_call`` to judge);
        ``lazy``: a list's items are left encoded (:func:`apimctl.api.replies.decode_list`)."""
        where = f"{method} {req.route(path)}"
        try:
            response, content = await self._send(method, path, params, body, token, lazy)
        except TimeoutError:
            return self._timed_out(where)
        except httpx.RequestError as exc:
            error = transport_error(where, exc, self._timeout, token)
            if connect_failed(exc):
                self.breaker.failed(error)
            return error
        self.breaker.succeeded()
        self.dialect.observe(where, response)
        self.stats.quota.observe(response.headers)
        return read_reply(where, response, token, list_content=content)

    async def _send(
        self, method: str, path: str, params: Params | None, body: Any, token: str,
        lazy: bool = False,
    ) -> tuple[httpx.Response, Buffer | None]:
        """The response; ``lazy``: the body of a successful one read into one buffer (a page
        of 1,000 services is 20 MB: never held twice, as chunks and joined)."""
        content = None
        async with self._gate:
            await self.limiter.acquire()
            self.stats.record(method, req.route(path))
            started = self._clock()
            request = self._http.build_request(
                method,
                path,
                params=httpx.QueryParams(tuple(req.pairs(params))),
                json=None if body is _NO_BODY else body,
                headers={"Authorization": f"Bearer {token}"},
            )
            # the call's total deadline: connecting, sending and reading the whole body,
            # however slowly a server drips it (httpx's timeouts bound each read alone)
            async with asyncio.timeout(self._timeout):
                response = await self._http.send(request, stream=lazy)
                if lazy:
                    try:
                        if 200 <= response.status_code < 300:
                            content = await req.body(response)
                        else:
                            await response.aread()
                    finally:
                        await response.aclose()
        if self._log is not None:
            elapsed = (self._clock() - started) * 1000
            self._log(
                f"{method} {req.loggable(path, response)} -> {response.status_code} ({elapsed:.0f} ms)"
            )
        return response, content

    def _slow_down(self, error: Throttled, waits: int) -> None:
        wait = error.retry_after if error.retry_after is not None else self._backoff.delay(waits)
        self.limiter.pause(wait)
        self._note(f"{error}; every call waits {wait:g} s")



# -- helpers: queries, replies, errors ------------------------------------------------------


def _scrubbed(log: Callable[[str], None]) -> Callable[[str], None]:
    def write(line: str) -> None:
        log(sensitive.scrub(line))

    return write


def _hook(observe: Callable[[httpx.Response], None]) -> Callable[[httpx.Response], Any]:
    """``observe`` as an httpx response hook (``apimctl doctor`` reads the quota headers)."""

    async def hook(response: httpx.Response) -> None:
        observe(response)

    return hook
