"""A "real-looking" area, seeded through the management API (SUPPLEMENT §10.10).

Dumps of real areas hold shapes the specification did not foresee: endpoints sharing a path
on one public domain with other HTTP methods (§10.10.1), system domains with a port
(§10.10.2), CORS never set and other unset values (§10.10.3), a default error set of type
``text/xml`` (§10.10.4). :func:`seed_real_area` writes such an area through the API of a
reference server, the way a test of a client (the reconciler's read, export, plan and
apply) would meet it on a real platform::

    with serve(tmp_path, dialect="mashery") as http:
        area = seed_real_area(Api(http, TOKEN_A), "mashery")
        area.service_id, area.endpoint_ids["Forecast read"] ...

Only a ``mashery`` server accepts endpoints that share a path, and ``null`` for a back-end
secret; on a ``spec`` server (``dialect="spec"``: §4's path + domain uniqueness) each
endpoint gets its own path and the secret is written ``""``, and the unset values read as
§3's defaults instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spec_helpers import Api, describe

PUBLIC_HOST = "api.example.com"
BACKEND = "backend.example.net:443"  # a system domain with a port (§10.10.2)


@dataclass
class RealArea:
    """What :func:`seed_real_area` wrote: ids by name."""

    service_id: str
    endpoint_ids: dict[str, str] = field(default_factory=dict)
    method_ids: dict[str, str] = field(default_factory=dict)  # "endpoint/method" -> id
    error_set_id: str = ""


def _one(resp: Any) -> dict[str, Any]:
    assert resp.status_code == 200, describe(resp)
    body = resp.json()
    body = body[0] if isinstance(body, list) else body
    assert isinstance(body, dict), describe(resp)
    return body


def ensure_domains(api: Api, *domains: str) -> None:
    """The domains of the area's addresses (active at once on an auto-approving server)."""
    have = {d["domain"] for d in api.get("/domains", {"fields": "domain"}).json()}
    for domain in domains or ("example.com", "example.net"):
        if domain not in have:
            _one(api.post("/domains", {"domain": domain}))


def _endpoint(name: str, path: str, methods: list[str], **extra: Any) -> dict[str, Any]:
    return {"name": name, "requestPathAlias": path, "trafficManagerDomain": PUBLIC_HOST,
            "publicDomains": [{"address": PUBLIC_HOST}], "systemDomains": [{"address": BACKEND}],
            "supportedHttpMethods": methods, **extra}


def seed_real_area(api: Api, dialect: str = "mashery", name: str = "Real Weather",
                   path: str = "/forecast") -> RealArea:
    """A service as real areas hold them (see the module docstring) on a server of
    ``dialect``; ``name`` and ``path`` must be free in the area."""
    share_paths = dialect == "mashery"
    ensure_domains(api)
    service = _one(api.post("/services", {
        "name": name,
        "errorSets": [{"name": "Default", "type": "text/xml"}],  # §10.10.4
    }, {"fields": "id,errorSets"}))
    area = RealArea(service["id"], error_set_id=service["errorSets"][0]["id"])
    write_path, delete_path = (path, path) if share_paths else (f"{path}-write", f"{path}-delete")
    bodies = [
        # no cors, no credentials, no excluded headers: all never set (§10.10.3)
        _endpoint("Forecast read", path, ["get", "head"]),
        # the same path and public domain with other methods (§10.10.1), CORS set
        _endpoint("Forecast write", write_path, ["post", "put"],
                  cors={"allDomainsEnabled": False, "domainsAllowed": ["app.example.org"], "maxAge": 300}),
        # the spellings of "unset" a real area may hold, written
        _endpoint("Forecast delete", delete_path, ["delete"], systemDomainCredentialKey="",
                  systemDomainCredentialSecret=None if share_paths else "",
                  headersToExcludeFromIncomingCall=[""]),
    ]
    for body in bodies:
        ep = _one(api.post(f"/services/{area.service_id}/endpoints", body))
        area.endpoint_ids[body["name"]] = ep["id"]
    read_id = area.endpoint_ids["Forecast read"]
    for method in ("getForecast", "headForecast"):  # no sample responses (§10.10.3)
        created = _one(api.post(f"/services/{area.service_id}/endpoints/{read_id}/methods", {"name": method}))
        area.method_ids[f"Forecast read/{method}"] = created["id"]
    return area
