"""Rules of the domain whitelist: a normalised domain name, unique in the area, whose status
starts as ``waiting`` (``active`` when the server approves domains at once).

The catalog names :func:`prepare` and :func:`finalize` as the DomainWhitelist's hooks;
:func:`host_of` is the part of an endpoint's address the whitelist applies to (an address
may carry a port, SUPPLEMENT §10.10.2), used by the services' domain gate.
"""

from __future__ import annotations

from typing import Any

from apimctl.server.context import Env, claim
from apimctl.server.validation import WriteCtx


def prepare(doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx,
            parent: dict[str, Any] | None, created: bool) -> None:
    doc["domain"] = str(doc.get("domain", "")).strip().lower()
    if not doc["domain"] or any(ch.isspace() for ch in doc["domain"]) or "/" in doc["domain"]:
        ctx.problem("domain", "must be a domain name such as example.com")
    doc["status"] = "active" if env.config.auto_approve_domains else "waiting"


def finalize(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    claim(env, ctx, "domain", doc["id"], {doc.get("domain", ""): "domain"}, "domain")


def host_of(address: str) -> tuple[str, str | None]:
    """``(host, problem)`` of an endpoint address: ``backend.example.com:443`` is the host
    ``backend.example.com`` on port 443 (SUPPLEMENT §10.10.2); ``problem`` says what is
    wrong with a port that is not one (``None`` when there is none)."""
    host, sep, port = address.strip().lower().rpartition(":")
    if not sep or "]" in port:  # no port (or the end of an IPv6 literal)
        return address.strip().lower(), None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return host, f"the port of {address!r} must be a number from 1 to 65535"
    return host, None
