"""Fields named at any depth, and the switch that makes nested wildcards unknown names
(SUPPLEMENT §1, §10.10.8).

Four servers for the whole module, each with the same tree: both dialects, each with nested
wildcards honoured (the default) and ignored (``nested_wildcards=False``, ``apimctl serve
--no-nested-wildcards``). Naming fields explicitly must return exactly those fields, at
every depth, on all four.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from spec_helpers import TOKEN_A, Api, describe, endpoint_body, one, serve, with_domains

from apimctl.server.query import parse_fields

SETUPS = [("spec", True), ("spec", False), ("mashery", True), ("mashery", False)]
SAMPLE = '{"temperature": 21}'


@dataclass
class Tree:
    """The server of one setup and the ids of what it holds."""

    api: Api
    dialect: str
    wildcards: bool
    sid: str = ""
    pid: str = ""
    role_id: str = ""

    def get(self, path: str, fields: str) -> Any:
        resp = self.api.get(path, {"fields": fields})
        assert resp.status_code == 200, describe(resp)
        body = resp.json()
        return body if path.rsplit("/", 1)[-1] in ("services", "endpoints", "roles", "packages") else one(resp)

    @property
    def unset_sample(self) -> str | None:
        return None if self.dialect == "mashery" else ""


def _build(api: Api, dialect: str, wildcards: bool) -> Tree:
    tree = Tree(api, dialect, wildcards)
    with_domains(api)
    tree.role_id = one(api.post("/roles", {"name": "Readers", "description": "may read"}))["id"]
    tree.sid = sid = one(api.post("/services", {"name": "Weather"}))["id"]
    ep_a = one(api.post(f"/services/{sid}/endpoints", endpoint_body("A", "/a", cors={"maxAge": 60})))
    one(api.post(f"/services/{sid}/endpoints", endpoint_body("B", "/b")))
    methods = f"/services/{sid}/endpoints/{ep_a['id']}/methods"
    m1 = one(api.post(methods, {"name": "m1", "sampleJsonResponse": SAMPLE}))
    m2 = one(api.post(methods, {"name": "m2"}))
    one(api.post(f"{methods}/{m1['id']}/responseFilters", {"name": "f", "jsonFilterFields": "temperature"}))
    one(api.post("/scheduledMaintenanceEvents", {"name": "Window", "startDateTime": "2030-01-01T00:00:00Z",
                                                 "endDateTime": "2030-01-02T00:00:00Z",
                                                 "endpoints": [{"id": ep_a["id"]}]}))
    package = one(api.post("/packages", {"name": "Basic", "plans": [{"name": "Gold"}]}, {"fields": "id,plans"}))
    tree.pid = package["id"]
    entitlement = {"id": sid, "endpoints": [{"id": ep_a["id"], "methods": [{"id": m1["id"]}, {"id": m2["id"]}]}]}
    one(api.post(f"/packages/{tree.pid}/plans/{package['plans'][0]['id']}/services", entitlement))
    return tree


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, bool], Tree]]:
    with ExitStack() as stack:
        out = {}
        for dialect, wildcards in SETUPS:
            where = tmp_path_factory.mktemp(f"{dialect}-{wildcards}")
            http = stack.enter_context(serve(where, dialect=dialect, nested_wildcards=wildcards))
            out[(dialect, wildcards)] = _build(Api(http, TOKEN_A), dialect, wildcards)
        yield out


@pytest.fixture(params=SETUPS, ids=[f"{d}-{'wildcards' if w else 'named'}" for d, w in SETUPS])
def tree(request: pytest.FixtureRequest, trees: dict[tuple[str, bool], Tree]) -> Tree:
    return trees[request.param]


@pytest.fixture(params=["spec", "mashery"])
def named_only(request: pytest.FixtureRequest, trees: dict[tuple[str, bool], Tree]) -> Tree:
    return trees[(request.param, False)]


@pytest.fixture(params=["spec", "mashery"])
def with_wildcards(request: pytest.FixtureRequest, trees: dict[tuple[str, bool], Tree]) -> Tree:
    return trees[(request.param, True)]


# naming at any depth ------------------------------------------------------------------------


def test_nested_fields_named_explicitly(tree: Tree) -> None:
    fields = ("endpoints.methods.sampleJsonResponse,endpoints.methods.name,endpoints.cors.maxAge,"
              "errorSets.errorMessages.detailHeader")
    got = tree.get(f"/services/{tree.sid}", fields)
    assert set(got) == {"endpoints", "errorSets"}
    a, b = got["endpoints"]
    assert a == {"methods": [{"name": "m1", "sampleJsonResponse": SAMPLE},
                             {"name": "m2", "sampleJsonResponse": tree.unset_sample}],
                 "cors": {"maxAge": 60}}
    assert b == {"methods": [], "cors": None if tree.dialect == "mashery" else {"maxAge": 0}}
    (error_set,) = got["errorSets"]
    assert set(error_set) == {"errorMessages"} and len(error_set["errorMessages"]) == 23
    assert all(set(x) == {"detailHeader"} for x in error_set["errorMessages"])


def test_exp_fields_deep_inside(tree: Tree) -> None:
    fields = "name,methods.name,methods.responseFilters.jsonFilterFields,scheduledMaintenanceEvent.name"
    a, b = tree.get(f"/services/{tree.sid}/endpoints", fields)
    assert a == {"name": "A", "methods": [{"name": "m1", "responseFilters": [{"jsonFilterFields": "temperature"}]},
                                          {"name": "m2", "responseFilters": []}],
                 "scheduledMaintenanceEvent": {"name": "Window"}}
    assert b["scheduledMaintenanceEvent"] == ("" if tree.dialect == "mashery" else None)


def test_plan_entitlements_named_to_the_methods(tree: Tree) -> None:
    got = tree.get(f"/packages/{tree.pid}", "plans.services.endpoints.methods.name")
    assert got == {"plans": [{"services": [{"endpoints": [{"methods": [{"name": "m1"}, {"name": "m2"}]}]}]}]}
    named = tree.get(f"/packages/{tree.pid}", "plans.name,plans.services.name,plans.services.endpoints.name")
    assert named == {"plans": [{"name": "Gold", "services": [{"name": "Weather", "endpoints": [{"name": "A"}]}]}]}


def test_top_level_collections_return_what_is_named(tree: Tree) -> None:
    roles = tree.get("/roles", "id,name,description")
    readers = next(r for r in roles if r["id"] == tree.role_id)
    assert readers == {"id": tree.role_id, "name": "Readers", "description": "may read"}
    assert tree.get(f"/roles/{tree.role_id}", "description") == {"description": "may read"}
    services = tree.get("/services", "id,endpoints.name,roles.description")
    assert services == [{"id": tree.sid, "endpoints": [{"name": "A"}, {"name": "B"}],
                         "roles": None if tree.dialect == "mashery" else []}]


def test_writes_answer_the_named_fields(tree: Tree) -> None:
    resp = tree.api.put(f"/services/{tree.sid}", {"description": "d"},
                        {"fields": "description,endpoints.cors.maxAge,endpoints.methods.name"})
    got = one(resp)
    assert got["description"] == "d"
    assert got["endpoints"][0] == {"cors": {"maxAge": 60}, "methods": [{"name": "m1"}, {"name": "m2"}]}


# wildcards ------------------------------------------------------------------------------------

WILDCARDS = [  # (path under the tree, fields, where the nested objects are)
    ("/services/{sid}", "endpoints.*", ("endpoints",)),
    ("/services/{sid}", "errorSets.*", ("errorSets",)),
    ("/services/{sid}/endpoints", "methods.*", (0, "methods")),
    ("/packages/{pid}", "plans.*", ("plans",)),
]


def _at(body: Any, where: tuple[Any, ...]) -> Any:
    for step in where:
        body = body[step]
    return body


@pytest.mark.parametrize(("path", "fields", "where"), WILDCARDS)
def test_nested_wildcards_are_unknown_names_under_the_switch(named_only: Tree, path: str, fields: str,
                                                             where: tuple[Any, ...]) -> None:
    body = named_only.get(path.format(sid=named_only.sid, pid=named_only.pid), fields)
    nested = _at(body, where)
    assert nested and all(x == {} for x in nested), body


@pytest.mark.parametrize(("path", "fields", "where"), WILDCARDS)
def test_nested_wildcards_return_every_field_by_default(with_wildcards: Tree, path: str, fields: str,
                                                        where: tuple[Any, ...]) -> None:
    body = with_wildcards.get(path.format(sid=with_wildcards.sid, pid=with_wildcards.pid), fields)
    assert all(len(x) > 2 for x in _at(body, where)), body


def test_a_wildcard_beside_named_fields_adds_nothing(named_only: Tree) -> None:
    got = named_only.get(f"/services/{named_only.sid}", "id,endpoints.*,endpoints.name,endpoints.*.cors")
    assert got == {"id": named_only.sid, "endpoints": [{"name": "A"}, {"name": "B"}]}


def test_top_level_wildcard_keeps_its_meaning(tree: Tree) -> None:
    got = tree.get(f"/services/{tree.sid}", "*")
    assert {"name", "description", "revisionNumber", "endpoints", "errorSets", "securityProfile"} <= set(got)
    a = got["endpoints"][0]
    assert a["requestPathAlias"] == "/a" and a["cors"]["maxAge"] == 60
    assert a["methods"][0]["sampleJsonResponse"] == SAMPLE


def test_parse_fields_without_nested_wildcards() -> None:
    assert parse_fields(["*"], nested_wildcards=False) == {"*": None}
    assert parse_fields(["id,endpoints.*"], nested_wildcards=False) == {"id": None, "endpoints": {}}
    assert parse_fields(["endpoints.*,endpoints.name"], nested_wildcards=False) == {"endpoints": {"name": None}}
    assert parse_fields(["a.b.*.c"], nested_wildcards=False) == {"a": {"b": {}}}
    assert parse_fields(["endpoints.*"]) == {"endpoints": {"*": None}}


def test_serve_takes_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from apimctl.cli import serve

    started: list[Any] = []
    monkeypatch.setattr(serve, "_run", lambda listeners, *_: (started.append(listeners[0][0]), listeners[0][3].close()))
    base = ["--port", "0", "--db", str(tmp_path / "x.db"), "--token", "t=a"]
    for options, expected in (([], None), (["--no-nested-wildcards"], False), (["--nested-wildcards"], True)):
        result = CliRunner().invoke(serve.command, [*base, *options])
        assert result.exit_code == 0, result.output
        config = started[-1].state.server.config
        assert config.nested_wildcards is expected
        assert config.dialect_table.nested_wildcards is (expected is not False)
    for app in started:
        app.state.server.close()
