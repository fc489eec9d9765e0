"""Lists of top-level documents through the store's indexes (issue "Performance at 50,000
endpoints"): the default order is served by an index (no sort of the area), filters on the
extracted fields are SQL on the index, and the answers are exactly those of the general path
(:func:`apimctl.server.query.select` over every document). No timings here: the figures are
``benchmarks/server_bench.py``'s business.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from spec_helpers import (
    TOKEN_A,
    Api,
    endpoint_body,
    make_config,
    make_service,
    member_body,
    with_domains,
)
from starlette.datastructures import QueryParams

from apimctl.server import catalog, listing, reads
from apimctl.server.query import parse_list_query, select
from apimctl.server.store import EXTRACTED, PAGE_SQL, Store, extracted, fields_sql

AREA = "a"


def plan_of(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> str:
    return "\n".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(str(tmp_path / "docs.db"))
    yield s
    s.close()


# the query plans -------------------------------------------------------------------------------


def test_default_page_order_uses_the_index_not_a_sort(store: Store) -> None:
    with store.write() as txn:
        for i in range(50):
            txn.put(AREA, "service", f"s{i}", {"id": f"s{i}", "name": f"S{i}"})
            txn.put(AREA, "role", f"r{i}", {"id": f"r{i}", "name": f"R{i}"})
    plan = plan_of(store._conn(), PAGE_SQL, (AREA, "service", 10, 20))
    assert "docs_order" in plan
    assert "TEMP B-TREE" not in plan


def test_filters_read_the_covering_index_only(store: Store) -> None:
    where = "instr(CAST(x_name AS TEXT), ?) > 0"
    plan = plan_of(store._conn(), fields_sql(where), ("x", AREA, "service", "x"))
    assert "COVERING INDEX docs_fields" in plan
    assert "TEMP B-TREE" not in plan


# migration of a database of the previous version -------------------------------------------------


def test_a_database_of_the_previous_version_gets_columns_and_indexes(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE docs (area TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                           PRIMARY KEY (area, kind, id));
        CREATE TABLE uniq (area TEXT NOT NULL, scope TEXT NOT NULL, value TEXT NOT NULL, owner TEXT NOT NULL,
                           sticky INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (area, scope, value));
        CREATE INDEX uniq_owner ON uniq (area, scope, owner);
        CREATE TABLE tokens (token TEXT PRIMARY KEY, kind TEXT NOT NULL, area TEXT NOT NULL, user TEXT,
                             expires REAL NOT NULL);
        CREATE TABLE areas (area TEXT PRIMARY KEY);
    """)
    docs = [{"id": f"s{i}", "name": f"S{i}", "updated": "1"} for i in range(1200)] + [{"id": "odd", "name": 7}]
    conn.executemany("INSERT INTO docs (area, kind, id, body) VALUES (?, 'service', ?, ?)",
                     [(AREA, d["id"], msgspec.json.encode(d)) for d in docs])
    conn.commit()
    conn.close()
    store = Store(str(db))
    try:
        c = store._conn()
        assert {f"x_{f}" for f in EXTRACTED} <= {row[1] for row in c.execute("PRAGMA table_info(docs)")}
        indexes = {row[1] for row in c.execute("PRAGMA index_list(docs)")}
        assert {"docs_order", "docs_fields"} <= indexes
        got = c.execute("SELECT x_name, x_id FROM docs ORDER BY rowid").fetchall()
        assert got == [extracted(d)[:1] + extracted(d)[2:] for d in docs]
        assert got[-1] == (7, "odd")
    finally:
        store.close()
    Store(str(db)).close()  # opening it again changes nothing


# the same answers as the general path -------------------------------------------------------------

ODD: list[dict[str, Any]] = [
    {"id": "s1", "name": "Weather", "updated": "1", "description": "forecast"},
    {"id": "s2", "name": "weather", "updated": "2"},
    {"id": "s3", "name": None, "updated": "10"},
    {"id": "s4", "updated": "1"},  # no name
    {"id": "s5", "name": 12, "updated": "x|y"},
    {"id": "s6", "name": True, "updated": 3},
    {"id": "s7", "name": ["Weather", "b"], "updated": None},
    {"id": "s8", "name": 1.5},
    {"id": "s9", "name": "null"},
    {"id": "s10", "name": "Wea:ther"},
    {"id": 11, "name": "eleven"},
    {"id": "s12", "name": "Zeta", "description": "forecast"},
]

QUERIES = [
    [],
    [("filter", "name:Weather")],
    [("filter", "name:eath")],
    [("filter", "name:null")],
    [("filter", "name:true")],
    [("filter", "name:12")],
    [("filter", "name:1")],
    [("filter", "name:1.5")],
    [("filter", "name:")],
    [("filter", "name:Weather|Zeta")],
    [("filter", "name:Wea:ther")],
    [("filter", "id:1")],
    [("filter", "id:s1")],
    [("filter", "id:11")],
    [("filter", "updated:1")],
    [("filter", "name:eather"), ("filter", "updated:1")],
    [("filter", "description:fore")],
    [("search", "name:eath,updated:2")],
    [("filter", "name:eath"), ("search", "description:fore")],
    [("sort", "name")],
    [("sort", "name:desc")],
    [("sort", "updated,name:desc")],
    [("sort", "id")],
    [("sort", "description:desc,id")],
    [("filter", "name:e"), ("sort", "name:desc"), ("limit", "2"), ("offset", "1")],
    [("limit", "3"), ("offset", "2")],
    [("limit", "3"), ("offset", "100")],
]


@pytest.mark.parametrize("resource,kind", [("Service", "service"), ("Package", "package")])
@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("params", QUERIES, ids=lambda p: "&".join(f"{k}={v}" for k, v in p) or "all")
def test_listing_answers_what_select_answers(store: Store, resource: str, kind: str, exact: bool,
                                             params: list[tuple[str, str]]) -> None:
    res = catalog.resource(resource)
    with store.write() as txn:
        for doc in ODD:
            txn.put(AREA, kind, str(doc["id"]), doc)
            txn.put("other", kind, str(doc["id"]), {**doc, "name": "Weather"})
    q = parse_list_query(res, QueryParams(params))
    with store.read() as txn:
        want, want_total = select(txn.all(AREA, kind), q, res, exact=exact, or_filters=res.or_filters)
        raws, total = listing.page(txn, AREA, kind, res, q, exact=exact, or_filters=res.or_filters, hooks={})
        got = [msgspec.json.decode(raw) for raw in raws]
    assert (got, total) == (want, want_total)


DOMAINS: list[dict[str, Any]] = [{"id": "d1", "domain": "example.com"}, {"id": "d2", "domain": "example.net"},
                                {"id": "d3", "domain": None}, {"id": "d4"}, {"id": "d5", "domain": 5}]


@pytest.mark.parametrize("params", [[("filter", "domain:example")], [("filter", "domain:example.net|5")],
                                    [("filter", "domain:null")], [("sort", "domain:desc")]],
                         ids=lambda p: "&".join(f"{k}={v}" for k, v in p))
def test_domain_filters_answer_what_select_answers(store: Store, params: list[tuple[str, str]]) -> None:
    res = catalog.resource("DomainWhitelist")
    with store.write() as txn:
        for doc in DOMAINS:
            txn.put(AREA, "domain", str(doc["id"]), doc)
    q = parse_list_query(res, QueryParams(params))
    with store.read() as txn:
        want = select(txn.all(AREA, "domain"), q, res, or_filters=res.or_filters)
        raws, total = listing.page(txn, AREA, "domain", res, q, exact=False, or_filters=res.or_filters, hooks={})
        got = [msgspec.json.decode(raw) for raw in raws]
    assert (got, total) == want


# only what is needed is decoded ----------------------------------------------------------------


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the documents decoded by the list paths."""
    calls: list[int] = []
    real = msgspec.json.decode

    def counting(raw: Any, *args: Any, **kw: Any) -> Any:
        calls.append(len(raw))
        return real(raw, *args, **kw)

    monkeypatch.setattr(reads, "_decode", counting)
    monkeypatch.setattr(listing, "_decode", counting)
    return calls


def test_a_name_filter_decodes_only_the_answer(api: Api, decodes: list[int]) -> None:
    ids = [make_service(api, f"Service {i:03d}")["id"] for i in range(12)]
    decodes.clear()
    resp = api.get("/services", {"filter": "name:Service 007"})
    assert [s["id"] for s in resp.json()] == [ids[7]] and resp.headers["X-Total-Count"] == "1"
    assert len(decodes) == 1
    decodes.clear()
    assert [s["id"] for s in api.list("/services", {"filter": f"id:{ids[3]}"})] == [ids[3]]
    assert len(decodes) == 1


def test_a_sort_by_name_decodes_only_the_page(api: Api, decodes: list[int]) -> None:
    for i in range(12):
        make_service(api, f"Service {(i * 5) % 12:03d}")
    decodes.clear()
    resp = api.get("/services", {"sort": "name:desc", "limit": "3", "offset": "2"})
    assert [s["name"] for s in resp.json()] == ["Service 009", "Service 008", "Service 007"]
    assert resp.headers["X-Total-Count"] == "12"
    assert len(decodes) == 3


def test_page_indexes_and_filters_on_members(api: Api) -> None:
    for i in range(7):
        api.create("/members", member_body(f"dev{i}"))
    got = api.get("/members", {"limit": "2", "offset": "2", "sort": "username:desc"})
    assert [m["username"] for m in got.json()] == ["dev2", "dev1"]
    assert got.headers["X-Total-Count"] == "7"
    assert [m["username"] for m in api.list("/members", {"filter": "username:dev3"})] == ["dev3"]


# a page sent in pieces ---------------------------------------------------------------------------


def test_a_page_sent_in_pieces_is_the_joined_body(tmp_path: Path, uvicorn_runner: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from apimctl.server import streaming

    monkeypatch.setattr(streaming, "CHUNK", 100)  # many chunks even for a small page
    config = make_config(tmp_path)
    auth = {"Authorization": f"Bearer {TOKEN_A}"}
    with uvicorn_runner(config) as base, httpx.Client(base_url=base, headers=auth) as http:
        api = Api(http, TOKEN_A)
        with_domains(api)
        for i in range(5):
            make_service(api, f"S{i}", endpoints=[endpoint_body(f"E{i}", f"/s{i}")])
        params = {"fields": "id,name,endpoints.*", "limit": "4", "offset": "1"}
        resp = http.get("/v3/rest/services", params=params)
        assert resp.status_code == 200 and resp.headers["X-Total-Count"] == "5"
        assert resp.headers["content-length"] == str(len(resp.content))
        assert "chunked" not in resp.headers.get("transfer-encoding", "")
        body = resp.json()
        assert resp.content == msgspec.json.encode(body)  # compact, as one encoding of the list
        assert [s["name"] for s in body] == ["S1", "S2", "S3", "S4"]
        head = http.head("/v3/rest/services", params=params)
        assert head.content == b"" and head.headers["content-length"] == str(len(resp.content))
        indented = http.get("/v3/rest/services", params={**params, "indent": "true"})
        assert indented.json() == body and indented.headers["content-length"] == str(len(indented.content))
        empty = http.get("/v3/rest/services", params={"offset": "9"})
        assert empty.content == b"[]" and empty.headers["X-Total-Count"] == "5"
