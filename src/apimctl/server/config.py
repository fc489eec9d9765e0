"""Start-up settings of the reference server.

Built by ``apimctl serve`` (from its options), by the embedded default target of the
reconciler and by the tests; read by :func:`apimctl.server.app.create_app` and the
middleware it installs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from apimctl.server.dialects import Dialect, dialect_of


@dataclass
class ServerConfig:
    """Everything the reference server needs to know at start-up."""

    db_path: str
    tokens: dict[str, str] = field(default_factory=dict)  # static bearer token -> area
    clients: dict[str, str] = field(default_factory=dict)  # api key -> secret
    users: list[tuple[str, str, str]] = field(default_factory=list)  # (username, password, area)
    auto_approve_domains: bool = False
    object_responses: bool = False
    operator_token: str | None = None
    qps: float | None = None
    daily_quota: int | None = None
    # the management API's answers carry the quota headers (X-Packagekey-Quota-*), as the
    # platform's traffic manager in front of it does for a package with rate-limit headers on
    quota_headers: bool = False
    fault_rate: float = 0.0
    fault_seed: int | None = None
    fault_tokens: tuple[str, ...] = ()  # faults only for calls with these tokens (empty: every call)
    fault_kinds: tuple[str, ...] = ()  # the faults injected (empty: every kind)
    events_config: dict[str, Any] | None = None
    max_body_bytes: int = 10 * 1024 * 1024
    dialect: str = "spec"  # spec | mashery (apimctl.server.dialects)
    # ``X.*`` in ``fields`` below the top level: True honours it (every field of X), False
    # ignores it as an unknown name (SUPPLEMENT §10.10.8), None keeps the dialect's way
    nested_wildcards: bool | None = None
    # a public domain belongs to the first area that declares it (another area's write is
    # refused); on once a traffic listener serves the areas (create_traffic_app), where a host
    # routes to one area; off, areas are independent fixtures that may share domains
    exclusive_public_domains: bool = False

    @property
    def dialect_table(self) -> Dialect:
        """The dialect's table (:mod:`apimctl.server.dialects`), with the switches above."""
        table = dialect_of(self.dialect)
        changes: dict[str, Any] = {}
        if self.nested_wildcards is not None and self.nested_wildcards != table.nested_wildcards:
            changes["nested_wildcards"] = self.nested_wildcards
        return replace(table, **changes) if changes else table

    @property
    def bare_objects(self) -> bool:
        """Single objects are answered bare (``--object-responses``, or the dialect's way)."""
        return self.object_responses or self.dialect_table.bare_objects
