"""Plans built by hand for the renderer tests (imported by the renderer tests of this folder)."""

from __future__ import annotations

from apimctl.plans.model import Change, Fingerprint, Plan, Step, Unmanaged

SECRET = "hunter2-Backend-Secret"
PASSWORD = "p4ss|`word`"


def mixed_plan() -> Plan:
    """Creates with nested fields, updates, a delete, secrets, unmanaged, ignored, warnings."""
    return Plan(
        steps=[
            Step("create", "service", "Weather",
                 desired={"name": "Weather", "version": "2", "cache": {"cacheTtl": 0}}),
            Step("create", "endpoint", "Weather/Forecast", parent="service:Weather",
                 depends_on=("service:Weather",),
                 desired={
                     "name": "Forecast",
                     "requestPathAlias": "/v2/forecast",
                     "supportedHttpMethods": ["get", "post"],
                     "systemDomainCredentialSecret": "${FORECAST_BACKEND_SECRET}",
                     "systemDomainAuthentication": {"type": "httpBasic", "username": "svc",
                                                    "password": "${BACKEND_PASSWORD}"},
                     "cors": {"allDomainsEnabled": False,
                              "domainsAllowed": ["https://app.example.com"], "maxAge": 60},
                 }),
            Step("update", "endpoint", "Weather/Current", id="e-2", parent="service:Weather",
                 parent_id="s-1",
                 changes=(
                     Change("cors.maxAge", 60, 120),
                     Change("description", None, "Current conditions"),
                     Change("notes", "temporary", None),
                     Change("systemDomainCredentialSecret", None, None, sensitive=True),
                     Change("supportedHttpMethods", ["get"], ["get", "head"]),
                 )),
            Step("update", "plan", "Weather Partners/Gold", id="p-1", parent="package:Weather Partners",
                 parent_id="k-1",
                 changes=(Change("rateLimitCeiling", 100000, 50000),
                          Change("qpsLimitKeyOverrideAllowed", False, True),
                          Change("description", "Gold", "Gold tier"))),
            Step("delete", "role", "Interns", id="r-9"),
        ],
        unmanaged=[Unmanaged("service", "Legacy", "s-7"), Unmanaged("package", "Old Partners", "k-3")],
        fingerprints={"endpoint:Weather/Current": Fingerprint("endpoint", "Weather/Current", "e-2",
                                                               "2026-11-20T10:00:00Z", 7)},
        ignored=[{"target": "endpoint:Weather/Current:cache.cacheTtl", "reason": "ops tune this by hand"}],
        target="https://deploy:tok3n@api.example.com/v3/rest?access_token=abc",
        warnings=["weather.yaml:12:9: services[0].endpoints[0].notes: deprecated field"],
        secret_values={
            "endpoint:Weather/Forecast#systemDomainCredentialSecret": SECRET,
            "endpoint:Weather/Forecast#systemDomainAuthentication.password": PASSWORD,
        },
    )


def no_change_plan() -> Plan:
    return Plan(unmanaged=[Unmanaged("role", "Partners", "r-1")],
                target="http://127.0.0.1:8080/v3/rest")


def big_plan(updates: int, creates: int, deletes: int = 0) -> Plan:
    """Many endpoint updates and creates (and deletes), for the Markdown length limit."""
    steps = [
        Step("update", "endpoint", f"Weather/E{i:05d}", id=f"e-{i}",
             changes=(Change("cors.maxAge", 60, 120), Change("description", "old text", f"endpoint {i}"),
                      Change("requestPathAlias", f"/v1/e{i}", f"/v2/e{i}")))
        for i in range(updates)
    ]
    steps += [
        Step("create", "endpoint", f"Weather/N{i:05d}",
             desired={"name": f"N{i:05d}", "requestPathAlias": f"/v2/n{i}", "supportedHttpMethods": ["get"]})
        for i in range(creates)
    ]
    steps += [Step("delete", "service", f"Old{i:05d}", id=f"s-{i}") for i in range(deletes)]
    return Plan(steps=steps, target="https://api.example.com/v3/rest")
