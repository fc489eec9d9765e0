"""Roles (``roles``): referenced by services and plans for permissions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from apimctl.kinds.base import Kind, Lookups, Ops, Read, Reference, Resolver, fingerprint, frozen

# organizations are not managed, only referenced by roles (and read only then)
ORGANIZATION = "organization"
ORGANIZATION_PATH = "/organizations"

# The role that is the area's apply lease (:mod:`apimctl.applying.lease`): created and deleted
# by apply, never read into live state, planned, pruned or exported.
LEASE_NAME = "apimctl-apply-lease"
RESERVED_NAMES: frozenset[str] = frozenset({LEASE_NAME})


def permissions(names: Iterable[str] | None, refs: Resolver) -> list[dict[str, Any]]:
    """Role permissions of a new service or plan, by role id (the action is the default)."""
    return [{"id": refs.id(ROLE.name, n), "name": n} for n in names or []]


class RoleOps(Ops):
    """A role names its organization (by name in manifests, by id in bodies)."""

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        org = doc.get(ORGANIZATION)
        if isinstance(org, Mapping):
            doc[ORGANIZATION] = org.get("name")
        doc.pop("group", None)
        return Read(doc, fingerprint(raw)[0])

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        body = self.own_fields(desired)
        if ORGANIZATION in body:
            org = body[ORGANIZATION]
            body[ORGANIZATION] = None if org is None else {"id": refs.id(ORGANIZATION, org)}
        return body


ROLE: Kind = Kind(
    name="role", manifest_key="roles", label="role", manifest_rank=2, path="/roles", body="role",
    computed=frozenset({"id", "created", "updated", "isPredefined", "isOrgrole", "isAssignable"}),
    defaults=frozen({"description": "", "organization": None}),
    references=(Reference("organization", "organization", body=("id",)),),
    fields=("id", "name", "created", "updated", "description", "organization"),
    page_index=True,
    ops=RoleOps(lambda: ROLE),
    reserved=RESERVED_NAMES,
)
