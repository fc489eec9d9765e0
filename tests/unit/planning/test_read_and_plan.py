"""``read_and_plan``: the one entry ``plan``, ``apply`` and ``drift`` read and plan through,
with the reader each passes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Any

from apimctl.api.dialect import DialectChoice
from apimctl.planning import PlanOptions, read_and_plan
from apimctl.state.live import DATA_SOURCES, LiveState, from_raw

from .test_build import M, svc


class Client:
    """Nothing but the dialect: the reader below never lists."""

    dialect = DialectChoice(requested="mashery", source="--dialect")

    async def get(self, path: str, params: Any = None) -> Any:
        raise AssertionError("no probe: the dialect is given")


def test_the_reader_reads_while_the_desired_objects_are_made() -> None:
    skipped: list[Collection[str]] = []
    live = from_raw({"service": [svc("Weather", "s1")]})

    async def read(client: Any, *, meanwhile: Callable[[], object] | None,
                   skip: Collection[str]) -> LiveState:
        assert meanwhile is not None  # the desired objects, made while the area is read
        meanwhile()
        skipped.append(skip)
        return live

    doc = {"services": [{"name": "Weather", "description": "now"}]}
    plan, state = asyncio.run(read_and_plan(Client(), M(doc), PlanOptions(), read=read))  # type: ignore[arg-type]
    assert state is live
    assert skipped == [DATA_SOURCES]  # the data sources the manifests do not name: not read
    assert plan.dialect == "mashery"
    assert [(s.action, s.address) for s in plan.steps] == [("update", "service:Weather")]
