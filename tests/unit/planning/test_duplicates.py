"""Nested duplicates are found in the raw live objects (before the normal form collapses them):
methods, response filters, error messages, entitlements, an event's endpoints; the copy kept is
the oldest, and a repair change names the ids to delete."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from apimctl import kinds
from apimctl.planning.duplicates import keeper, nested_duplicates, repair_changes
from apimctl.plans.model import Step


def test_methods_and_response_filters() -> None:
    raw = {"methods": [
        {"id": "m2", "name": "GET", "created": "2026-01-02T00:00:00.000+0000",
         "responseFilters": [{"id": "f1", "name": "pub"}, {"id": "f2", "name": "pub"}]},
        {"id": "m1", "name": "GET", "created": "2026-01-01T00:00:00.000+0000"},
        {"id": "m3", "name": "POST"},
    ]}
    found = nested_duplicates(kinds.ENDPOINT, "S/E", raw, repair=True)
    by_path = {d.path: d for d in found}
    assert set(by_path) == {"methods[GET]", "methods[GET].responseFilters[pub]"}
    assert by_path["methods[GET]"].keep == "m1" and by_path["methods[GET]"].extra == ("m2",)
    assert by_path["methods[GET].responseFilters[pub]"].reason == "first listed"
    step = Step("update", "endpoint", "S/E", "e", changes=tuple(repair_changes(found)))
    assert step.duplicate_deletes() == {"m2", "f2"}


def test_messages_entitlements_and_event_endpoints() -> None:
    messages = {"errorMessages": [{"id": "ERR_403_DEVELOPER_OVER_QPS"}, {"id": "ERR_403_DEVELOPER_OVER_QPS"}]}
    (msg,) = nested_duplicates(kinds.ERROR_SET, "S/Default", messages, repair=False)
    assert msg.path == "errorMessages[ERR_403_DEVELOPER_OVER_QPS]" and msg.reason == "listed 2 times"
    plan = {"services": [{"id": "s", "name": "W", "endpoints": [{"id": "e", "name": "F"}, {"id": "e", "name": "F"}]},
                         {"id": "s", "name": "W"}]}
    paths = {d.path for d in nested_duplicates(kinds.PLAN, "P/Gold", plan, repair=False)}
    assert paths == {"services[W]", "services[W].endpoints[F]"}
    event = {"endpoints": [{"id": "e", "name": "F"}, {"id": "e", "name": "F"}]}
    (ep,) = nested_duplicates(kinds.MAINTENANCE_EVENT, "Up", event, repair=False)
    assert ep.path == "endpoints[F]" and ep.ids == ("e", "e")


def test_keeper_prefers_the_pin_then_the_oldest() -> None:
    items = [{"id": "b", "created": "2026-02-01T00:00:00Z"}, {"id": "a", "created": "2026-01-01T00:00:00Z"}]
    assert keeper(items) == (1, "oldest (created 2026-01-01T00:00:00Z)")
    assert keeper(items, pin="b") == (0, "pinned by id")


def test_the_oldest_is_told_by_the_instant_not_the_text() -> None:
    # the same second: a rendering without milliseconds sorts after ``.500`` as text
    items = [{"id": "b", "created": "2026-01-01T00:00:00.500Z"}, {"id": "a", "created": "2026-01-01T00:00:00Z"}]
    assert keeper(items) == (1, "oldest (created 2026-01-01T00:00:00Z)")
    assert keeper([{"id": "a", "created": "2026-01-01T00:00:00Z"}, {"id": "b", "created": "not a time"}]) == (
        0, "first listed")


def _rendered(moment: datetime, style: int) -> str:
    """One of the renderings a live area uses for ``created``."""
    if style == 0:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"
    if style == 1:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if not moment.microsecond else \
            moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return moment.isoformat()


@given(st.lists(st.tuples(st.integers(0, 5_000), st.integers(0, 2)), min_size=1, max_size=6))
def test_the_copy_kept_is_the_earliest_instant_whatever_the_rendering(copies: list[tuple[int, int]]) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    items = [{"id": str(i), "created": _rendered(start + timedelta(milliseconds=ms), style)}
             for i, (ms, style) in enumerate(copies)]
    index, reason = keeper(items)
    earliest = min(ms for ms, _ in copies)
    assert copies[index][0] == earliest and index == [ms for ms, _ in copies].index(earliest)
    assert reason == f"oldest (created {items[index]['created']})"
