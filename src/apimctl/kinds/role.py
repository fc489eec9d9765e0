"""Roles (``roles``): referenced by services and plans for permissions."""

from __future__ import annotations

from apimctl.kinds.base import Kind, frozen

ROLE = Kind(
    name="role", manifest_key="roles", path="/roles", body="role",
    computed=frozenset({"id", "created", "updated", "isPredefined", "isOrgrole", "isAssignable"}),
    defaults=frozen({"description": "", "organization": None}),
    references=(),
    fields=("id", "name", "created", "updated", "description", "organization"),
    page_index=True,
)
