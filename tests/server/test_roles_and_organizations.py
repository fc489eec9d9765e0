"""Roles (Portal Access Groups), organizations and email templates (spec "Role"; SUPPLEMENT §2)."""

from __future__ import annotations

import re

from spec_helpers import (
    MS_TIME_RE,
    UUID_RE,
    Api,
    assert_deleted,
    assert_duplicate,
    assert_error,
    assert_invalid,
)


def test_role_crud(api: Api) -> None:
    created = api.create("/roles", {"name": "Partners"})
    rid = created["id"]
    assert re.match(UUID_RE, rid), rid
    assert re.match(MS_TIME_RE, created["created"]), created["created"]
    assert created["name"] == "Partners"
    assert "organization" not in created  # Exp
    assert "group" not in created  # Exp
    assert api.fetch(f"/roles/{rid}")["name"] == "Partners"
    assert api.update(f"/roles/{rid}", {"name": "Friends"})["name"] == "Friends"
    assert [r["name"] for r in api.list("/roles", {"filter": "name:Friends"})] == ["Friends"]
    assert_deleted(api.delete(f"/roles/{rid}"))
    assert_error(api.get(f"/roles/{rid}"), 404)
    assert_error(api.delete(f"/roles/{rid}"), 404)


def test_role_name_required_and_unique(api: Api) -> None:
    assert_invalid(api.post("/roles", {}), "name")
    assert_invalid(api.post("/roles", {"name": 5}), "name")
    api.create("/roles", {"name": "Partners"})
    assert_duplicate(api.post("/roles", {"name": "Partners"}))
    other = api.create("/roles", {"name": "Other"})["id"]
    assert_duplicate(api.put(f"/roles/{other}", {"name": "Partners"}))


def test_role_organization_is_exp(api: Api) -> None:
    api.create("/roles", {"name": "No Org"})
    listed = api.list("/roles", {"fields": "id,name,created,updated,organization"})
    (role,) = listed
    assert "organization" in role
    assert role["organization"] is None
    assert set(role) == {"id", "name", "created", "updated", "organization"}


def test_organizations_list_and_fetch(api: Api) -> None:
    resp = api.get("/organizations")
    orgs = resp.json()
    assert resp.status_code == 200 and isinstance(orgs, list), resp.text
    assert resp.headers["X-Total-Count"] == str(len(orgs))
    for org in orgs:
        for key in ("id", "name", "description", "parent", "isActive", "created", "updated"):
            assert key in org, key
        assert "suborganizations" not in org  # Exp
        assert re.match(UUID_RE, org["id"]), org["id"]
        assert api.fetch(f"/organizations/{org['id']}")["id"] == org["id"]
        asked = api.fetch(f"/organizations/{org['id']}", {"fields": "id,suborganizations"})
        assert isinstance(asked["suborganizations"], list)
    assert_error(api.get("/organizations/00000000-0000-0000-0000-000000000000"), 404)


def test_role_within_an_organization(api: Api) -> None:
    orgs = api.list("/organizations")
    body: dict[str, object] = {"name": "Org Role"}
    if orgs:
        body["organization"] = {
            "id": orgs[0]["id"],
            "name": "",
            "description": "",
            "parent": None,
            "suborganizations": [],
        }
    created = api.create("/roles", body)
    for key in ("id", "created", "updated", "name", "description"):
        assert key in created, key
    for key in ("isPredefined", "isOrgrole", "isAssignable"):
        assert isinstance(created[key], bool), key
    got = api.fetch(f"/roles/{created['id']}", {"fields": "id,organization"})
    if orgs:
        assert got["organization"]["id"] == orgs[0]["id"]
        assert created["isOrgrole"] is True
    else:
        assert got["organization"] is None


def test_role_with_unknown_organization_is_400(api: Api) -> None:
    resp = api.post(
        "/roles", {"name": "Lost", "organization": {"id": "00000000-0000-0000-0000-000000000000"}}
    )
    assert_invalid(resp, "organization")


def test_roles_offset_is_a_page_index(api: Api) -> None:
    names = [f"role-{i:02d}" for i in range(7)]
    for name in names:
        api.create("/roles", {"name": name})
    page = api.list("/roles", {"sort": "name", "limit": "3", "offset": "1"})
    assert [r["name"] for r in page] == names[3:6]
    last = api.list("/roles", {"sort": "name", "limit": "3", "offset": "2"})
    assert [r["name"] for r in last] == names[6:]


# email templates ---------------------------------------------------------------------------


def test_email_template_sets(api: Api) -> None:
    resp = api.get("/emailTemplateSets")
    assert resp.status_code == 200, resp.text
    sets = resp.json()
    assert isinstance(sets, list)
    assert resp.headers["X-Total-Count"] == str(len(sets))
    for template_set in sets:
        set_id = template_set["id"]
        assert api.fetch(f"/emailTemplateSets/{set_id}")["id"] == set_id
        templates = api.list(f"/emailTemplateSets/{set_id}/emailTemplates")
        for template in templates:
            got = api.fetch(
                f"/emailTemplateSets/{set_id}/emailTemplates/{template['id']}", {"indent": "true"}
            )
            for key in ("id", "created", "updated", "from", "subject", "body", "type"):
                assert key in got, key
        assert_error(
            api.get(f"/emailTemplateSets/{set_id}/emailTemplates/does-not-exist"), 404
        )
    assert_error(api.get("/emailTemplateSets/does-not-exist"), 404)
