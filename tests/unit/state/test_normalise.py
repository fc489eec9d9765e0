"""Normal forms: defaults, quirks, sets, secrets, datetimes, error catalog; their digests."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from apimctl import kinds
from apimctl.state.digests import digest, digests, unchanged, unchanged_by, wanted_digests
from apimctl.state.normal_batches import live_digests
from apimctl.state.normalise import Context, canonical_datetime, normalise, secret_hash


def test_unwritten_fields_get_server_defaults() -> None:
    out = normalise(kinds.ENDPOINT, {"name": "F"}, Context("Default"))
    assert out["supportedHttpMethods"] == ["get"]
    assert out["cors"]["allDomainsEnabled"] is True
    assert out["systemDomainAuthentication"] is None
    assert out["errorSet"] == "Default"
    assert "methods" not in out  # left alone when omitted


def test_quirks_fold_to_one_form() -> None:
    a = normalise(kinds.ENDPOINT, {"name": "F", "apiKeyValueLocations": "request-header",
                                   "cors": None, "customRequestAuthenticationAdapter": ""})
    b = normalise(kinds.ENDPOINT, {"name": "F", "apiKeyValueLocations": ["request-header"],
                                   "customRequestAuthenticationAdapter": None})
    assert a == b


def test_enum_arrays_compare_as_sets() -> None:
    a = normalise(kinds.ENDPOINT, {"name": "F", "supportedHttpMethods": ["post", "get", "get"]})
    b = normalise(kinds.ENDPOINT, {"name": "F", "supportedHttpMethods": ["get", "post"]})
    assert a == b


def test_version_number_is_text_and_computed_fields_dropped() -> None:
    out = normalise(kinds.SERVICE, {"name": "S", "version": 2, "revisionNumber": 7, "id": "x",
                                    "endpoints": [{"name": "E"}]})
    assert out["version"] == "2"
    assert "revisionNumber" not in out and "id" not in out and "endpoints" not in out


def test_error_messages_cover_the_catalog() -> None:
    out = normalise(kinds.ERROR_SET, {"name": "E", "errorMessages": [
        {"id": "ERR_403_DEVELOPER_OVER_QPS", "status": "Too Many Requests", "code": 403}]})
    msgs = out["errorMessages"]
    assert set(msgs) == set(kinds.ERROR_CATALOG)
    assert msgs["ERR_403_DEVELOPER_OVER_QPS"] == {"status": "Too Many Requests", "detailHeader": "",
                                                  "responseBody": ""}
    assert msgs["ERR_502_BAD_GATEWAY"]["status"] == "Bad Gateway"
    assert normalise(kinds.ERROR_SET, {"name": "E"}) == normalise(
        kinds.ERROR_SET, {"name": "E", "errorMessages": None})


def test_secrets_are_hashed_and_write_only_dropped() -> None:
    out = normalise(kinds.ENDPOINT, {"name": "F", "systemDomainCredentialSecret": "pw",
                                     "systemDomainAuthentication": {"type": "httpBasic",
                                                                    "password": "x"}})
    assert out["systemDomainCredentialSecret"] == secret_hash("pw")
    assert "pw" not in repr(out) and "password" not in out["systemDomainAuthentication"]
    assert secret_hash("") == ""


def test_datetimes_in_both_renderings() -> None:
    assert canonical_datetime("2026-12-01T02:00:00.000+0000") == "2026-12-01T02:00:00Z"
    assert canonical_datetime("2026-12-01T03:00:00+01:00") == "2026-12-01T02:00:00Z"
    assert canonical_datetime("2026-12-01T02:00:00.250Z") == "2026-12-01T02:00:00.250Z"
    assert canonical_datetime("not a date") == "not a date"


def test_plan_entitlements_and_event_endpoints() -> None:
    plan = normalise(kinds.PLAN, {"name": "G", "services": [{"name": "S", "endpoints": [{"name": "E"}]}],
                                  "roles": ["b", "a"]})
    assert plan["services"] == {"S": {"endpoints": {"E": {"undefinedMethodsAllowed": True,
                                                          "methods": []}}}}
    assert plan["roles"] == ["a", "b"]
    ev = normalise(kinds.MAINTENANCE_EVENT, {"name": "M", "endpoints": [
        {"service": "S", "endpoint": "E"}], "startDateTime": "2026-12-01T02:00:00Z"})
    assert ev["endpoints"] == ["S/E"]


@given(st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2999, 12, 31),
                    timezones=st.just(dt.UTC)))
def test_datetime_renderings_agree(when: dt.datetime) -> None:
    z = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    plus = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}+0000"
    assert canonical_datetime(z) == canonical_datetime(plus)


def test_oauth_endpoints_default_to_no_api_key_locations() -> None:
    ep = kinds.get("endpoint")
    oauth = {"name": "Token", "requestAuthenticationType": "oauth", "oauthGrantTypes": ["password"]}
    assert normalise(ep, oauth)["apiKeyValueLocations"] == normalise(ep, {**oauth, "apiKeyValueLocations": []})[
        "apiKeyValueLocations"]
    assert normalise(ep, {"name": "Key"})["apiKeyValueLocations"] != normalise(ep, oauth)["apiKeyValueLocations"]


def test_digests_tell_apart_every_type_a_normal_form_holds() -> None:
    values = [1, 1.0, True, "1", None, [], {}, [1], {"a": 1}, "", 0, False]
    assert len({digest(v) for v in values}) == len(values)
    assert digest({"a": [1, "b"]}) == digest({"a": [1, "b"]})
    assert digest({"a": 1, "b": 2}) != digest({"b": 2, "a": 1})  # then a diff decides
    assert len(digest("x") or b"") == 32 and digest(object()) is None
    assert digests(kinds.ENDPOINT, {"name": "F", "x": object()}) is None


def test_unchanged_compares_what_a_diff_compares() -> None:
    live = {"name": "F", "requestPathAlias": "/f", "methods": [{"name": "get"}]}
    parts = digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, live, Context("E")))
    assert parts is not None and len(parts) == 32 * 2  # the endpoint, then its methods
    want = normalise(kinds.ENDPOINT, {"name": "F", "requestPathAlias": "/f"}, Context("E"))
    assert unchanged(kinds.ENDPOINT, parts, want)  # methods omitted: left alone
    declared = normalise(kinds.ENDPOINT, {**live, "methods": [{"name": "get"}]}, Context("E"))
    assert unchanged(kinds.ENDPOINT, parts, declared)
    other = normalise(kinds.ENDPOINT, {**live, "methods": [{"name": "put"}]}, Context("E"))
    assert not unchanged(kinds.ENDPOINT, parts, other)
    moved = normalise(kinds.ENDPOINT, {"name": "F", "requestPathAlias": "/g"}, Context("E"))
    assert not unchanged(kinds.ENDPOINT, parts, moved)
    bare = digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, {"name": "F", "requestPathAlias": "/f"},
                                             Context("E")))
    assert bare is not None and parts is not None
    assert unchanged(kinds.ENDPOINT, bare, want) and not unchanged(kinds.ENDPOINT, bare, declared)


def test_the_desired_side_kept_as_digests_compares_as_unchanged_does() -> None:
    live = {"name": "F", "requestPathAlias": "/f", "methods": [{"name": "get"}]}
    with_methods = digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, live, Context("E")))
    bare = digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, {**live, "methods": []}, Context("E")))
    sides = [{"name": "F", "requestPathAlias": "/f"}, live, {**live, "methods": [{"name": "put"}]},
             {**live, "methods": []}, {"name": "F", "requestPathAlias": "/g"}]
    for parts in (with_methods, bare):
        assert parts is not None
        for side in sides:
            want = normalise(kinds.ENDPOINT, side, Context("E"))
            wanted = wanted_digests(kinds.ENDPOINT, want)
            assert wanted is not None and want == normalise(kinds.ENDPOINT, side, Context("E"))
            assert unchanged_by(kinds.ENDPOINT, parts, wanted) == unchanged(kinds.ENDPOINT, parts, want)
    assert unchanged_by(kinds.ENDPOINT, with_methods or b"",
                        wanted_digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, sides[0], Context("E"))) or b"")
    assert wanted_digests(kinds.ENDPOINT, {"name": "F", "methods": {"get": object()}}) is None


def test_normal_forms_share_no_containers() -> None:
    """The comparing stages change normal forms in place: each call's containers are its own."""
    first = normalise(kinds.ENDPOINT, {"name": "F"}, Context("E"))
    first["cache"]["contentCacheKeyHeaders"].append("x")
    first["processor"]["preInputs"]["k"] = "v"
    first["apiKeyValueLocations"].clear()
    first["cors"].pop("maxAge")
    again = normalise(kinds.ENDPOINT, {"name": "F"}, Context("E"))
    assert again["cache"]["contentCacheKeyHeaders"] == [] and again["processor"]["preInputs"] == {}
    assert again["apiKeyValueLocations"] == ["request-parameters"] and again["cors"]["maxAge"] == 0
    messages = normalise(kinds.ERROR_SET, {"name": "S"})["errorMessages"]
    messages["ERR_403_DEVELOPER_OVER_QPS"]["detailHeader"] = "changed"
    fresh = normalise(kinds.ERROR_SET, {"name": "S"})["errorMessages"]
    assert fresh["ERR_403_DEVELOPER_OVER_QPS"]["detailHeader"] == ""


def test_live_digests_leave_out_the_fields_apimctl_does_not_manage() -> None:
    """A mashery area's objects hold the fields of SUPPLEMENT §10.8; a comparison leaves them
    out unless the manifest names one, and so do the live digests (without changing a nested
    value other forms may share)."""
    bare = {"name": "F", "requestPathAlias": "/f"}
    extra = {**bare, "inboundMsslRequired": False, "rateLimitHeadersEnabled": True}
    assert live_digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, extra, Context("E"))) == \
        digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, bare, Context("E")))
    oauth = {"grantTypes": ["password"], "masheryTokenApiEnabled": True}
    shared = {"oauth": oauth}
    normal = {"name": "S", "securityProfile": shared}
    left = live_digests(kinds.SERVICE, normal)
    assert shared == {"oauth": oauth} and oauth["masheryTokenApiEnabled"] is True
    assert left == digests(kinds.SERVICE, {"name": "S", "securityProfile": {"oauth": {"grantTypes": ["password"]}}})
    live = live_digests(kinds.ENDPOINT, normalise(kinds.ENDPOINT, extra, Context("E")))
    assert live is not None
    assert unchanged(kinds.ENDPOINT, live, normalise(kinds.ENDPOINT, bare, Context("E")))
    named = normalise(kinds.ENDPOINT, {**bare, "inboundMsslRequired": False}, Context("E"))
    assert not unchanged(kinds.ENDPOINT, live, named)  # named by the manifest: diffed
