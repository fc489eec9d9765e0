"""Rules of the domain whitelist: a normalised domain name, unique in the area, whose status
starts as ``waiting`` (``active`` when the server approves domains at once).

The catalog names :func:`prepare` and :func:`finalize` as the DomainWhitelist's hooks.
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
