"""Reading the live state with a fake lister: one list call per top-level kind with its
projection, and the translation of API objects into manifest shape (references by name, quirks
accepted). The call count against a reference server is in
``tests/integration/test_live_read_calls.py``."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from concurrent.futures import Future
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from apimctl import kinds, workers
from apimctl.api.requests import Page
from apimctl.errors import ServerError
from apimctl.kinds.ops import Context
from apimctl.state import normal_batches
from apimctl.state.live import LiveObject, LiveState, from_raw, read_live, read_raw, repeats


class FakeLister:
    def __init__(self, data: dict[str, list[dict[str, Any]]]) -> None:
        self.data = data
        self.calls: list[tuple[str, Any, int, bool]] = []

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 100,
                       page_index: bool = False) -> list[dict[str, Any]]:
        self.calls.append((path, params, page_size, page_index))
        return self.data.get(path, [])


def test_one_list_call_per_top_level_kind_with_projection() -> None:
    lister = FakeLister({"/services": [{"id": "s1", "name": "W"}]})
    raw = asyncio.run(read_raw(lister))
    assert raw["service"] == [{"id": "s1", "name": "W"}]
    paths = sorted(c[0] for c in lister.calls)
    assert paths == sorted(k.path for k in kinds.TOP_LEVEL)
    for path, params, size, page_index in lister.calls:
        kind = next(k for k in kinds.TOP_LEVEL if k.path == path)
        assert ("fields", kind.fields_param()) in params and size == 1000
        assert page_index == (path == "/roles")


def test_translation_into_manifest_shape() -> None:
    raw = {
        "role": [{"id": "r1", "name": "Partners", "organization": {"id": "o", "name": "Org"}}],
        "service": [{"id": "s1", "name": "W", "revisionNumber": 7, "updated": "t",
                     "roles": [{"id": "r1", "name": "stale", "action": "read"}],
                     "errorSets": [{"id": "x1", "name": "First", "errorMessages": [
                         {"id": "ERR_502_BAD_GATEWAY", "code": 502, "status": "Bad"}]}],
                     "endpoints": [{"id": "e1", "name": "F", "errorSet": None,
                                    "apiKeyValueLocations": "request-header",
                                    "publicDomains": [{"address": "api.example.com"}],
                                    "systemDomainAuthentication": {"type": "httpBasic",
                                                                   "password": "never"},
                                    "methods": [{"id": "m", "name": "get", "created": "c",
                                                 "responseFilters": [{"id": "f", "name": "pub"}]}]}]}],
        "package": [{"id": "p1", "name": "P", "plans": [{"id": "q1", "name": "G", "services": [
            {"id": "s1", "name": "old name", "endpoints": [
                {"id": "e1", "name": "F", "methods": [{"id": "m", "name": "get"}]}]}],
            "roles": [{"id": "r1"}]}]}],
        "maintenanceEvent": [{"id": "v1", "name": "M", "endpoints": [{"id": "e1", "name": "F"}]}],
    }
    state = from_raw(raw)
    (role,) = state.of("role")
    assert role.doc["organization"] == "Org"
    (svc,) = state.of("service")
    assert svc.doc["roles"] == ["Partners"] and svc.revision == 7 and "endpoints" not in svc.doc
    (ep,) = state.of("endpoint")
    assert ep.key == "W/F" and ep.parent_id == "s1" and ep.doc["errorSet"] == "First"
    assert ep.doc["publicDomains"] == ["api.example.com"]
    assert "password" not in ep.doc["systemDomainAuthentication"]
    assert ep.doc["methods"] == [{"name": "get", "responseFilters": [{"name": "pub"}]}]
    (es,) = state.of("errorSet")
    assert es.doc["errorMessages"] == [{"id": "ERR_502_BAD_GATEWAY", "status": "Bad"}]
    (plan,) = state.of("plan")
    assert plan.key == "P/G" and plan.doc["roles"] == ["Partners"]
    assert plan.doc["services"] == [{"name": "W", "endpoints": [
        {"name": "F", "undefinedMethodsAllowed": True, "methods": ["get"]}]}]
    (event,) = state.of("maintenanceEvent")
    assert event.doc["endpoints"] == [{"service": "W", "endpoint": "F"}]


# --- reading page by page, the compact live model --------------------------------------------

RAW: dict[str, list[dict[str, Any]]] = {
    "role": [{"id": "r1", "name": "Partners"}],
    "service": [{"id": f"s{n}", "name": f"W{n}", "revisionNumber": n, "updated": "t",
                 "roles": [{"id": "r1"}],
                 "errorSets": [{"id": f"x{n}", "name": "First", "errorMessages": []}],
                 "endpoints": [{"id": f"e{n}-{m}", "name": f"F{m}", "errorSet": None,
                                "created": "2026-01-01T00:00:00.000+0000",
                                "methods": [{"id": "m", "name": "get"}]} for m in range(3)]}
                for n in range(5)],
    "package": [{"id": "p1", "name": "P", "plans": [{"id": "q1", "name": "G", "roles": [{"id": "r1"}],
                                                    "services": [{"id": "s1", "endpoints": [
                                                        {"id": "e1-2", "methods": [{"id": "m"}]}]}]}]}],
}


class PagedLister(FakeLister):
    """A lister with the client's ``pages``: each list in pages of ``size`` (JSON encoded,
    decoded as read), recording the order the pages were taken in."""

    def __init__(self, data: dict[str, list[dict[str, Any]]], size: int = 2) -> None:
        super().__init__(data)
        self.size = size
        self.taken: list[tuple[str, int]] = []

    async def pages(self, path: str, params: Any = None, *, page_size: int = 100,
                    page_index: bool = False) -> AsyncIterator[Page]:
        self.calls.append((path, params, page_size, page_index))
        items = self.data.get(path, [])
        seen: set[Any] = set()
        for start in range(0, max(1, len(items)), self.size):
            raw = [msgspec.Raw(msgspec.json.encode(i)) for i in items[start:start + self.size]]
            self.taken.append((path, start))
            yield Page(raw, seen)


def _paths(raw: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    return {kinds.get(name).path: items for name, items in raw.items()}


def _state(state: LiveState) -> list[tuple[Any, ...]]:
    return [(o.kind, o.key, o.id, o.doc, o.parent_key, o.parent_id, o.updated, o.revision,
             o.name, dict(o.raw), o.norm, o.context) for objs in state.objects.values() for o in objs]


def test_read_page_by_page_as_from_the_raw_lists() -> None:
    paged = PagedLister(_paths(RAW))
    state = asyncio.run(read_live(paged))
    assert _state(state) == _state(from_raw(copy.deepcopy(RAW)))
    assert state.count() == 1 + 5 * 5 + 2
    assert [o.doc["roles"] for o in state.of("service")] == [["Partners"]] * 5
    (plan,) = state.of("plan")  # read after the services: their ids are known by then
    assert plan.doc["services"] == [{"name": "W1", "endpoints": [
        {"name": "F2", "undefinedMethodsAllowed": True, "methods": ["get"]}]}]
    assert [p for p, _ in paged.taken if p == "/services"] == ["/services"] * 3
    assert sorted(c[0] for c in paged.calls) == sorted(k.path for k in kinds.TOP_LEVEL)


def test_a_page_with_an_unreadable_item_is_refused() -> None:
    paged = PagedLister({"/services": [{"id": "s1", "name": "W"}, {"name": "no id"}]})
    with pytest.raises(ServerError, match="an item without id"):
        asyncio.run(read_live(paged))


def test_live_objects_keep_their_documents_packed() -> None:
    state = from_raw(copy.deepcopy(RAW))
    ep = state.of("endpoint")[0]
    first = ep.doc
    assert first == ep.doc and first is not ep.doc  # a new dict every time
    first["name"] = "changed"
    assert ep.doc["name"] == "F0"
    ep.doc = {**ep.doc, "name": "G"}
    assert ep.doc["name"] == "G" and ep.norm is None  # a new document has no normal form yet
    plain = LiveObject("endpoint", "W0/F0", "e0-0", {"name": "F0", "n": [1, {"a": None}]})
    assert plain.doc == {"name": "F0", "n": [1, {"a": None}]} and plain.name == "F0"
    assert plain == LiveObject("endpoint", "W0/F0", "e0-0", {"name": "F0", "n": [1, {"a": None}]})
    assert "W0/F0" in repr(plain) and repr(state).startswith("LiveState(role 1, service 5")


def test_raw_keeps_nested_lists_only_when_items_repeat() -> None:
    raw = copy.deepcopy(RAW)
    methods = raw["service"][0]["endpoints"][0]["methods"]
    methods.append({"id": "m2", "name": "get"})
    state = from_raw(raw)
    repeated, plain = state.of("endpoint")[:2]
    assert repeated.raw["methods"] == methods and "methods" not in plain.raw
    assert repeated.keeps_lists and not plain.keeps_lists  # planning looks for duplicates in the first
    assert plain.raw == {"created": "2026-01-01T00:00:00.000+0000", "id": "e0-1", "name": "F1"}
    assert repeats(kinds.ENDPOINT, {"methods": [{"name": "a", "responseFilters": [
        {"name": "x"}, {"name": "x"}]}]})
    assert not repeats(kinds.ENDPOINT, {"methods": [{"name": "a"}, {"name": "b"}]})


_IDENT = st.none() | st.sampled_from(["", "a", "b", "1"]) | st.integers(0, 2)
_ITEM = st.dictionaries(st.sampled_from(["name", "id", "other"]), _IDENT, max_size=3) | st.sampled_from(["a", None])
_METHOD = st.fixed_dictionaries({}, optional={"name": _IDENT, "id": _IDENT,
                                               "responseFilters": st.lists(_ITEM, max_size=3)})


def _repeats_as_defined(kind: kinds.Kind, raw: dict[str, Any]) -> bool:
    """Two items of one keyed list or set (at any depth) with one identity, told one by one."""
    def lists(value: Any, parts: list[str]) -> list[list[Any]]:
        found = value.get(parts[0]) if isinstance(value, dict) else None
        items = found if isinstance(found, list) else [] if found is None else [found]
        return [items] if len(parts) == 1 else [x for item in items for x in lists(item, parts[1:])]
    for path in (*kind.keyed, *kind.compare.sets):
        key_field = kind.keyed.get(path, "id")
        for items in lists(raw, path.split(".")):
            idents = [str(i[key_field]) for i in items if isinstance(i, dict) and i.get(key_field) not in (None, "")]
            if len(idents) != len(set(idents)):
                return True
    return False


@given(st.fixed_dictionaries({}, optional={"methods": st.lists(_METHOD, max_size=4) | _METHOD,
                                           "publicDomains": st.lists(_ITEM, max_size=3),
                                           "systemDomains": st.lists(_ITEM, max_size=3)}))
def test_repeats_tells_two_items_with_one_identity_anywhere(raw: dict[str, Any]) -> None:
    assert repeats(kinds.ENDPOINT, raw) == _repeats_as_defined(kinds.ENDPOINT, raw)


_SERVICE_DROPS = kinds.SERVICE.compare.computed | {c.manifest_key for c in kinds.children_of(kinds.SERVICE)}


@given(st.dictionaries(st.sampled_from(sorted({*_SERVICE_DROPS, "name", "description", "x"})),
                       st.integers(), max_size=8))
def test_strip_drops_the_computed_fields_and_keeps_the_order(raw: dict[str, Any]) -> None:
    kind = kinds.SERVICE  # its computed fields, and its endpoints and error sets (children)
    drop = _SERVICE_DROPS
    assert list(kind.ops.strip(raw).items()) == [(k, v) for k, v in raw.items() if k not in drop]


def test_normal_forms_are_made_as_planning_compares_them() -> None:
    state = from_raw(copy.deepcopy(RAW))
    ep = state.of("endpoint")[0]
    assert ep.context == Context("First")  # the service's first error set
    assert ep.norm is not None and len(ep.norm) == 32 * (1 + len(ep_left_alone()))
    assert all(o.norm is None for o in from_raw(copy.deepcopy(RAW), normal_forms=False).of("endpoint"))


def ep_left_alone() -> list[str]:
    return [n for n in kinds.ENDPOINT.compare.left_alone if "." not in n]


def test_the_first_document_spelled_the_mashery_way_is_kept() -> None:
    raw = copy.deepcopy(RAW)
    raw["service"][3]["endpoints"][1]["returnedHeaders"] = ["mashery-responder"]
    state = from_raw(raw)
    assert state.spelled["endpoint"]["name"] == "F1"
    assert "endpoint" not in from_raw(copy.deepcopy(RAW)).spelled


def _norms(state: LiveState) -> list[tuple[str, str, bytes | None]]:
    return [(o.kind, o.key, o.norm) for objs in state.objects.values() for o in objs]


@pytest.fixture
def small_batches(worker_answers: list[object], monkeypatch: pytest.MonkeyPatch) -> None:
    """Normal forms made in batches of two objects, each sent to the worker when it is free."""
    monkeypatch.setattr(normal_batches, "NORMAL_BATCH", 2)
    monkeypatch.setattr(normal_batches, "WARM_UP", 1)
    monkeypatch.setattr(normal_batches, "OFFLOAD_AFTER", 0)


def test_normal_forms_made_in_the_worker_are_those_made_here(
        small_batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[int] = []
    submit = workers.submit

    def counted(fn, batch):  # type: ignore[no-untyped-def]
        sent.append(len(batch))
        return submit(fn, batch)

    monkeypatch.setattr(workers, "submit", counted)
    apart = from_raw(copy.deepcopy(RAW))
    assert sent and all(n == 2 for n in sent)
    monkeypatch.setenv(workers.ENV, "0")
    here = from_raw(copy.deepcopy(RAW))
    assert _norms(apart) == _norms(here)
    assert all(norm is not None for kind, _, norm in _norms(here) if not kinds.get(kind).read_only)


def test_a_batch_the_worker_could_not_make_is_made_here(
        small_batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _norms(from_raw(copy.deepcopy(RAW)))
    monkeypatch.setattr(workers, "result", lambda future: None)  # every answer lost
    assert _norms(from_raw(copy.deepcopy(RAW))) == expected
    monkeypatch.setattr(workers, "submit", lambda fn, *args: None)  # no worker at all
    assert _norms(from_raw(copy.deepcopy(RAW))) == expected


def test_a_small_area_does_not_start_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(workers, "submit", lambda fn, *args: calls.append("submit"))
    monkeypatch.setattr(workers, "warm_up", lambda: calls.append("warm_up"))
    monkeypatch.setattr(workers, "running", lambda: False)
    monkeypatch.setattr(normal_batches, "NORMAL_BATCH", 2)  # full batches, but few objects read
    state = from_raw(copy.deepcopy(RAW))
    assert calls == [] and all(o.norm is not None for o in state.of("endpoint"))


def test_a_running_worker_gets_the_first_full_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started already (for the manifests) takes batches from the first one: the
    area need not prove it pays for starting one."""
    sent: list[int] = []

    def answered(fn, batch):  # type: ignore[no-untyped-def]
        sent.append(len(batch))
        future: Future[object] = Future()
        future.set_result(fn(batch))
        return future

    monkeypatch.setattr(workers, "submit", answered)
    monkeypatch.setattr(workers, "warm_up", lambda: None)
    monkeypatch.setattr(workers, "running", lambda: True)
    monkeypatch.setattr(normal_batches, "NORMAL_BATCH", 2)
    state = from_raw(copy.deepcopy(RAW))
    assert sent and sent[0] == 2  # well before OFFLOAD_AFTER objects were seen
    assert sum(sent) < normal_batches.OFFLOAD_AFTER
    monkeypatch.setenv(workers.ENV, "0")
    assert _norms(state) == _norms(from_raw(copy.deepcopy(RAW)))


class SlowLister(PagedLister):
    """Each list's first page comes back once ``open`` is set, for the lists in ``slow``."""

    def __init__(self, data: dict[str, list[dict[str, Any]]], slow: set[str]) -> None:
        super().__init__(data)
        self.slow = slow
        self.open = asyncio.Event()

    async def pages(self, path: str, params: Any = None, *, page_size: int = 100,
                    page_index: bool = False) -> AsyncIterator[Page]:
        if path in self.slow:
            await self.open.wait()
        async for page in super().pages(path, params, page_size=page_size, page_index=page_index):
            yield page


@pytest.mark.parametrize("slow", [set(), {"/services"}, {"/services", "/packages"}])
def test_the_callers_work_is_done_once_while_a_first_page_is_awaited(slow: set[str]) -> None:
    lister = SlowLister(_paths(RAW), slow)
    seen: list[tuple[int, bool]] = []

    def meanwhile() -> None:
        # what has been read when it runs, and whether a page was still on its way
        seen.append((sum(1 for path, _ in lister.taken), lister.open.is_set()))
        lister.open.set()

    async def read() -> LiveState:
        asyncio.get_running_loop().call_later(5, lister.open.set)  # never hangs
        return await read_live(lister, meanwhile=meanwhile)

    state = asyncio.run(read())
    assert _state(state) == _state(from_raw(copy.deepcopy(RAW)))
    assert len(seen) == 1
    taken, opened = seen[0]
    if slow:
        assert not opened and 0 < taken < len(lister.taken)  # after the first pages, before the slow one
    else:
        assert taken == len(lister.taken)  # never waited: at the end
