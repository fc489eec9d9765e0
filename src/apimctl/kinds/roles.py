"""The roles one kind alone holds, each named once beside :data:`~apimctl.kinds.KINDS`.

A stage that needs *the* kind of something (the kind keys are issued for, the lease's kind)
asks :data:`ROLES` rather than looking for a flag that only one entry sets: ``kind is
ROLES.keys_for``. Each role is held by one kind by construction, and a kind that takes no role
is added without reading this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apimctl.kinds.base import Kind
from apimctl.kinds.endpoint import ENDPOINT
from apimctl.kinds.plan import PLAN
from apimctl.kinds.role import LEASE_NAME, ROLE
from apimctl.kinds.service import SERVICE


@dataclass(frozen=True)
class Roles:
    """The kind holding each role.

    - ``lease``: the kind of the area's apply lease (:mod:`apimctl.applying.lease`), and
      ``lease_name`` that object's identity: created, renewed and deleted by apply, unique in
      an area (its creation is atomic); never read into live state, so never planned, pruned
      or exported (:meth:`reserved`).
    - ``probe``: a kind every area holds, whatever it serves besides: ``apimctl doctor``'s
      first call lists it (one object, its id only), and an area whose replies have not told
      its dialect is probed by reading one object of it that does not exist (a 404 in both).
    - ``keys_for``: the kind API keys are issued for (plans): a key names one by its parent's
      name and its own.
    - ``tells_dialect``: the kind whose live objects tell the dialect by their values (every
      endpoint of a ``mashery`` area returns ``mashery-responder`` unless told not to).
    - ``editor_recorded``: the kind whose last writer the platform records (``editorHandle``,
      with ``updated`` and ``revisionNumber``), the record moving with every write to anything
      in it: drift attributes a difference to it.
    - ``file_per_object``: the kind export's ``per-service`` layout writes one file per object
      (``service-<name>.yaml``).
    """

    lease: Kind
    lease_name: str
    probe: Kind
    keys_for: Kind
    tells_dialect: Kind
    editor_recorded: Kind
    file_per_object: Kind

    def reserved(self, kind: Kind, name: Any) -> bool:
        """Whether the object of ``kind`` called ``name`` is one apimctl itself uses (the lease):
        never read into live state."""
        return kind is self.lease and name == self.lease_name


ROLES = Roles(
    lease=ROLE,
    lease_name=LEASE_NAME,
    probe=SERVICE,
    keys_for=PLAN,
    tells_dialect=ENDPOINT,
    editor_recorded=SERVICE,
    file_per_object=SERVICE,
)
