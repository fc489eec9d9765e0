"""Domains (``domains``): host names an area may use; approved by the platform, never deleted through the API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.kinds.base import Compare, Export, Kind, Write
from apimctl.kinds.ops import Exported, Lookups, Ops, Read, Resolver


class DomainOps(Ops):
    """A domain reads as its name alone (its ``created`` stands for ``updated``) and is written
    as ``{"domain": ...}``."""

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        return Read({DOMAIN.identity: raw.get(DOMAIN.identity)}, raw.get("created"))

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        return {DOMAIN.identity: desired.get(DOMAIN.identity, key)}

    def export(self, entry: Exported) -> Any:
        """A domain is written as its name."""
        return entry.doc[DOMAIN.identity]


DOMAIN: Kind = Kind(
    name="domain", manifest_key="domains", label="domain", path="/domains", body="domainWhitelist",
    identity="domain", fields=("id", "domain", "status", "created"),
    compare=Compare(computed=frozenset({"id", "created", "updated", "status"}), fold_case=True),
    write=Write(deletable=False),
    export=Export(pinnable=False, manifest_rank=3),
    operations=DomainOps,
)
