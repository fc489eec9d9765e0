"""Properties of the reference server checked with hypothesis: any valid endpoint reads back
as written, and a random sequence of role writes always agrees with a simple model of it
(spec field tables; SUPPLEMENT §1, §4, §6)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule
from spec_helpers import TOKEN_A, Api, endpoint_body, make_service, serve, with_domains

ENUM_ARRAYS = {
    "supportedHttpMethods": ["get", "post", "put", "delete", "head", "options", "patch"],
    "apiKeyValueLocations": ["request-parameters", "request-path", "request-body", "request-header", "custom"],
    "apiMethodDetectionLocations": ["request-parameters", "request-path", "request-body", "request-header", "custom"],
    "forwardedHeaders": ["svc-host", "svc-message-id", "svc-service-id"],
    "returnedHeaders": ["svc-message-id", "svc-responder"],
}
BOOLEANS = [
    "allowMissingApiKey",
    "cookiesDuringHttpRedirectsEnabled",
    "dropApiKeyFromIncomingCall",
    "forceGzipOfBackendCall",
    "gzipPassthroughSupportEnabled",
    "highSecurity",
    "hostPassthroughIncludedInBackendCallHeader",
    "inboundSslRequired",
    "useSystemDomainCredentials",
]
STRINGS = [
    "apiKeyValueLocationKey",
    "apiMethodDetectionKey",
    "jsonpCallbackParameter",
    "jsonpCallbackParameterValue",
    "outboundRequestTargetPath",
    "outboundRequestTargetQueryParameters",
    "systemDomainCredentialKey",
]
text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=20)

endpoint_fields: dict[str, st.SearchStrategy[Any]] = {
    "connectionTimeoutForSystemDomainRequest": st.sampled_from([2, 5, 10, 20, 30, 45, 60]),
    "connectionTimeoutForSystemDomainResponse": st.sampled_from(
        [2, 5, 10, 20, 30, 45, 60, 120, 300, 600, 900, 1200]
    ),
    "requestProtocol": st.sampled_from(["rest", "soap", "xml-rpc", "json-rpc", "other"]),
    "outboundTransportProtocol": st.sampled_from(["use-inbound", "http", "https"]),
    "numberOfHttpRedirectsToFollow": st.integers(min_value=0, max_value=10),
    "headersToExcludeFromIncomingCall": st.lists(text, max_size=3),
    "cors": st.fixed_dictionaries(
        {},
        optional={
            "allDomainsEnabled": st.booleans(),
            "subDomainMatchingAllowed": st.booleans(),
            "maxAge": st.integers(min_value=0, max_value=10_000),
            "cookiesAllowed": st.booleans(),
            "domainsAllowed": st.lists(text, max_size=3),
            "headersAllowed": st.lists(text, max_size=3),
            "headersExposed": st.lists(text, max_size=3),
        },
    ),
}
for _name, _values in ENUM_ARRAYS.items():
    endpoint_fields[_name] = st.lists(st.sampled_from(_values), min_size=1, unique=True)
for _name in BOOLEANS:
    endpoint_fields[_name] = st.booleans()
for _name in STRINGS:
    endpoint_fields[_name] = text


def normal(value: Any) -> Any:
    """Enum arrays compare as sets (SUPPLEMENT §9: one value may come back as a string)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sorted(value)
    return value


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    with serve(tmp_path) as http:
        a = Api(http, TOKEN_A)
        with_domains(a)
        yield a


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(fields=st.fixed_dictionaries({}, optional=endpoint_fields))
def test_valid_endpoints_read_back_as_written(api: Api, fields: dict[str, Any]) -> None:
    sid = make_service(api, "Round Trip")["id"]
    try:
        resp = api.post(f"/services/{sid}/endpoints", {**endpoint_body(), **fields})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        eid = (body[0] if isinstance(body, list) else body)["id"]
        names = ",".join(fields) or "id"
        got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": names})
        for key, value in fields.items():
            if key == "cors":
                for cors_key, cors_value in value.items():
                    assert got["cors"][cors_key] == cors_value, cors_key
            else:
                actual = got[key]
                if key in ENUM_ARRAYS and isinstance(actual, str):
                    actual = [actual]
                assert normal(actual) == normal(value), key
    finally:
        assert api.delete(f"/services/{sid}").status_code == 200


class RoleModel(RuleBasedStateMachine):
    """Roles created, renamed and deleted at random; the server always agrees with a dict."""

    roles = Bundle("roles")

    def __init__(self) -> None:
        super().__init__()
        self._tmp = tempfile.TemporaryDirectory()
        self._ctx = serve(Path(self._tmp.name))
        http: httpx.Client = self._ctx.__enter__()
        self.api = Api(http, TOKEN_A)
        self.model: dict[str, str] = {}  # id -> name

    names = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])

    @rule(target=roles, name=names)
    def create(self, name: str) -> Any:
        resp = self.api.post("/roles", {"name": name})
        if name in self.model.values():
            assert resp.status_code == 400, resp.text
            assert "duplicate" in resp.text.lower()
            return None
        assert resp.status_code == 200, resp.text
        body = resp.json()
        rid = (body[0] if isinstance(body, list) else body)["id"]
        self.model[rid] = name
        return rid

    @rule(rid=roles, name=names)
    def rename(self, rid: str | None, name: str) -> None:
        if rid is None:
            return
        resp = self.api.put(f"/roles/{rid}", {"name": name})
        if rid not in self.model:
            assert resp.status_code == 404, resp.text
        elif name in self.model.values() and self.model[rid] != name:
            assert resp.status_code == 400, resp.text
        else:
            assert resp.status_code == 200, resp.text
            self.model[rid] = name

    @rule(rid=consumes(roles))
    def delete(self, rid: str | None) -> None:
        if rid is None:
            return
        resp = self.api.delete(f"/roles/{rid}")
        if rid in self.model:
            assert resp.status_code == 200, resp.text
            del self.model[rid]
        else:
            assert resp.status_code == 404, resp.text

    @invariant()
    def list_matches_model(self) -> None:
        resp = self.api.get("/roles", {"limit": "1000"})
        assert resp.status_code == 200
        assert {r["id"]: r["name"] for r in resp.json()} == self.model
        assert resp.headers["X-Total-Count"] == str(len(self.model))

    def teardown(self) -> None:
        self._ctx.__exit__(None, None, None)
        self._tmp.cleanup()


RoleModel.TestCase.settings = settings(max_examples=15, stateful_step_count=15, deadline=None)
test_role_model = RoleModel.TestCase
