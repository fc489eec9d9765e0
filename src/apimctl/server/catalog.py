"""The catalog: every resource of the management API, its field table and its rules.

One entry per resource: the field table of the specification (:mod:`apimctl.server.tables`,
with the defaults of SUPPLEMENT §3) and, in :data:`RULES`, the hooks for what a table cannot
say (:class:`~apimctl.server.fields.Rules`), as references to the functions of the small rule
modules. :data:`CATALOG` pairs them and links every resource to the others, so that
:mod:`~apimctl.server.validation` and :mod:`~apimctl.server.query` follow nested fields to
their resources and the engine calls ``resource.rules.<hook>`` instead of asking which
resource it holds. Adding a resource means one table and, if it has rules, one entry here.

The rule modules never import this module (it imports them); they reach other resources
through :meth:`apimctl.server.context.Env.resource`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from apimctl.platform import ERROR_CATALOG
from apimctl.server import (
    domains,
    keys,
    maintenance,
    members,
    packages,
    roles,
    services,
    shapes,
    triggers,
)
from apimctl.server.dialects import DIALECTS, Dialect
from apimctl.server.fields import NO_RULES, SHORT_ID_ALPHABET, Resource, Rules
from apimctl.server.shapes import catalog_message
from apimctl.server.tables import TABLES, event_endpoint

__all__ = ["CATALOG", "CATALOGS", "ERROR_CATALOG", "RULES", "SHORT_ID_ALPHABET", "catalog_message", "resource"]

RULES: Mapping[str, Rules] = MappingProxyType({
    "Service": Rules(
        prepare=services.prepare, finalize=services.finalize,
        after_write=services.after_write, keeps_old=True, on_delete=services.on_delete,
    ),
    "Endpoint": Rules(
        after_build=shapes.endpoint_auth,
        write_computed={"scheduledMaintenanceEvent": maintenance.set_endpoint_event},
    ),
    "ErrorSet": Rules(after_build=shapes.fill_error_set, on_delete_item=services.delete_error_set),
    "PlanService": Rules(after_build=packages.mark_entitlement),
    "ErrorMessage": Rules(after_build=shapes.error_message_code),
    "Package": Rules(finalize=packages.finalize, on_delete=packages.on_delete),
    "Plan": Rules(on_delete_item=packages.delete_plan),
    "Role": Rules(
        prepare=roles.prepare, finalize=roles.finalize,
        after_write=roles.after_write, keeps_old=True, on_delete=roles.on_delete,
    ),
    "DomainWhitelist": Rules(prepare=domains.prepare, finalize=domains.finalize),
    "ScheduledMaintenanceEvent": Rules(finalize=maintenance.finalize_event),
    "Member": Rules(
        finalize=members.finalize, on_delete=members.on_delete,
        write_computed={"applications": members.create_applications},
        events="member", event_payload=triggers.member_object,
        event_nested=triggers.member_nested, event_cascade=triggers.member_cascade,
    ),
    "Application": Rules(
        on_delete=members.delete_application,
        write_computed={"packageKeys": members.create_keys},
        events="application", event_payload=triggers.application_object,
        event_nested=triggers.application_nested, event_cascade=triggers.application_cascade,
    ),
    "PackageKey": Rules(
        before_merge=keys.before_merge, prepare=keys.prepare, finalize=keys.finalize_key,
        keeps_old=True, on_delete=keys.on_delete,
        events="key", event_payload=triggers.key_object,
    ),
})


def _overlaid(table: Resource, dialect: Dialect) -> Resource:
    """A table with the dialect's changes to its rows and its extra fields."""
    changes = dialect.overlays.get(table.name, {})
    extra = dialect.extra_fields.get(table.name, ())
    if not changes and not extra:
        return table
    unknown = set(changes) - set(table.by_name)
    assert not unknown, (table.name, unknown)
    rows = tuple(dataclasses.replace(f, **changes[f.name]) if f.name in changes else f for f in table.fields)
    return dataclasses.replace(table, fields=rows + extra)


def _assemble(dialect: Dialect) -> Mapping[str, Resource]:
    """Each table (with the dialect's overlay) with its rules, every resource linked to the
    whole catalog of the dialect."""
    tables = {t.name: _overlaid(t, dialect) for t in (*TABLES, *dialect.extra_resources)}
    tables[_EVENT_ENDPOINT] = event_endpoint(tables["Endpoint"])
    assert set(RULES) <= set(tables), set(RULES) - set(tables)
    assert set(dialect.overlays) | set(dialect.extra_fields) <= set(tables)
    catalog = {name: dataclasses.replace(t, rules=RULES.get(name, NO_RULES)) for name, t in tables.items()}
    view = MappingProxyType(catalog)
    for res in catalog.values():
        res.catalog = view
    return view


_EVENT_ENDPOINT = "ScheduledMaintenanceEventEndpoint"

CATALOGS: Mapping[str, Mapping[str, Resource]] = MappingProxyType(
    {name: _assemble(d) for name, d in DIALECTS.items()})
CATALOG: Mapping[str, Resource] = CATALOGS["spec"]


def of(dialect: str) -> Mapping[str, Resource]:
    """The catalog of a dialect."""
    return CATALOGS[dialect]


def resource(name: str, dialect: str = "spec") -> Resource:
    """The resource called ``name`` (a programming error if unknown)."""
    return CATALOGS[dialect][name]
