"""Clients given no TLS context of their own share the default one: loading the CA bundle
costs about 50 ms, which a command opening a client per area paid once per client."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from apimctl.api.client import ApiClient


def _context(client: ApiClient) -> Any:
    return client._http._transport._pool._ssl_context  # type: ignore[attr-defined]


def test_clients_share_the_default_context(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[ssl.SSLContext] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    clients = [ApiClient(f"https://area-{n}.example.com/v3/rest", token="t") for n in range(3)]
    assert _context(clients[0]) is _context(clients[1]) is _context(clients[2])
    assert len(made) <= 1  # once per process (none when an earlier test made it)


def test_a_context_given_is_kept() -> None:
    own = ssl.create_default_context()
    assert _context(ApiClient("https://a.example.com/v3/rest", token="t", verify=own)) is own
    assert _context(ApiClient("https://a.example.com/v3/rest", token="t")) is not own
