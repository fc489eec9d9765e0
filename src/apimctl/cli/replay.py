"""``--replay LOG`` of ``plan``: the recorded calls decided on the area as it is and as the
plan would leave it.

The area as it is: its documents read through the management API
(:func:`apimctl.replay.config.read_documents`). The area as the plan would leave it: a
throw-away reference server seeded with those same documents (ids, keys and all), the
manifests planned and applied there, and its configuration read back. Nothing is sent to the
area or to any back end; the recorded calls are decided by the traffic manager's steps
(:mod:`apimctl.replay`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from apimctl.plans.model import Plan
from apimctl.replay.compare import replay
from apimctl.replay.config import read_documents
from apimctl.replay.decide import Side
from apimctl.replay.records import read
from apimctl.replay.result import Replay

AREA = "replay"


async def replay_plan(source: str, plan: Plan, paths: Sequence[str], overlays: Sequence[str],
                  connect: Callable[[], AbstractAsyncContextManager[Any]]) -> Replay:
    from apimctl.server.dialects import dialect_of
    from apimctl.server.traffic.area import area_of

    """Replay the log ``source`` against ``plan`` (made from ``paths`` and ``overlays``)."""
    async with connect() as client:
        docs = await read_documents(client)
    dialect = dialect_of(plan.dialect or "spec")
    before = Side([area_of(AREA, docs)], dialect)
    after = Side(await planned_areas(docs, paths, overlays, plan.dialect or "spec"), dialect)
    return replay(read(source), before, after, {s.address for s in plan.steps})


async def planned_areas(docs: dict[str, list[dict[str, Any]]], paths: Sequence[str], overlays: Sequence[str],
                        dialect: str) -> list[Any]:
    """The areas of a throw-away server holding ``docs`` with the manifests applied."""
    from apimctl.cli.emulator import open_emulator
    from apimctl.cli.test import _apply

    with tempfile.TemporaryDirectory(prefix="apimctl-replay-") as folder:
        emulator = open_emulator(str(Path(folder) / "area.db"), AREA, dialect=dialect)
        try:
            store = emulator.manager.reader.store
            with store.write() as txn:
                txn.add_area(AREA)
                for kind, items in docs.items():
                    for doc in items:
                        txn.put(AREA, kind, str(doc["id"]), doc)
            if paths:
                await _apply(emulator, paths, overlays)
            areas: list[Any] = emulator.manager.reader.areas()
            return areas
        finally:
            await emulator.manager.aclose()
            emulator.close()
