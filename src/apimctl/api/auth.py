"""Access tokens for the management API: a static bearer token, or the token exchange.

The exchange (spec/SUPPLEMENT.md §7) posts HTTP Basic ``api_key:api_secret`` and a form
``grant_type=password&username=..&password=..&scope=<area>`` to ``<root>/v3/token``. The token
is renewed shortly before ``expires_in`` runs out (``refresh_token`` grant first, then the
password grant again) and on demand when the API answers 401. One lock serialises renewals
so concurrent requests that all got a 401 trigger one exchange, not many.

The exchange is judged like every other call (:func:`judge`): throttling (``429``, or ``403``
with ``ERR_403_DEVELOPER_OVER_QPS`` in either dialect's error-code header or the body) waits
and is retried, a ``200`` that is not a token is retried a few times, a ``5xx`` is retried
with backoff, and only a clear refusal (``400 invalid_grant``, ``401``, ``403
ERR_403_DEVELOPER_INACTIVE``: SUPPLEMENT §7, §10.10.7) blames the credentials. Every token
obtained is registered with the scrubber (:mod:`apimctl.sensitive`) before it is used.

Used only by ``apimctl.api.client.ApiClient``, which sends the exchange requests through its
own HTTP client and retries them (see ``Exchange``). Nothing here ever puts a secret into a
message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from apimctl import sensitive
from apimctl.api.quirks import read_error_body
from apimctl.api.ratelimit import Clock
from apimctl.api.replies import OVER_QPS, OVER_RATE, THROTTLE_WAIT, retry_after, svc_code
from apimctl.errors import ApiError, AuthError, QuotaExhausted, ServerError, Throttled

INACTIVE = "ERR_403_DEVELOPER_INACTIVE"  # a wrong key or secret, as a real area may say it
MAX_GARBLED = 3  # malformed successful replies in a row before the exchange gives up


@dataclass(frozen=True)
class Credentials:
    """What the token exchange needs. ``repr`` never shows the secret or the password."""

    api_key: str
    api_secret: str
    username: str
    password: str
    area: str

    def __repr__(self) -> str:
        return (
            f"Credentials(api_key={self.api_key!r}, api_secret='***', "
            f"username={self.username!r}, password='***', area={self.area!r})"
        )


class TokenSource(Protocol):
    """Where the client gets the bearer token of each request."""

    can_renew: bool

    async def token(self) -> str: ...

    async def renew(self, rejected: str) -> str: ...


class StaticToken:
    """A token given on the command line; it cannot be renewed."""

    can_renew = False

    def __init__(self, token: str) -> None:
        self._token = token  # registered with the scrubber by whoever was given it (the CLI)

    async def token(self) -> str:
        return self._token

    async def renew(self, rejected: str) -> str:
        return self._token


# Sends one token request, retried as :func:`judge` says: (form fields, basic-auth pair) ->
# the token reply's body.
Exchange = Callable[[dict[str, str], tuple[str, str]], Awaitable[dict[str, Any]]]


class GarbledToken(ServerError):
    """A successful exchange whose body is not a token (retried a few times)."""


def token_url(base_url: str) -> str:
    """``<root>/v3/token`` where root is the API base with its trailing ``/v3/rest`` removed."""
    root = base_url.rstrip("/")
    if root.endswith("/v3/rest"):
        root = root[: -len("/v3/rest")]
    return root + "/v3/token"


class TokenExchange:
    """Tokens from the OAuth-style exchange, renewed before expiry and after a 401."""

    can_renew = True

    def __init__(
        self,
        credentials: Credentials,
        exchange: Exchange,
        *,
        clock: Clock = time.monotonic,
        margin: float = 60.0,
    ) -> None:
        self._credentials = credentials
        self._exchange = exchange
        self._clock = clock
        self._margin = margin
        self._lock = asyncio.Lock()
        self._access: str | None = None
        self._refresh: str | None = None
        self._renew_at: float | None = None  # None: no known expiry
        # a refused exchange (bad credentials) is final: the calls waiting for a token fail
        # with it at once rather than each asking again
        self._refused: AuthError | None = None

    async def token(self) -> str:
        """The current token, exchanged first or renewed when it is about to expire."""
        current = self._access
        if current is not None and not self._due():
            return current
        async with self._lock:
            if self._access is None or self._due():
                await self._obtain_once()
            assert self._access is not None
            return self._access

    async def _obtain_once(self) -> None:
        if self._refused is not None:
            raise self._refused
        try:
            await self._obtain()
        except AuthError as exc:
            self._refused = exc  # judge() says AuthError only of a clear refusal
            raise

    async def renew(self, rejected: str) -> str:
        """A fresh token after the API refused ``rejected`` (a no-op if already replaced)."""
        async with self._lock:
            if self._access is None or self._access == rejected:
                await self._obtain_once()
            assert self._access is not None
            return self._access

    def _due(self) -> bool:
        return self._renew_at is not None and self._clock() >= self._renew_at

    async def _obtain(self) -> None:
        """Refresh the token if possible, else exchange the credentials again."""
        if self._refresh is not None:
            refresh, self._refresh = self._refresh, None
            try:
                self._accept(await self._post({"grant_type": "refresh_token", "refresh_token": refresh}))
                return
            except AuthError as exc:
                if exc.status != 400:  # 400: refresh token refused, fall back
                    raise
        creds = self._credentials
        form = {
            "grant_type": "password",
            "username": creds.username,
            "password": creds.password,
            "scope": creds.area,
        }
        self._accept(await self._post(form))

    async def _post(self, form: dict[str, str]) -> dict[str, Any]:
        creds = self._credentials
        return await self._exchange(form, (creds.api_key, creds.api_secret))

    def _accept(self, reply: dict[str, Any]) -> None:
        self._access = reply["access_token"]
        refresh = reply.get("refresh_token")
        self._refresh = refresh if isinstance(refresh, str) and refresh else self._refresh
        sensitive.register(self._access, self._refresh)
        expires = reply.get("expires_in")
        if isinstance(expires, int | float) and not isinstance(expires, bool) and expires > 0:
            margin = min(self._margin, float(expires) / 10)
            self._renew_at = self._clock() + float(expires) - margin
        else:
            self._renew_at = None


def judge(response: httpx.Response) -> dict[str, Any] | ApiError:
    """The body of a successful exchange, or the error the reply means: :class:`Throttled`
    (wait and retry), :class:`GarbledToken` or :class:`ServerError` (retry),
    :class:`QuotaExhausted`, :class:`AuthError` (the credentials, only on a clear refusal) or
    :class:`ApiError` (anything else, not retried)."""
    where = f"POST {response.request.url.path}"
    status = response.status_code
    common: dict[str, Any] = {"status": status, "method": "POST",
                              "url": str(response.request.url.copy_with(query=None))}
    if response.is_success:
        return _token_body(response, where, common)
    body = read_error_body(response.text, response.headers.get("content-type", ""))
    code = svc_code(response, body.code)
    if status in (403, 429) and code == OVER_RATE:
        return QuotaExhausted(f"{where}: {status} token exchange refused: the daily quota of API "
                              f"calls is exhausted ({OVER_RATE}); rerun later", **common)
    if status == 429 or (status == 403 and code == OVER_QPS):
        wait = retry_after(response.headers.get("Retry-After"))
        return Throttled(f"{where}: {status} token exchange throttled ({code or 'Too Many Requests'})",
                         retry_after=THROTTLE_WAIT if wait is None else wait, **common)
    detail = f": {body.message}" if body.message and body.message != body.code else ""
    if status >= 500:
        return ServerError(f"{where}: {status} token exchange failed{detail}", **common)
    refused = f"refused ({body.code})" if body.code else "refused"
    if (status == 400 and body.code == "invalid_grant") or status == 401 or (status == 403 and code == INACTIVE):
        return AuthError(f"{where}: {status} token exchange {refused}{detail}; check the API key and "
                         "secret, the user name and password, and the area", **common)
    return ApiError(f"{where}: {status} token exchange failed{detail} (not a refusal of the "
                    "credentials: check --url)", **common)


def _token_body(response: httpx.Response, where: str, common: dict[str, Any]) -> dict[str, Any] | ApiError:
    try:
        data = response.json()
    except ValueError:
        return GarbledToken(f"{where}: {response.status_code}: the token exchange answered something "
                            "that is not JSON", **common)
    if not isinstance(data, dict) or not isinstance(data.get("access_token"), str) or not data["access_token"]:
        return GarbledToken(f"{where}: {response.status_code}: the token exchange answered without an "
                            "access_token", **common)
    return data
