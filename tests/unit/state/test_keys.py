"""Reading package keys for the caller impact (``apimctl.state.keys``): fields named at every
level, page-index offsets, the count checked against ``X-Total-Count``, only the plans asked
for kept, never a key value."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import asdict

from apimctl.errors import ServerError
from apimctl.plans.file import load_plan, save_plan
from apimctl.plans.model import Change, Impact, ImpactRead, Plan, Step
from apimctl.state.keys import PAGE_SIZE, read_keys


class FakeKeys:
    """A ``/packageKeys`` and ``/applications`` lister: ``total`` keys on plans ``p0``..``p2``
    (one application per two keys), paged by page index; ``shown_total`` is the
    ``X-Total-Count`` it sends (``None``: no header)."""

    def __init__(self, total: int, shown_total: int | str | None = "same") -> None:
        self.keys = [{"id": f"k{i}", "apikey": f"secret-{i}", "status": "active",
                      "rateLimitCeiling": i if i % 3 == 0 else None,
                      "plan": {"id": f"p{i % 3}"}, "package": {"id": "pk"}} for i in range(total)]
        self.apps = [{"id": f"a{i}", "username": f"dev{i % 5}",
                      "packageKeys": self.keys[2 * i: 2 * i + 2]} for i in range((total + 1) // 2)]
        self.shown = shown_total
        self.calls: list[tuple[str, str, int, int]] = []

    async def list_page(self, path: str, params: Any = None, *, size: int = PAGE_SIZE,
                        offset: int = 0) -> tuple[list[dict[str, Any]], int | None]:
        (fields,) = [v for k, v in params if k == "fields"]
        self.calls.append((path, fields, size, offset))
        items = self.keys if path == "/packageKeys" else self.apps
        page = items[offset * size: (offset + 1) * size]  # a page index, not an item index
        total = len(items) if self.shown == "same" else self.shown
        return [dict(i) for i in page], total if not isinstance(total, str) else None


def test_keys_are_read_once_by_page_index_with_every_field_named() -> None:
    fake = FakeKeys(2500)
    read = asyncio.run(read_keys(fake, {"p0", "p2"}))
    assert [offset for _, _, _, offset in fake.calls] == [0, 1, 2]
    assert {path for path, _, _, _ in fake.calls} == {"/packageKeys"}
    fields = fake.calls[0][1].split(",")
    assert "*" not in fake.calls[0][1] and "apikey" not in fields and "secret" not in fields
    assert {"plan.id", "package.id", "rateLimitCeiling", "rateLimitExempt"} <= set(fields)
    assert read.calls == 3 and read.items == 2500
    assert sorted(read.by_plan) == ["p0", "p2"]
    assert len(read.of("p0")) == 834 and len(read.of("p2")) == 833 and read.of("p1") == []
    assert read.of("p0")[1].rate_ceiling == 3 and read.of("p2")[0].rate_ceiling is None
    assert all("secret" not in str(asdict(k)) for k in read.of("p0"))


def test_owners_come_from_applications_with_the_keys_nested() -> None:
    fake = FakeKeys(10)
    read = asyncio.run(read_keys(fake, {"p1"}, applications=True))
    (path, fields, _, _), = fake.calls
    assert path == "/applications"
    assert fields.startswith("id,username,packageKeys.id,") and "packageKeys.plan.id" in fields
    assert [(k.id, k.application, k.member) for k in read.of("p1")] == [
        ("k1", "a0", "dev0"), ("k4", "a2", "dev2"), ("k7", "a3", "dev3")]
    assert read.applications and read.items == 5


def test_a_count_that_does_not_match_the_total_is_an_error() -> None:
    with pytest.raises(ServerError, match=r"GET /packageKeys: the list changed while it was read "
                                          r"\(X-Total-Count 1200, 1100 read\)"):
        asyncio.run(read_keys(FakeKeys(1100, shown_total=1200), {"p0"}))


def test_without_a_total_pages_are_read_until_a_short_one() -> None:
    fake = FakeKeys(2000, shown_total=None)
    read = asyncio.run(read_keys(fake, {"p0"}))
    assert [offset for _, _, _, offset in fake.calls] == [0, 1, 2] and read.items == 2000


def test_a_saved_plan_keeps_its_impact(tmp_path: Path) -> None:
    impact = Impact("5 keys on plan Pro: 2 follow", "tightens", "rateLimitCeiling", 3, None,
                    (("plan:Shop/Pro", 3),), ("k1",))
    plan = Plan(steps=[Step("update", "plan", "Shop/Pro", id="p1", parent="package:Shop",
                            parent_id="s1", changes=(Change("rateLimitCeiling", 1000, 500),),
                            impact=(impact,))],
                impact=ImpactRead("auto", True, 1, 5))
    save_plan(plan, str(tmp_path / "plan.json"))
    loaded = load_plan(str(tmp_path / "plan.json"))
    assert loaded.steps[0].impact == (impact,) and loaded.impact == plan.impact
    assert loaded.affected_keys() == 3
