"""Authentication of the reference server (SUPPLEMENT §7).

:class:`Authenticator` answers who is calling (area and user) for a bearer token — static
tokens given at start-up, or access tokens issued by the token endpoint and kept in the
store so that they survive a restart — and implements ``POST /v3/token`` (password and
refresh-token grants). Used by :mod:`apimctl.server.app`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Any

from apimctl.server.config import ServerConfig
from apimctl.server.errors import Unauthorized
from apimctl.server.store import Store

TOKEN_TTL = 3600
REFRESH_TTL = 30 * 24 * 3600


@dataclass(frozen=True)
class Caller:
    area: str
    user: str | None


@dataclass
class TokenReply:
    status: int
    body: dict[str, Any]


class Authenticator:
    def __init__(self, config: ServerConfig, store: Store) -> None:
        self.config = config
        self.store = store

    def caller(self, authorization: str | None) -> Caller:
        """The caller of a management request; :class:`Unauthorized` (401) if not valid."""
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("missing bearer token")
        for known, area in self.config.tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return Caller(area, None)
        with self.store.read() as txn:
            found = txn.get_token(token, "access")
        if found is None or found[2] < time.time():
            raise Unauthorized("invalid or expired token")
        return Caller(found[0], found[1])

    def token(self, authorization: str | None, form: dict[str, str]) -> TokenReply:
        """``POST /v3/token``."""
        if not self._client_ok(authorization):  # 401, or the dialect's status (§10.10.7)
            return TokenReply(self.config.dialect_table.bad_client_status, {"error": "invalid_client"})
        grant = form.get("grant_type", "")
        if grant == "password":
            return self._password(form)
        if grant == "refresh_token":
            return self._refresh(form.get("refresh_token", ""))
        return TokenReply(400, {"error": "unsupported_grant_type",
                                "error_description": "grant_type must be password or refresh_token"})

    def _client_ok(self, authorization: str | None) -> bool:
        scheme, _, encoded = (authorization or "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            key, _, secret = base64.b64decode(encoded.strip()).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        expected = self.config.clients.get(key)
        return expected is not None and hmac.compare_digest(expected.encode(), secret.encode())

    def _password(self, form: dict[str, str]) -> TokenReply:
        username, password, scope = form.get("username", ""), form.get("password", ""), form.get("scope", "")
        for user, secret, area in self.config.users:
            if user == username and hmac.compare_digest(secret.encode(), password.encode()):
                if area != scope:
                    return TokenReply(400, {"error": "invalid_scope",
                                            "error_description": "the user has no access to that area"})
                return self._issue(area, user)
        return TokenReply(400, {"error": "invalid_grant", "error_description": "bad username or password"})

    def _refresh(self, refresh: str) -> TokenReply:
        with self.store.write() as txn:
            found = txn.get_token(refresh, "refresh") if refresh else None
            if found is not None:
                txn.drop_token(refresh)
        if found is None or found[2] < time.time():
            return TokenReply(400, {"error": "invalid_grant", "error_description": "invalid or expired refresh token"})
        return self._issue(found[0], found[1])

    def _issue(self, area: str, user: str | None) -> TokenReply:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        now = time.time()
        with self.store.write() as txn:
            txn.put_token(access, "access", area, user, now + TOKEN_TTL)
            txn.put_token(refresh, "refresh", area, user, now + REFRESH_TTL)
        return TokenReply(200, {"token_type": "bearer", "access_token": access, "expires_in": TOKEN_TTL,
                                "refresh_token": refresh, "scope": area})
