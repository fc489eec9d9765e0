"""The resource tree: URL path templates -> places in the stored documents.

Each :class:`Node` is one path segment of the management API (``services``, ``endpoints``,
``cors`` ...): the catalog resource it holds, the field of the parent object that stores it
(or the document kind, for top-level objects), whether it is a singleton, and which
operations it offers (:func:`dialect_root`: a dialect's operations and extra paths, in
:data:`ROOTS`). :func:`resolve` turns ``/services/S/endpoints/E/cors`` into a list of
:class:`Step`; :mod:`apimctl.server.engine` runs the operation generically on that.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from apimctl.server.dialects import DIALECTS, Dialect
from apimctl.server.errors import MethodNotAllowed, NotFound

COLLECTION_OPS = frozenset({"list", "create", "fetch", "update", "delete"})
READ_OPS = frozenset({"list", "fetch"})
SINGLE_OPS = frozenset({"get", "post", "put", "delete"})


@dataclass
class Node:
    segment: str
    resource: str
    field: str | None = None  # field of the parent object holding it (nested nodes)
    kind: str | None = None  # document kind (top-level objects, also when mounted)
    link: str | None = None  # mounted document: field of the child holding the parent's id
    single: bool = False
    ops: frozenset[str] = COLLECTION_OPS
    children: dict[str, Node] = dataclasses.field(default_factory=dict)
    special: str | None = None  # a handler of the engine replacing the generic one
    page_offsets: bool = False  # offset is a page index (members, applications, keys, roles)
    exact_filters: bool = False  # list filters match values exactly (an application's keys)
    parent_resource: str = ""  # resource of the parent node ("" at the top)

    def add(self, *children: Node) -> Node:
        for child in children:
            child.parent_resource = self.resource
            self.children[child.segment] = child
        return self


def nested(segment: str, resource: str, ops: frozenset[str] = COLLECTION_OPS, **kw: object) -> Node:
    return Node(segment, resource, field=str(kw.pop("field", segment)), ops=ops, **kw)  # type: ignore[arg-type]


def single(segment: str, resource: str, ops: frozenset[str] = SINGLE_OPS, **kw: object) -> Node:
    return Node(segment, resource, field=segment, single=True, ops=ops, **kw)  # type: ignore[arg-type]


REF_OPS = frozenset({"list", "create", "fetch", "delete"})

ROOT = Node("", "").add(
    Node("services", "Service", kind="service").add(
        nested("endpoints", "Endpoint", ops=COLLECTION_OPS | {"bulk_update"}).add(
            single("cors", "Cors"),
            single("cache", "EndpointCache"),
            single("processor", "Processor"),
            single("systemDomainAuthentication", "SystemDomainAuthentication"),
            single("scheduledMaintenanceEvent", "ScheduledMaintenanceEvent", special="endpoint_event"),
            nested("methods", "Method").add(nested("responseFilters", "ResponseFilter")),
        ),
        nested("errorSets", "ErrorSet").add(
            nested("errorMessages", "ErrorMessage"),
        ),
        single("cache", "ServiceCache"),
        single("securityProfile", "SecurityProfile", ops=frozenset({"get"})).add(single("oauth", "OAuth")),
        nested("roles", "ServiceRole"),
    ),
    Node("packages", "Package", kind="package").add(
        nested("plans", "Plan").add(
            nested("services", "PlanService", ops=REF_OPS).add(
                nested("endpoints", "PlanEndpoint", ops=REF_OPS).add(
                    nested("methods", "PlanMethod", ops=REF_OPS),
                ),
            ),
            nested("roles", "PlanRole"),
        ),
    ),
    Node("roles", "Role", kind="role", page_offsets=True),
    Node("domains", "DomainWhitelist", kind="domain", ops=frozenset({"list", "create", "fetch", "update"})),
    Node("scheduledMaintenanceEvents", "ScheduledMaintenanceEvent", kind="event").add(
        nested("endpoints", "ScheduledMaintenanceEventEndpoint",
               ops=COLLECTION_OPS | {"bulk_update"}),
    ),
    Node("members", "Member", kind="member", page_offsets=True).add(
        Node("applications", "Application", kind="application", link="_memberId",
             ops=COLLECTION_OPS, page_offsets=True),
    ),
    Node("applications", "Application", kind="application", page_offsets=True,
         ops=frozenset({"list", "fetch", "update", "delete"})).add(
        Node("packageKeys", "PackageKey", kind="key", link="_applicationId", page_offsets=True,
             exact_filters=True),
    ),
    Node("packageKeys", "PackageKey", kind="key", page_offsets=True,
         ops=frozenset({"list", "fetch", "update", "delete"})),
    Node("organizations", "Organization", kind="organization", ops=READ_OPS),
    Node("emailTemplateSets", "EmailTemplateSet", kind="emailTemplateSet", ops=READ_OPS).add(
        nested("emailTemplates", "EmailTemplate", ops=READ_OPS),
    ),
)

_PARAM_NAMES = {
    "services": "serviceId", "endpoints": "endpointId", "methods": "methodId",
    "responseFilters": "responseFilterId", "errorSets": "errorSetId", "errorMessages": "messageType",
    "roles": "roleId", "packages": "packageId", "plans": "planId", "domains": "domainId",
    "scheduledMaintenanceEvents": "scheduledMaintenanceEventId", "members": "memberId",
    "applications": "applicationId", "packageKeys": "packageKeyId", "organizations": "organizationId",
    "emailTemplateSets": "emailTemplateSetId", "emailTemplates": "emailTemplateId",
}


def _at(root: Node, path: str) -> Node:
    node = root
    for segment in path.split("/"):
        node = node.children[segment]
    return node


def dialect_root(dialect: Dialect) -> Node:
    """The tree of a dialect: :data:`ROOT` with its operations and extra singletons."""
    root = copy.deepcopy(ROOT)
    for path, ops in dialect.node_ops.items():
        _at(root, path).ops = ops
    for path, singles in dialect.extra_singles.items():
        _at(root, path).add(*(single(segment, resource) for segment, resource in singles))
    return root


ROOTS: Mapping[str, Node] = MappingProxyType({name: dialect_root(d) for name, d in DIALECTS.items()})


@dataclass
class Step:
    node: Node
    id: str | None = None


def resolve(segments: list[str], root: Node = ROOT) -> tuple[list[Step], str]:
    """``["services", "S", "endpoints"]`` -> steps, and the path template for counting calls."""
    steps: list[Step] = []
    template: list[str] = []
    current = root
    i = 0
    while i < len(segments):
        seg = segments[i]
        node = current.children.get(seg)
        if node is None:
            raise NotFound(f"no such resource: /{'/'.join(segments)}")
        template.append(seg)
        if node.single or i + 1 >= len(segments):
            steps.append(Step(node))
            i += 1
        else:
            steps.append(Step(node, segments[i + 1]))
            template.append("{" + _PARAM_NAMES.get(seg, "id") + "}")
            i += 2
        current = node
    if not steps:
        raise NotFound("no such resource: /")
    return steps, "/" + "/".join(template)


def method_not_allowed(method: str, template: str) -> MethodNotAllowed:
    return MethodNotAllowed(f"{method} is not supported on {template}")
