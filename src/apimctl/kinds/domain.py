"""Domains (``domains``): host names an area may use; approved by the platform, never deleted through the API."""

from __future__ import annotations

from apimctl.kinds.base import Kind

DOMAIN = Kind(
    name="domain", manifest_key="domains", path="/domains", body="domainWhitelist",
    identity="domain", computed=frozenset({"id", "created", "updated", "status"}),
    fields=("id", "domain", "status", "created"), pinnable=False, deletable=False,
    fold_case=True,
)
