"""Step 1, route: the call's host and path select an endpoint (SUPPLEMENT §11.1).

The endpoint whose public domain equals the host (the port is ignored unless the domain
names one) and whose ``requestPathAlias`` is the longest prefix of the path on a segment
boundary, among the endpoints that support the call's method (several endpoints may share a
path, §10.10.1). No endpoint at all: 596 Service Not Found; a path that only endpoints of
other methods serve: 405 with ``Allow``. The endpoints are looked up by domain and by each
prefix of the path in the area's table (:meth:`~apimctl.server.traffic.area.Area.by_domain`),
not walked one by one. The path is
the call's normalised one (:mod:`~apimctl.server.traffic.request`), and an alias is compared
as that path spells it (:func:`~apimctl.server.traffic.request.alias_path`); the route's
``alias`` and ``rest`` are what the forward step puts the target path in place of and after.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apimctl.server.traffic.area import Area
from apimctl.server.traffic.model import Answer, Final


@dataclass
class Route:
    area: Area
    service: dict[str, Any]
    endpoint: dict[str, Any]
    alias: str  # the alias as a normalised path prefix ("" for the root, else "/...")
    rest: str  # the path after the alias ("" or "/...")


def _host_matches(domain: str, host: str) -> bool:
    domain, host = domain.strip().lower(), host.strip().lower()
    if ":" in domain:
        return domain == host
    return domain == host.rsplit(":", 1)[0] if not host.startswith("[") else domain == host


def _alias_matches(alias: str, path: str) -> str | None:
    """The rest of ``path`` after ``alias`` (a normalised prefix) when the alias is a prefix on
    a segment boundary."""
    if path == alias or alias == "":
        return path[len(alias):]
    if path.startswith(alias + "/"):
        return path[len(alias):]
    return None


def prefixes(path: str) -> list[str]:
    """The aliases (normalised path prefixes) that may match ``path`` on a segment boundary:
    the root, ``path`` up to each ``/`` after the first character, and ``path`` itself."""
    out = [""]
    out += [path[:i] for i in range(1, len(path)) if path[i] == "/"]
    out.append(path)
    return out


def candidates(areas: list[Area], host: str, path: str) -> list[Route]:
    """Every endpoint whose domain and alias match, longest alias first (in the areas' order
    among aliases of one length)."""
    name = host.strip().lower()
    keys = {name} if name.startswith("[") else {name, name.rsplit(":", 1)[0]}
    keys = {key for key in keys if _host_matches(key, host)}
    aliases = prefixes(path)
    out: list[tuple[int, int, int, Route]] = []
    for place, area in enumerate(areas):
        table = area.by_domain()
        found: dict[int, Route] = {}
        for key in keys:
            by_alias = table.get(key)
            if not by_alias:
                continue
            for alias in aliases:
                for order, service, ep in by_alias.get(alias, ()):
                    rest = _alias_matches(alias, path)
                    if rest is not None:
                        found.setdefault(order, Route(area, service, ep, alias, rest))
        out += [(-len(r.alias.strip("/")), place, order, r) for order, r in found.items()]
    out.sort(key=lambda item: item[:3])
    return [item[3] for item in out]


def methods_of(endpoint: dict[str, Any]) -> set[str]:
    return {str(m).upper() for m in endpoint.get("supportedHttpMethods") or []}


def route(areas: list[Area], method: str, host: str, path: str) -> Route:
    """The endpoint that serves the call, or :class:`Final` (596, 405)."""
    found = candidates(areas, host, path)
    for candidate in found:
        if method.upper() in methods_of(candidate.endpoint):
            return candidate
    if not found:
        raise Final("route", f"no endpoint for {host}{path}: 596 Service Not Found",
                    Answer(596, [("Content-Type", "text/html")], b"<h1>Service Not Found</h1>",
                           reason="Service Not Found"))
    longest = len(found[0].alias.strip("/"))
    allow = sorted(set().union(*(methods_of(r.endpoint) for r in found
                                 if len(r.alias.strip("/")) == longest)))
    raise Final("route", f"{method} not supported on {host}{path} (allowed: {', '.join(allow)}): 405",
                Answer(405, [("Allow", ", ".join(allow)), ("Content-Type", "text/html")],
                       b"<h1>Method Not Allowed</h1>"))
