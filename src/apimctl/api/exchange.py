"""What every call of the API client shares with its token exchange, and the exchange itself.

:class:`Calls` is the base of :class:`apimctl.api.client.ApiClient`: the lines it logs, the
backoff between attempts, the total deadline of a call counted by the breaker, and the token
exchange (:meth:`Calls._exchange`, handed to :class:`apimctl.api.auth.TokenExchange`), sent
through the client's own HTTP connection pool and judged like every other call
(:func:`apimctl.api.auth.judge`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from apimctl.api.auth import MAX_GARBLED, GarbledToken, judge, token_url
from apimctl.api.calls import Breaker, CallStats
from apimctl.api.ratelimit import Backoff, Sleep
from apimctl.api.replies import connect_failed, transport_error
from apimctl.errors import ApiError, ServerError, Throttled, TransportError


class Calls:
    """The parts of the client its calls and its token exchange share (set by
    :class:`~apimctl.api.client.ApiClient`)."""

    base_url: str
    breaker: Breaker
    stats: CallStats
    _http: httpx.AsyncClient
    _gate: asyncio.Semaphore
    _timeout: float
    _max_retries: int
    _max_throttle_waits: int
    _backoff: Backoff
    _sleep: Sleep
    _log: Callable[[str], None] | None
    # calls waiting for their bearer token: an exchange that times out has timed out for
    # each of them, and the breaker counts it so (a hung area fails a plan within about one
    # --timeout, as it does with a static token, rather than one per exchange attempt)
    awaiting_token: int = 0

    def _note(self, line: str) -> None:
        if self._log is not None:
            self._log(line)

    async def _back_off(self, error: ApiError, retries: int) -> None:
        delay = self._backoff.delay(retries)
        self._note(f"{error}; retrying in {delay:.1f} s ({retries + 1} of {self._max_retries})")
        await self._sleep(delay)

    def _timed_out(self, where: str, calls: int = 1) -> TransportError:
        """A call that hit its total deadline: counted by the breaker like a refused
        connection (a server that accepts and answers nothing is as dead as one that refuses);
        ``calls``: how many calls it stood for."""
        error = TransportError(f"{where}: no complete reply within {self._timeout:g} s",
                               method=where.split(" ", 1)[0])
        self.breaker.failed(error, calls)
        return error

    # -- the token exchange, sent through the client's HTTP connection pool ---------------

    async def _exchange(self, form: dict[str, str], basic: tuple[str, str]) -> dict[str, Any]:
        """POST the token form; the token reply's body. Judged like every other call
        (:func:`apimctl.api.auth.judge`): throttling waits (``Retry-After`` or about a second)
        and is retried, a garbled success is retried :data:`MAX_GARBLED` times, a 5xx, a
        timeout or a failed connection with backoff; a refusal is raised at once."""
        url = token_url(self.base_url)
        where = f"POST {httpx.URL(url).path}"
        retries = waits = garbled = 0
        while True:
            self.breaker.check(where)
            outcome = await self._exchange_once(url, where, form, basic)
            if isinstance(outcome, dict):
                return outcome
            if self.breaker.open:
                self.breaker.check(where)
            if isinstance(outcome, Throttled) and waits < self._max_throttle_waits:
                wait = outcome.retry_after if outcome.retry_after is not None else self._backoff.delay(waits)
                self._note(f"{outcome}; retrying in {wait:g} s")
                await self._sleep(wait)
                waits += 1
            elif isinstance(outcome, GarbledToken) and garbled < MAX_GARBLED - 1:
                await self._back_off(outcome, garbled)
                garbled += 1
            elif (isinstance(outcome, ServerError | TransportError) and not isinstance(outcome, GarbledToken)
                  and retries < self._max_retries):
                await self._back_off(outcome, retries)
                retries += 1
            else:
                raise outcome

    async def _exchange_once(self, url: str, where: str, form: dict[str, str],
                             basic: tuple[str, str]) -> dict[str, Any] | ApiError:
        try:
            async with self._gate:
                self.stats.token_calls += 1
                async with asyncio.timeout(self._timeout):  # the exchange's total deadline
                    response = await self._http.post(url, data=form, auth=basic)
        except TimeoutError:
            return self._timed_out(where, self.awaiting_token)
        except httpx.RequestError as exc:
            error = transport_error(where, exc, self._timeout)
            if connect_failed(exc):
                self.breaker.failed(error, self.awaiting_token)
            return error
        self.breaker.succeeded()
        self._note(f"{where} -> {response.status_code}")
        return judge(response)
