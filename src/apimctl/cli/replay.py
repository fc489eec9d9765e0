"""``--replay LOG`` of ``plan``: the recorded calls decided on the area as it is and as the
plan would leave it.

The area as it is: its documents read through the management API
(:func:`apimctl.replay.config.read_documents`). The area as the plan would leave it: a
throw-away reference server seeded with those same documents (ids, keys and all), the very
plan shown applied there (made with the command's ``--prune``, ``--target``, ``--ignore``,
overlays and variables, so its deletes and only its steps count), and its configuration read
back. Nothing is sent to the
area or to any back end; the recorded calls are decided by the traffic manager's steps
(:mod:`apimctl.replay`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from apimctl.plans.model import Plan
from apimctl.plans.replay import Replay
from apimctl.replay.compare import replay
from apimctl.replay.config import read_documents
from apimctl.replay.decide import Side
from apimctl.replay.records import read

AREA = "replay"


async def replay_plan(source: str, plan: Plan, connect: Callable[[], AbstractAsyncContextManager[Any]], *,
                      reverse: bool = False) -> Replay:
    """Replay the log ``source`` against ``plan``, made against the area ``connect()`` opens.
    ``reverse`` (drift): the configuration the plan leaves is the one callers had, the area as
    it is the one they get now."""
    from apimctl.server.dialects import dialect_of
    from apimctl.server.traffic.area import area_of

    async with connect() as client:
        docs = await read_documents(client)
    dialect = dialect_of(plan.dialect or "spec")
    live = [area_of(AREA, docs)]
    planned = await planned_areas(docs, plan, plan.dialect or "spec")
    now, then = Side(live, dialect), Side(planned, dialect)
    before, after = (then, now) if reverse else (now, then)
    # the calls were made against the area as it is: their keys are placed and known there
    return replay(read(source), before, after, {s.address for s in plan.steps}, recorded_on=now)


def replay_gate(source: str, max_changed: int | None, paths: Sequence[str], overlays: Sequence[str],
                settings: dict[str, Any], say: Callable[[str], None], *, prune: bool = False,
                targets: Sequence[str] = (), ignores: Sequence[str] = ()) -> None:
    """``apply --replay LOG [--max-changed-calls N]``: the plan made and the log replayed
    against it before anything is written; what callers would see is said on stderr, and more
    than ``max_changed`` changed calls refuse the apply (:class:`ApimctlError`, exit 1)."""
    from apimctl import process
    from apimctl.cli.running import run_command
    from apimctl.cli.target import Paced, target_label
    from apimctl.errors import ApimctlError
    from apimctl.planning.command import PlanRequest, plan
    from apimctl.render.text import render_replay

    request = PlanRequest(paths=tuple(paths), overlays=tuple(overlays), prune=prune, targets=tuple(targets),
                          ignores=tuple(ignores), target=target_label(settings.get("url")), impact=None)
    paced = Paced(settings, say)
    made = run_command(lambda: plan(request, paced.connect, notice=say, keep=process.keep), None, say)
    found = run_command(lambda: replay_plan(source, made, paced.connect), None, say)
    for line in render_replay(found).rstrip("\n").split("\n"):
        say(line)
    if max_changed is not None and found.changed > max_changed:
        raise ApimctlError(f"the plan would change the answer of {found.changed} recorded call(s), more than "
                           f"--max-changed-calls {max_changed}; nothing was written")


async def planned_areas(docs: dict[str, list[dict[str, Any]]], plan: Plan, dialect: str) -> list[Any]:
    """The areas of a throw-away server holding ``docs`` with ``plan`` applied."""
    from apimctl.cli.emulator import open_emulator

    with tempfile.TemporaryDirectory(prefix="apimctl-replay-") as folder:
        emulator = open_emulator(str(Path(folder) / "area.db"), AREA, dialect=dialect)
        try:
            store = emulator.manager.reader.store
            with store.write() as txn:
                txn.add_area(AREA)
                for kind, items in docs.items():
                    for doc in items:
                        txn.put(AREA, kind, str(doc["id"]), doc)
            await _apply(emulator, plan)
            areas: list[Any] = emulator.manager.reader.areas()
            return areas
        finally:
            await emulator.manager.aclose()
            emulator.close()


async def _apply(emulator: Any, plan: Plan) -> None:
    """Apply ``plan`` to the throw-away area (its ids are the area's own: it holds the same
    documents); a step that fails there refuses the replay, which would not be the plan's."""
    from apimctl.api.client import ApiClient
    from apimctl.applying.run import ApplyOptions, apply_plan
    from apimctl.errors import ApimctlError

    async with ApiClient("http://embedded/v3/rest", token=emulator.token, qps=None,
                         transport=emulator.management) as client:
        result = await apply_plan(client, plan, ApplyOptions(env=dict(os.environ)))
    if not result.ok:
        why = [f"{o.action} {o.address}: {o.reason}" for o in (*result.failed, *result.skipped)]
        raise ApimctlError("applying the plan to the replay's copy of the area failed:\n"
                           + "\n".join(why or ["(no step failed; the copy did not converge)"]))
