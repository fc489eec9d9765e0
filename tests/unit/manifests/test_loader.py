"""The public interface of ``apimctl.manifests``: canonical form, positions, secrets,
variables, anchors, overlays and the file-level guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl.errors import ManifestError
from apimctl.manifests import (
    SECRET_FIELDS,
    Position,
    is_secret_path,
    load_manifests,
    validate,
    validate_paths,
    yaml_events,
)

from .corpus_cases import DOMAINS, SERVICE

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "weather"

FULL = DOMAINS + """\
roles: [Partners, {name: Internal, description: staff only, organization: null}]
services:
  - name: Weather
    roles: [Partners]
    errorSets: [{name: JSON errors, type: application/json}]
    endpoints:
      - name: Forecast
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        errorSet: JSON errors
        systemDomainCredentialSecret: ${SECRET}
        systemDomainAuthentication: {type: httpBasic, username: svc, password: "${PASSWORD:-pw}"}
        methods: [{name: getForecast}]
      - name: Alerts
        requestPathAlias: /v2/alerts
        trafficManagerDomain: api.example.com
packages:
  - name: Partners
    plans:
      - name: Gold
        roles: [Partners]
        services:
          - name: Weather
            endpoints: [Forecast, {name: Alerts, undefinedMethodsAllowed: false}]
      - name: Silver
        services: [{name: Weather}]
scheduledMaintenanceEvents:
  - name: Upgrade
    startDateTime: 2026-12-01T02:00:00Z
    endDateTime: 2026-12-01T04:00:00.000+0000
    endpoints: [{service: Weather, endpoint: Forecast}]
"""


def test_canonical_form(workdir) -> None:
    workdir({"m.yaml": FULL})
    manifest = load_manifests(["m.yaml"], env={"SECRET": "s3cret"})
    doc = manifest.doc
    assert doc["domains"] == [{"domain": "example.com"}, {"domain": "example.net"}]
    assert doc["roles"] == [{"name": "Partners"},
                            {"name": "Internal", "description": "staff only", "organization": None}]
    assert doc["services"][0]["roles"] == ["Partners"]
    gold, silver = doc["packages"][0]["plans"]
    assert gold["services"][0]["endpoints"] == [{"name": "Forecast"},
                                                {"name": "Alerts", "undefinedMethodsAllowed": False}]
    assert silver["services"][0]["endpoints"] == [{"name": "Forecast"}, {"name": "Alerts"}]
    event = doc["scheduledMaintenanceEvents"][0]
    assert event["startDateTime"] == "2026-12-01T02:00:00Z"  # unquoted timestamps stay strings
    assert "settings" not in doc
    assert "cors" not in doc["services"][0]["endpoints"][0]  # no defaults filled in
    assert manifest.files == ["m.yaml"]


def test_secrets_are_resolved_and_their_references_kept(workdir) -> None:
    workdir({"m.yaml": FULL})
    manifest = load_manifests(["m.yaml"], env={"SECRET": "s3cret"})
    endpoint = manifest.doc["services"][0]["endpoints"][0]
    assert endpoint["systemDomainCredentialSecret"] == "s3cret"
    assert endpoint["systemDomainAuthentication"]["password"] == "pw"
    assert manifest.secret_refs == {
        ("services", 0, "endpoints", 0, "systemDomainCredentialSecret"): "${SECRET}",
        ("services", 0, "endpoints", 0, "systemDomainAuthentication", "password"): "${PASSWORD:-pw}",
    }
    assert all(is_secret_path(path) for path in manifest.secret_refs)
    assert not is_secret_path(("services", 0, "endpoints", 0, "name"))
    assert len(SECRET_FIELDS) == 2


def test_positions_and_where(workdir) -> None:
    workdir({"m.yaml": FULL})
    manifest = load_manifests(["m.yaml"], env={"SECRET": "x"})
    assert manifest.positions[("services", 0, "endpoints", 1, "name")] == Position("m.yaml", 17, 9)
    assert manifest.where(("services", 0, "endpoints", 1, "cors", "maxAge")) == Position("m.yaml", 17, 9)
    # an expanded shorthand has the position of what was written
    assert manifest.where(("packages", 0, "plans", 1, "services", 0, "endpoints", 1)) == Position("m.yaml", 29, 20)
    assert manifest.where(("roles", 0, "name")) == Position("m.yaml", 2, 9)


def test_example_loads_without_environment() -> None:
    manifest = load_manifests([str(EXAMPLE)], env={})
    assert manifest.files == [str(EXAMPLE / "weather.yaml")]
    assert manifest.warnings == []
    assert manifest.doc["services"][0]["endpoints"][0]["systemDomainCredentialSecret"] == ""


def test_errors_raise_with_every_problem(workdir) -> None:
    workdir({"m.yaml": SERVICE.replace("/v2/forecast", "${MISSING}")
             + "        systemDomainCredentialSecret: literal\n"})
    with pytest.raises(ManifestError) as caught:
        load_manifests(["m.yaml"], env={})
    severities = sorted(p.severity for p in caught.value.problems)
    assert severities == ["error", "warning", "warning", "warning"]
    assert "MISSING" in str(caught.value)
    assert "warning" not in str(caught.value)  # the message lists the errors
    assert validate_paths(["m.yaml"], env={}) == caught.value.problems


def test_warnings_do_not_fail(workdir) -> None:
    workdir({"m.yaml": SERVICE})
    manifest = load_manifests(["m.yaml"], env={})
    assert [w.severity for w in manifest.warnings] == ["warning", "warning"]


@pytest.mark.parametrize(("written", "env", "expected"), [
    ("${QPS}", {"QPS": "10"}, 10),
    ("${QPS:-7}", {}, 7),
    ("${QPS:-7}", {"QPS": ""}, 7),
    ("${QPS-x}", {"QPS-x": "1"}, "invalid variable reference ${QPS-x}: expected ${NAME} or ${NAME:-default}"),
    ("'${QPS}'", {"QPS": "10"}, "must be integer or null"),  # quoted: a string, as written
])
def test_unquoted_variable_takes_the_yaml_type(workdir, written: str, env: dict[str, str], expected: int | str) -> None:
    workdir({"m.yaml": DOMAINS + SERVICE.replace("    endpoints:", f"    qpsLimitOverall: {written}\n    endpoints:")})
    result = validate(["m.yaml"], env=env)
    if isinstance(expected, int):
        assert result.manifest is not None
        assert result.manifest.doc["services"][0]["qpsLimitOverall"] == expected
    else:
        assert expected in [p.message for p in result.problems]


def test_escaped_reference_is_literal(workdir) -> None:
    workdir({"m.yaml": DOMAINS + SERVICE + "        outboundRequestTargetQueryParameters: a=$${b}&c=${C}\n"})
    manifest = load_manifests(["m.yaml"], env={"C": "3"})
    assert manifest.doc["services"][0]["endpoints"][0]["outboundRequestTargetQueryParameters"] == "a=${b}&c=3"


def test_anchors_aliases_and_merge_keys(workdir) -> None:
    workdir({"m.yaml": DOMAINS + """\
x-cors: &cors {allDomainsEnabled: false, maxAge: 60}
services:
  - name: Weather
    endpoints:
      - &base
        name: Forecast
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        cors: *cors
      - <<: *base
        name: Alerts
        requestPathAlias: /v2/alerts
"""})
    result = validate(["m.yaml"], env={})
    # the anchor holder is not a manifest key; everything else is fine
    assert [str(p) for p in result.problems] == [
        "m.yaml:2:1: x-cors: unknown field 'x-cors'"]


def test_aliases_are_copies(workdir) -> None:
    workdir({"m.yaml": DOMAINS + """\
services:
  - name: Weather
    endpoints:
      - {name: A, requestPathAlias: /a, trafficManagerDomain: t.example.com, cors: &c {maxAge: 1}}
      - {name: B, requestPathAlias: /b, trafficManagerDomain: t.example.com, cors: *c}
"""})
    manifest = load_manifests(["m.yaml"], env={})
    a, b = manifest.doc["services"][0]["endpoints"]
    assert a["cors"] == b["cors"] == {"maxAge": 1}
    assert a["cors"] is not b["cors"]
    assert manifest.where(("services", 0, "endpoints", 1, "cors", "maxAge")) == Position("m.yaml", 5, 88)  # where the anchor wrote it


def test_directory_is_read_sorted_and_not_recursively(workdir) -> None:
    workdir({"m/b.yml": "roles: [B]\n", "m/a.yaml": "roles: [A]\n", "m/notes.txt": "x",
             "m/prod/o.yaml": "roles: [C]\n", "m/.hidden.yaml": "roles: [D]\n"})
    manifest = load_manifests(["m", "m/a.yaml"], env={})
    assert manifest.files == ["m/a.yaml", "m/b.yml"]
    assert manifest.doc["roles"] == [{"name": "A"}, {"name": "B"}]


def test_byte_order_mark_is_accepted(workdir) -> None:
    workdir({"m.yaml": b"\xef\xbb\xbfroles: [A]\n"})
    assert load_manifests(["m.yaml"], env={}).doc["roles"] == [{"name": "A"}]


def test_fifty_megabyte_file_is_refused_quickly(workdir) -> None:
    root = workdir({})
    with open(root / "big.yaml", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    problems = validate_paths(["big.yaml"], env={})
    assert [str(p) for p in problems] == [
        "big.yaml: file is 50.0 MB, larger than the 20 MB limit for one manifest file; split it"]


def test_large_flat_file_is_fine(workdir) -> None:
    roles = "".join(f"  - role-{i}\n" for i in range(20000))
    workdir({"m.yaml": "roles:\n" + roles})
    assert len(load_manifests(["m.yaml"], env={}).doc["roles"]) == 20000


def test_problems_are_sorted_by_file_and_line(workdir) -> None:
    workdir({"b.yaml": "roles: [{name: B, x: 1}]\n", "a.yaml": "roles: [{name: A, y: 1}, {name: C, z: 1}]\n"})
    problems = validate_paths(["b.yaml", "a.yaml"], env={})
    assert [(p.file, p.line, p.col) for p in problems] == [("a.yaml", 1, 19), ("a.yaml", 1, 36), ("b.yaml", 1, 19)]


# --- overlays ------------------------------------------------------------------------------------

OVERLAY = """\
services:
  - name: Weather
    qpsLimitOverall: 50
    endpoints:
      - name: Forecast
        publicDomains: [prod-api.example.com]
        cors: {maxAge: 5}
settings:
  prune: {services: true}
"""


def test_overlay_merges_by_identity(workdir) -> None:
    workdir({"base/m.yaml": DOMAINS + SERVICE + "        cors: {allDomainsEnabled: false, maxAge: 60}\n"
             + "settings: {prune: false, ignore: [{target: 'service:Weather:description', reason: r}]}\n",
             "base/prod/o.yaml": OVERLAY})
    manifest = load_manifests(["base"], overlays=["base/prod"], env={})
    service = manifest.doc["services"][0]
    endpoint = service["endpoints"][0]
    assert service["qpsLimitOverall"] == 50
    assert endpoint["publicDomains"] == ["prod-api.example.com"]  # lists of values are replaced
    assert endpoint["cors"] == {"allDomainsEnabled": False, "maxAge": 5}  # mappings are merged
    assert endpoint["requestPathAlias"] == "/v2/forecast"
    assert manifest.doc["settings"]["prune"] == {"services": True}
    assert manifest.doc["settings"]["ignore"] == [{"target": "service:Weather:description", "reason": "r"}]
    assert manifest.where(("services", 0, "endpoints", 0, "cors", "maxAge")) == Position("base/prod/o.yaml", 7, 16)
    assert manifest.where(("services", 0, "endpoints", 0, "publicDomains", 0)) == Position("base/prod/o.yaml", 6, 25)
    assert manifest.where(("services", 0, "endpoints", 0, "cors", "allDomainsEnabled")) == Position("base/m.yaml", 10, 16)
    assert manifest.files == ["base/m.yaml", "base/prod/o.yaml"]


def test_overlay_values_are_validated(workdir) -> None:
    workdir({"m.yaml": DOMAINS + SERVICE, "prod/o.yaml": "domains: [example.com]\n"
             "services:\n  - name: Weather\n    endpoints:\n      - {name: Forecast, systemDomains: [db.internal]}\n"})
    assert [str(p) for p in validate_paths(["m.yaml"], overlays=["prod"], env={})] == [
        "prod/o.yaml:5:42: services[0].endpoints[0].systemDomains[0]: db.internal is not under any declared "
        "domain (declared: example.com, example.net)"]


def test_unquoted_variable_in_a_string_field_stays_a_string(workdir) -> None:
    workdir({"m.yaml": DOMAINS + "roles:\n  - ${ROLE}\n" + SERVICE.replace(
        "    endpoints:", "    version: ${VERSION}\n    qpsLimitOverall: ${QPS}\n    roles:\n      - ${ROLE}\n    endpoints:")
        + "        systemDomainCredentialSecret: ${SECRET}\n        errorSet: ${SET}\n"
        + "        processor: {preInputs: {retries: '3'}}\n        cors:\n          maxAge: ${AGE}\n"
        + "          domainsAllowed:\n            - ${ORIGIN}\n"})
    env = {"VERSION": "2", "QPS": "10", "ROLE": "42", "SECRET": "12345678", "SET": "null", "AGE": "true",
           "ORIGIN": "1.5"}
    result = validate(["m.yaml"], env=env)
    assert [str(p) for p in result.problems] == [
        "m.yaml:20:11: services[0].endpoints[0].cors.maxAge: must be integer"]
    env["AGE"] = "60"
    manifest = load_manifests(["m.yaml"], env=env)
    service = manifest.doc["services"][0]
    endpoint = service["endpoints"][0]
    assert manifest.doc["roles"] == [{"name": "42"}]
    assert (service["version"], service["qpsLimitOverall"], service["roles"]) == ("2", 10, ["42"])
    assert endpoint["systemDomainCredentialSecret"] == "12345678"
    assert endpoint["cors"] == {"maxAge": 60, "domainsAllowed": ["1.5"]}
    assert manifest.secret_refs == {("services", 0, "endpoints", 0, "systemDomainCredentialSecret"): "${SECRET}"}


def test_file_with_too_many_entries_is_refused(workdir, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_events, "MAX_ENTRIES", 1000)
    workdir({"m.yaml": "roles: [" + ", ".join(["r"] * 400) + "]\nservices:\n  - name: S\n    roles: ["
             + ", ".join(["r"] * 700) + "]\n"})
    assert [str(p) for p in validate_paths(["m.yaml"], env={})] == [
        "m.yaml:4:1804: services[0].roles[597]: more than 1,000 list items and mapping keys in one file; "
        "split it into several files"]


def test_a_name_repeated_many_times_lists_a_few_other_places(workdir) -> None:
    workdir({"m.yaml": "roles: [" + ", ".join(["r"] * 2000) + "]\n"})
    problems = validate_paths(["m.yaml"], env={})
    assert len(problems) == 2000
    assert str(problems[0]) == ("m.yaml:1:9: roles[0]: duplicate role 'r': also at m.yaml:1:12, m.yaml:1:15, "
                                "m.yaml:1:18, m.yaml:1:21, m.yaml:1:24, and 1994 more")


def test_variables_in_merge_keys_keep_their_place(workdir) -> None:
    workdir({"m.yaml": DOMAINS + SERVICE.replace("    endpoints:", "    version: x\n    <<:\n      version: ${V}\n"
                                                 "      description: ${V}\n    endpoints:")
             + "        <<:\n          name: ${V}\n          connectionTimeoutForSystemDomainRequest: ${T}\n"})
    manifest = load_manifests(["m.yaml"], env={"V": "42", "T": "5"})
    service = manifest.doc["services"][0]
    assert (service["name"], service["version"], service["description"]) == ("Weather", "x", "42")
    assert service["endpoints"][0]["name"] == "Forecast"
    assert service["endpoints"][0]["connectionTimeoutForSystemDomainRequest"] == 5


def test_keys_and_short_values_are_kept_once(workdir) -> None:
    """A large manifest repeats its keys and most values (hosts, methods): each is one text."""
    workdir({"m.yaml": FULL})
    doc = load_manifests(["m.yaml"], env={"SECRET": "s3cret"}).doc
    first, second = doc["services"][0]["endpoints"]
    shared = [k for k in first if k in second]
    assert shared == ["name", "requestPathAlias", "trafficManagerDomain"]
    assert all(next(k for k in second if k == key) is key for key in shared)
    assert first["trafficManagerDomain"] is second["trafficManagerDomain"]
