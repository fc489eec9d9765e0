"""Shape rules: ``after_build`` hooks, run after every build and merge of an object.

Named by the catalog (:mod:`apimctl.server.catalog`) and called by
:mod:`apimctl.server.validation` for objects at any depth of a body: an error set always
holds the whole message catalog (SUPPLEMENT §5), an error message's ``code`` follows from its
id, and the authentication type of an endpoint rules out the other type's fields (§4).
"""

from __future__ import annotations

from typing import Any

from apimctl.platform import ERROR_CATALOG  # SUPPLEMENT §5, shared with the reconciler
from apimctl.server.dialects import SPEC, Dialect
from apimctl.server.validation import WriteCtx


def catalog_message(message_id: str, dialect: Dialect = SPEC) -> dict[str, Any]:
    """The stored default of an error message of the catalog (SUPPLEMENT §5, §10.5)."""
    return dialect.message(message_id)


def fill_error_set(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    """A new error set holds every message of the catalog, in catalog order."""
    if not created:
        return
    given = {m.get("id"): m for m in obj.get("errorMessages") or [] if isinstance(m, dict)}
    obj["errorMessages"] = [given.get(mid) or catalog_message(mid, ctx.dialect) for mid in ERROR_CATALOG]


def error_message_code(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    """Ids come from the catalog; ``code`` (and a new message's ``status`` and
    ``detailHeader``, the dialect's defaults of SUPPLEMENT §5 and §10.5) follow from it."""
    mid = obj.get("id")
    if not isinstance(mid, str) or mid not in ERROR_CATALOG:
        if created:
            ctx.problem(f"{path}.id" if path else "id", f"unknown error message id {mid!r}; ids come from the catalog")
        return
    default = ctx.dialect.message(mid)
    obj["code"] = default["code"]
    for name in ("status", "detailHeader"):
        if created and name not in body:
            obj[name] = default[name]


def endpoint_auth(obj: dict[str, Any], body: dict[str, Any], ctx: WriteCtx, path: str, created: bool) -> None:
    """``oauth`` forbids apiKeyValueLocations; any other type forbids oauthGrantTypes."""
    at = (path + ".") if path else ""
    if obj.get("requestAuthenticationType") == "oauth":
        if obj.get("apiKeyValueLocations"):
            if "apiKeyValueLocations" in body:
                ctx.problem(at + "apiKeyValueLocations", "must be empty when requestAuthenticationType is oauth")
            else:
                obj["apiKeyValueLocations"] = []
    elif obj.get("oauthGrantTypes"):
        if "oauthGrantTypes" in body:
            ctx.problem(at + "oauthGrantTypes", "is only allowed when requestAuthenticationType is oauth")
        else:
            obj["oauthGrantTypes"] = []
