"""References between kinds, derived from each kind's ``references``: what a document refers
to, renames, write bodies, host coverage, and the manifest check of undeclared names."""

from __future__ import annotations

from apimctl.kinds import Kind, Reference
from apimctl.kinds import references as refs
from apimctl.kinds.dialects import MASHERY, SPEC, Dialect
from apimctl.kinds.ops import Ops, resolved_body
from apimctl.kinds.references import checks as reference_checks

PLAN = {"name": "Gold", "services": [{"name": "Weather", "endpoints": [{"name": "Forecast"}]}]}


def test_addresses_of_what_a_document_refers_to() -> None:
    assert refs.addresses("plan", PLAN, "Pkg") == {"service:Weather", "endpoint:Weather/Forecast"}
    assert refs.addresses("service", {"name": "W", "roles": ["Partners"]}, None) == {"role:Partners"}
    assert refs.addresses("endpoint", {"name": "F", "errorSet": "Errs", "publicDomains": ["api.example.com"]},
                          "Weather") == {"errorSet:Weather/Errs"}  # hosts are not addresses
    assert refs.addresses("service", {"name": "W"}, None) == set()


def test_addresses_escape_slashes_in_names() -> None:
    assert refs.addresses("endpoint", {"name": "F", "errorSet": "a/b"}, "W\\/X") == {"errorSet:W\\/X/a\\/b"}


def test_hosts_are_lower_cased_and_read_from_bodies_too() -> None:
    doc = {"name": "F", "publicDomains": ["API.example.com"], "systemDomains": [{"address": "b.example.net"}]}
    assert refs.hosts("endpoint", doc) == ["api.example.com", "b.example.net"]


def test_parent_domains_and_coverage() -> None:
    assert refs.parent_domains("api.eu.example.com") == ["api.eu.example.com", "eu.example.com", "example.com", "com"]
    assert refs.covered("api.example.com", ["example.com"])
    assert refs.covered("example.com", ["example.com"])
    assert refs.covered("API.Example.com", ["example.com"])
    assert not refs.covered("badexample.com", ["example.com"])
    assert not refs.covered("example.org", ["example.com"])
    assert not refs.covered("example.com", [])


def test_rename_rewrites_references_and_leaves_the_input_alone() -> None:
    renamed = refs.rename("plan", PLAN, "Pkg", {"service:Weather": "Climate"})
    assert renamed == {"name": "Gold", "services": [{"name": "Climate", "endpoints": [{"name": "Forecast"}]}]}
    assert PLAN["services"][0]["name"] == "Weather"
    moved = refs.rename("plan", PLAN, "Pkg", {"endpoint:Weather/Forecast": "Weather/Outlook"})
    assert moved["services"] == [{"name": "Weather", "endpoints": [{"name": "Outlook"}]}]
    roles = refs.rename("service", {"name": "W", "roles": ["Partners", "Other"]}, None, {"role:Partners": "Friends"})
    assert roles == {"name": "W", "roles": ["Friends", "Other"]}
    assert refs.rename("service", {"name": "W", "roles": ["A"]}, None, {}) == {"name": "W", "roles": ["A"]}


def test_resolve_gives_write_bodies() -> None:
    body = refs.resolve("service", {"name": "W", "roles": ["Partners", "Other"]}, None,
                        lambda ref: "r1" if ref.name == "Partners" else None)
    assert body == {"name": "W", "roles": [{"id": "r1", "name": "Partners"}, {"name": "Other"}]}
    hosts = refs.resolve("endpoint", {"name": "F", "publicDomains": ["api.example.com"]}, "W", lambda ref: None)
    assert hosts == {"name": "F", "publicDomains": [{"address": "api.example.com"}]}


def test_check_names_undeclared_references() -> None:
    findings = reference_checks.check({"roles": ["A"], "services": [{"name": "W", "roles": ["A", "B"]}]})
    assert [(f.path, f.severity) for f in findings] == [(("services", 0, "roles", 1), "error")]
    assert "unknown role 'B'" in findings[0].message
    assert reference_checks.check({"roles": ["A", "B"], "services": [{"name": "W", "roles": ["A", "B"]}]}) == []


def _endpoint(name: str, error_set: str, host: str) -> dict[str, object]:
    return {"name": name, "errorSet": error_set, "publicDomains": [host], "systemDomains": ["b.example.net"]}


def test_check_resolves_each_reference_in_its_own_scope() -> None:
    doc = {"domains": ["example.com"],
           "services": [{"name": "A", "errorSets": [{"name": "E1"}, {"name": "E2"}],
                         "endpoints": [_endpoint(f"a{i}", "E2", "api.example.com") for i in range(3)]},
                        {"name": "B", "errorSets": [{"name": "F"}],
                         "endpoints": [_endpoint("b0", "E1", "x.example.org"), _endpoint("b1", "F", "api.example.com")]}]}
    findings = reference_checks.check(doc)
    assert reference_checks.check(doc, list(reference_checks.objects(doc))) == findings
    messages = {(f.path, f.message, f.severity) for f in findings}
    assert messages == {
        (("services", 1, "endpoints", 0, "errorSet"), "unknown error set 'E1' (this service declares: F)", "error"),
        (("services", 1, "endpoints", 0, "publicDomains", 0),
         "x.example.org is not under any declared domain (declared: example.com)", "error"),
        (("services", 0, "endpoints", 0, "systemDomains", 0),
         "b.example.net is not under any declared domain (declared: example.com)", "error"),
        (("services", 0, "endpoints", 1, "systemDomains", 0),
         "b.example.net is not under any declared domain (declared: example.com)", "error"),
        (("services", 0, "endpoints", 2, "systemDomains", 0),
         "b.example.net is not under any declared domain (declared: example.com)", "error"),
        (("services", 1, "endpoints", 0, "systemDomains", 0),
         "b.example.net is not under any declared domain (declared: example.com)", "error"),
        (("services", 1, "endpoints", 1, "systemDomains", 0),
         "b.example.net is not under any declared domain (declared: example.com)", "error"),
    }


def test_hosts_without_managed_domains_warn_once_per_host() -> None:
    doc = {"services": [{"name": "A", "endpoints": [_endpoint(f"a{i}", "", "API.example.com") for i in range(4)]}]}
    warnings = [(f.path, f.severity) for f in reference_checks.check(doc) if "publicDomains" in f.path]
    assert warnings == [(("services", 0, "endpoints", 0, "publicDomains", 0), "warning")]


def _carrier() -> Kind:
    """A kind naming a ``widget`` set by name, written as the bare id in ``widgetId``."""
    return Kind(name="gadget", manifest_key="gadgets", path="/gadgets", body="gadget",
                references=(Reference("widget", "widget", id_field="widgetId"),),
                defaults={"widgetId": None}, operations=Ops)


class _Ids:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect

    def id(self, label: str, key: str) -> str:
        return {"widget:Blue": "7"}[f"{label}:{key}"]

    def find(self, label: str, key: str) -> str | None:
        return None


def test_a_reference_with_an_id_field_writes_the_bare_id_in_its_place() -> None:
    kind = _carrier()
    doc = {"name": "g", "widget": "Blue", "other": 1}
    assert refs.resolve(kind, doc, None, lambda ref: "7") == {"name": "g", "other": 1, "widgetId": "7"}
    assert doc == {"name": "g", "widget": "Blue", "other": 1}  # the input is left alone
    assert refs.resolve(kind, {"name": "g", "widget": None}, None, lambda ref: "7") == {"name": "g", "widgetId": None}
    assert refs.resolve(kind, {"name": "g", "widgetId": 3}, None, lambda ref: "7") == {"name": "g", "widgetId": 3}
    assert refs.addresses(kind, doc, None) == {"widget:Blue"}


def test_a_dialect_types_a_bare_id_as_an_integer() -> None:
    kind = _carrier()
    integer = Dialect("x", integer_ids=frozenset({("gadget", "widgetId")}))
    assert resolved_body(kind, {"widget": "Blue"}, _Ids(integer), None) == {"widgetId": 7}
    assert resolved_body(kind, {"widget": "Blue"}, _Ids(Dialect("y")), None) == {"widgetId": "7"}
    assert ("plan", "emailTemplateSetId") in SPEC.integer_ids and not MASHERY.integer_ids
