"""Roles (``roles``): referenced by services and plans for permissions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apimctl.kinds.base import Compare, Export, Kind, Reference, frozen
from apimctl.kinds.dialects import Dialect
from apimctl.kinds.nested_writes import Links
from apimctl.kinds.ops import Exported, Lookups, Ops, Read, fingerprint
from apimctl.kinds.organization import ORGANIZATION as ORGANIZATION_KIND
from apimctl.kinds.protocol import Holdings
from apimctl.kinds.references.paths import refs_of
from apimctl.kinds.words import named

# the field naming a role's organization (a read-only kind), and where organizations are listed
ORGANIZATION = ORGANIZATION_KIND.name
ORGANIZATION_PATH = ORGANIZATION_KIND.path

# The role that is the area's apply lease (:mod:`apimctl.applying.lease`): created and deleted
# by apply, never read into live state, planned, pruned or exported (``ROLES.lease``).
LEASE_NAME = "apimctl-apply-lease"


def _whole(dialect: Dialect) -> bool:
    return dialect.roles_as_collection


def _action_required(dialect: Dialect) -> bool:
    return dialect.role_action_required


def permissions(action: str) -> Links:
    """How role permissions (a service's or a plan's ``roles``) are written: links to roles
    with their ``action``, told apart by the role's name, item by item or as one collection
    where the target writes them so (SUPPLEMENT §10.7)."""
    return Links(action=action, named=True, whole=_whole, action_required=_action_required)


def role_permissions(kind: Kind, doc: Mapping[str, Any]) -> list[str]:
    """``the read permissions of role Partners``: what goes with a deleted object of ``kind``
    (``doc``) that names roles (``Kind.callers.role_permits``)."""
    roles = [r.name for r in refs_of(kind, doc) if r.kind == ROLE.name]
    return [f"the {kind.callers.role_permits} permissions of {named(ROLE.label, roles)}"] if roles else []


class RoleOps(Ops):
    """A role names its organization (by name in manifests, by id in bodies: its
    ``Reference``)."""

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        doc = self.strip(raw)
        org = doc.get(ORGANIZATION)
        if isinstance(org, Mapping):
            doc[ORGANIZATION] = org.get("name")
        doc.pop("group", None)
        return Read(doc, fingerprint(raw)[0])

    def export(self, entry: Exported) -> Any:
        """A role with nothing but its name is written as the name."""
        return entry.doc if len(entry.doc) > 1 else entry.doc[ROLE.identity]

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """Its permissions on the objects that name it (``its read permissions on service
        Ordering``): a top-level object by its key, a nested one by its own name."""
        return [f"its {kind.callers.role_permits} permissions on "
                f"{named(kind.label, [o.key if o.parent_key is None else o.name for o in held])}"
                for kind, held in area.naming(self.kind.name, key) if kind.callers.role_permits]


ROLE: Kind = Kind(
    name="role", manifest_key="roles", label="role", path="/roles", body="role",
    compare=Compare(computed=frozenset({"id", "created", "updated", "isPredefined", "isOrgrole",
                                        "isAssignable"})),
    defaults=frozen({"description": "", "organization": None}),
    references=(Reference(ORGANIZATION, ORGANIZATION_KIND.name, body=("id",)),),
    fields=("id", "name", "created", "updated", "description", "organization.id",
            "organization.name"),
    page_index=True,
    export=Export(manifest_rank=2, export_first=("description",)),
    operations=RoleOps,
)
