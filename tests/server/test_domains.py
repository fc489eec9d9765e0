"""Domains: waiting -> active, the endpoint domain gate, hostnames (spec "Domain", SUPPLEMENT §2, §4)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from spec_helpers import (
    AREA_A,
    MS_TIME_RE,
    TOKEN_A,
    UUID_RE,
    Api,
    add_domain,
    approve,
    assert_duplicate,
    assert_error,
    assert_invalid,
    describe,
    endpoint_body,
    make_endpoint,
    make_service,
    serve,
    with_domains,
)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with serve(tmp_path, auto_approve_domains=False) as client:
        yield client


def activate(api: Api, http: httpx.Client, domain: str) -> str:
    dom = add_domain(api, domain)
    resp = approve(http, AREA_A, dom["id"])
    assert resp.status_code == 200, describe(resp)
    did: str = dom["id"]
    return did


def test_new_domain_is_waiting(api: Api) -> None:
    dom = api.create("/domains", {"domain": "example.com", "status": "active"})
    assert dom["domain"] == "example.com"
    assert dom["status"] == "waiting"  # Ign on create: a sent status is ignored
    assert re.match(UUID_RE, dom["id"]), dom["id"]
    assert re.match(MS_TIME_RE, dom["created"]), dom["created"]
    assert api.fetch(f"/domains/{dom['id']}")["status"] == "waiting"
    assert [d["domain"] for d in api.list("/domains")] == ["example.com"]


def test_domain_is_required(api: Api) -> None:
    assert_invalid(api.post("/domains", {}), "domain")
    assert_invalid(api.post("/domains", {"domain": 7}), "domain")


def test_duplicate_domain(api: Api) -> None:
    add_domain(api, "example.com")
    assert_duplicate(api.post("/domains", {"domain": "example.com"}))


def test_operator_approval_activates(api: Api, http: httpx.Client) -> None:
    did = activate(api, http, "example.com")
    assert api.fetch(f"/domains/{did}")["status"] == "active"


def test_approving_unknown_domain_is_404(http: httpx.Client) -> None:
    resp = approve(http, AREA_A, "00000000-0000-0000-0000-000000000000")
    assert resp.status_code == 404, describe(resp)


def test_status_cannot_be_set_by_the_client(api: Api) -> None:
    did = add_domain(api, "example.com")["id"]
    api.update(f"/domains/{did}", {"domain": "example.com", "status": "active"})
    assert api.fetch(f"/domains/{did}")["status"] == "waiting"


def test_endpoint_gate_waiting_then_active(api: Api, http: httpx.Client) -> None:
    sid = make_service(api)["id"]
    pub = add_domain(api, "example.com")["id"]
    sys_ = add_domain(api, "example.net")["id"]
    assert_invalid(api.post(f"/services/{sid}/endpoints", endpoint_body()), "Domains")
    assert approve(http, AREA_A, pub).status_code == 200
    # the system domain is still waiting
    assert_invalid(api.post(f"/services/{sid}/endpoints", endpoint_body()), "systemDomains")
    assert approve(http, AREA_A, sys_).status_code == 200
    make_endpoint(api, sid)


def test_endpoint_gate_without_any_domain(api: Api) -> None:
    sid = make_service(api)["id"]
    assert_invalid(api.post(f"/services/{sid}/endpoints", endpoint_body()), "publicDomains")


def test_gate_is_a_suffix_match_on_labels(api: Api, http: httpx.Client) -> None:
    activate(api, http, "example.com")
    activate(api, http, "example.net")
    sid = make_service(api)["id"]
    make_endpoint(api, sid, host="deep.api.example.com")
    make_endpoint(api, sid, name="Apex", path="/apex", host="example.com")
    resp = api.post(
        f"/services/{sid}/endpoints", endpoint_body("Bad", "/bad", host="badexample.com")
    )
    assert_invalid(resp, "publicDomains")


def test_gate_on_update(api: Api, http: httpx.Client) -> None:
    activate(api, http, "example.com")
    activate(api, http, "example.net")
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    resp = api.put(
        f"/services/{sid}/endpoints/{eid}", {"publicDomains": [{"address": "api.other.org"}]}
    )
    assert_invalid(resp, "publicDomains")


def test_gate_on_nested_service_create(api: Api) -> None:
    resp = api.post("/services", {"name": "Nested", "endpoints": [endpoint_body()]})
    assert_invalid(resp, "Domains")
    assert api.list("/services") == []


def test_put_changes_domain_and_sends_it_back_to_waiting(api: Api, http: httpx.Client) -> None:
    did = activate(api, http, "example.com")
    updated = api.update(f"/domains/{did}", {"domain": "example.org"})
    assert updated["domain"] == "example.org"
    got = api.fetch(f"/domains/{did}")
    assert got["domain"] == "example.org"
    assert got["status"] == "waiting"


def test_domain_update_requires_domain(api: Api) -> None:
    did = add_domain(api, "example.com")["id"]
    assert_invalid(api.put(f"/domains/{did}", {}), "domain")


def test_domains_cannot_be_deleted(api: Api) -> None:
    did = add_domain(api, "example.com")["id"]
    resp = api.delete(f"/domains/{did}")
    assert resp.status_code in (404, 405), describe(resp)
    assert "Traceback" not in resp.text
    assert api.fetch(f"/domains/{did}")["domain"] == "example.com"


def test_unknown_domain_is_404(api: Api) -> None:
    assert_error(api.get("/domains/00000000-0000-0000-0000-000000000000"), 404)


def test_auto_approve_switch(tmp_path: Path) -> None:
    with serve(tmp_path, auto_approve_domains=True) as http:
        api = Api(http, TOKEN_A)
        dom = add_domain(api, "example.com")
        assert dom["status"] == "active"
        did = dom["id"]
        assert api.fetch(f"/domains/{did}")["status"] == "active"


def test_hostnames(tmp_path: Path) -> None:
    with serve(tmp_path, auto_approve_domains=True) as http:
        api = Api(http, TOKEN_A)
        assert api.list("/domains/public/hostnames") == []
        with_domains(api)
        sid = make_service(api)["id"]
        make_endpoint(api, sid, host="api.example.com", backend="backend.example.net")
        make_endpoint(
            api, sid, name="Two", path="/two", host="www.example.com", backend="db.example.net"
        )
        public = api.list("/domains/public/hostnames")
        system = api.list("/domains/system/hostnames")
        assert sorted(h["address"] for h in public) == ["api.example.com", "www.example.com"]
        assert sorted(h["address"] for h in system) == ["backend.example.net", "db.example.net"]


def test_domain_sent_back_to_waiting_closes_the_gate(api: Api, http: httpx.Client) -> None:
    com = activate(api, http, "example.com")
    activate(api, http, "example.net")
    sid = make_service(api)["id"]
    make_endpoint(api, sid)
    api.update(f"/domains/{com}", {"domain": "example.org"})
    resp = api.post(f"/services/{sid}/endpoints", endpoint_body("Two", "/two"))
    assert_invalid(resp, "publicDomains")
    resp = api.post(
        f"/services/{sid}/endpoints", endpoint_body("Three", "/three", host="api.example.org")
    )
    assert_invalid(resp, "publicDomains")


def test_hostnames_are_listed_once(api: Api, http: httpx.Client) -> None:
    activate(api, http, "example.com")
    activate(api, http, "example.net")
    sid = make_service(api)["id"]
    make_endpoint(api, sid)
    make_endpoint(api, sid, name="Two", path="/two")
    assert [h["address"] for h in api.list("/domains/public/hostnames")] == ["api.example.com"]
    assert [h["address"] for h in api.list("/domains/system/hostnames")] == ["backend.example.net"]


def test_gate_on_bulk_and_nested_updates(api: Api, http: httpx.Client) -> None:
    activate(api, http, "example.com")
    activate(api, http, "example.net")
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    outside = [{"address": "api.unknown.org"}]
    resp = api.put(f"/services/{sid}/endpoints", [{"id": eid, "publicDomains": outside}])
    assert_invalid(resp, "publicDomains")
    resp = api.put(f"/services/{sid}", {"endpoints": [{"id": eid, "systemDomains": outside}]})
    assert_invalid(resp, "systemDomains")
    got = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "publicDomains,systemDomains"})
    assert [d["address"] for d in got["publicDomains"]] == ["api.example.com"]
    assert [d["address"] for d in got["systemDomains"]] == ["backend.example.net"]


def test_unicode_names_filter_and_sort(api: Api) -> None:
    for name in ("Wetter Zürich", "Météo Genève", "Tempo Lugano"):
        make_service(api, name)
    got = api.list("/services", {"filter": "name:Zür"})
    assert [s["name"] for s in got] == ["Wetter Zürich"]
    names = [s["name"] for s in api.list("/services", {"sort": "name"})]
    assert names == sorted(names)
