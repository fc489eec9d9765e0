"""The journal of an apply: what each run did, step by step, in a JSON-lines file.

Every apply writes one (``.apimctl/runs/RUN_ID.jsonl`` by default, ``apply --journal PATH``
for a CI artifact), a line at a time, flushed after each line, so that a run stopped by the
quota, a signal or a crash leaves what it did behind:

- ``run``: the run's id, the area, the dialect, when it started, the manifests it was made
  from and the plan (:meth:`~apimctl.plans.model.Plan.to_json`: secrets as ``${VAR}``
  references, changed secret fields as ``(sensitive)``);
- ``deleted``: before the first write, the objects the plan deletes as they are (manifest
  shape, with the children that go with them), for a rollback to recreate them;
- ``start``: a unit of steps is about to be written, with the object as it was before the
  write (its id and the changed fields' values before, :func:`before_image`);
- ``end``: how it ended (``done``, ``failed`` or ``partial``) and the ids of the objects it
  created;
- ``finish``: the run's counts; a journal without it is of a run that did not finish.

Every line goes through :func:`apimctl.sensitive.scrub`: no registered secret value is ever
written. :func:`load` reads a journal back (refusing a truncated or foreign one) for
``apimctl runs``, ``apimctl rollback`` and ``apply --resume``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import msgspec

from apimctl import kinds, sensitive
from apimctl.applying import converge
from apimctl.applying.bodies import SECRET_PATHS
from apimctl.applying.calls import Client
from apimctl.applying.converge import Seen
from apimctl.applying.schedule import Execute, PartlyDone, Unit
from apimctl.errors import ApimctlError
from apimctl.plans.model import Plan, Step
from apimctl.plans.result import ApplyResult
from apimctl.state.live import LiveObject, LiveState

RUNS_DIR = Path(".apimctl") / "runs"
FORMAT = 1


class JournalError(ApimctlError):
    """A journal that cannot be used: unknown, truncated, malformed or of another area."""


def default_path(run_id: str, folder: Path = RUNS_DIR) -> Path:
    return folder / f"{run_id}.jsonl"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def before_image(step: Step) -> dict[str, Any]:
    """The object as it was before ``step`` wrote it: its id and the changed fields' values
    (a secret as ``(sensitive)``); nothing for a create."""
    image: dict[str, Any] = {"id": step.id}
    if step.action == "update":
        image["fields"] = {c.path: c.to_json()["before"] for c in step.changes}
    return image


class Journal:
    """An open journal file, written a line at a time (see the module docstring)."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = path.open("w", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write(sensitive.scrub(msgspec.json.encode(record).decode()) + "\n")
        self._file.flush()

    def begin(self, plan: Plan, *, area: str, sources: Iterable[str] = (),
              resumes: str | None = None, manifests: str = "") -> None:
        self.write({"type": "run", "format": FORMAT, "run_id": self.run_id, "area": area,
                    "dialect": plan.dialect, "started": _now(), "sources": list(sources),
                    "resumes": resumes, "manifests": manifests, "steps_planned": _journaled(plan)})

    async def keep_deleted(self, client: Client, plan: Plan, ids: Mapping[str, str]) -> None:
        """Before the first write: the objects the plan deletes as they are (manifest shape,
        with the child objects that go with them; secret fields as ``(sensitive)``), so that a
        rollback can recreate them. They come from the read the plan was made from
        (``plan.deleted_images``, :func:`deleted_images`), else are read: one list call per
        kind at most."""
        deletes = [s for s in plan.steps if s.action == "delete"]
        if not deletes:
            return
        images = plan.deleted_images
        if not images:
            found = converge.found_in(await converge.read_again(client, converge.wanted(
                [replace(s, action="update") for s in deletes], ids)), ids)
            images = _images(deletes, lambda step: found.of(step, ids), list(found.by_id.values()))
        self.write({"type": "deleted", "images": images})

    def started(self, unit: Unit) -> None:
        self.write({"type": "start", "at": _now(), "steps": list(unit.addresses),
                    "before": {s.address: before_image(s) for s in unit.steps}})

    def ended(self, unit: Unit, status: str, created: Mapping[str, str], error: str = "",
              failed: Iterable[str] = ()) -> None:
        self.write({"type": "end", "at": _now(), "steps": list(unit.addresses), "status": status,
                    "created": dict(created), "failed": list(failed), "error": error})

    def finish(self, result: ApplyResult) -> None:
        self.write({"type": "finish", "at": _now(), "summary": result.summary(),
                    "stopped": result.stopped, "interrupted": result.interrupted,
                    "calls": result.calls})
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def wrap(self, execute: Execute, ids: Callable[[str], str | None]) -> Execute:
        """``execute`` with each unit journaled before and after; ``ids(address)`` is the
        live id of an object once created."""

        async def journaled(unit: Unit) -> None:
            self.started(unit)
            try:
                await execute(unit)
            except PartlyDone as exc:
                self.ended(unit, "partial", _created(unit, ids, exc.failed), str(exc), exc.failed)
                raise
            except BaseException as exc:
                self.ended(unit, "failed", {}, str(exc) or type(exc).__name__)
                raise
            self.ended(unit, "done", _created(unit, ids, {}))

        return journaled


def _journaled(plan: Plan) -> dict[str, Any]:
    """The plan as the journal keeps it: a create's changes (every field of its ``desired``,
    which the journal holds) and the caller impact are left out."""
    doc = replace(plan, steps=[]).to_json()
    doc["summary"] = plan.summary()
    doc["steps"] = [{"action": s.action, "kind": s.kind, "key": s.key, "id": s.id, "parent": s.parent,
                     "parent_id": s.parent_id, "depends_on": s.depends_on, "desired": s.desired,
                     "changes": [] if s.action == "create" else [c.to_json() for c in s.changes]}
                    for s in plan.steps]
    return doc


def deleted_images(plan: Plan, state: LiveState) -> dict[str, list[dict[str, Any]]]:
    """The images of what ``plan``'s deletes take away, from the ``state`` it was made from."""
    deletes = [s for s in plan.steps if s.action == "delete"]
    if not deletes:
        return {}
    objects = [o for objs in state.objects.values() for o in objs]
    by_id = {(o.kind, o.id): o for o in objects if o.id}
    by_addr = {f"{o.kind}:{o.key}": o for o in objects}
    return _images(deletes, lambda s: by_id.get((s.kind, s.id or "")) or by_addr.get(s.address), objects)


def _images(deletes: list[Step], top_of: Callable[[Step], Any], objects: list[Any]) -> dict[str, Any]:
    images: dict[str, Any] = {}
    for step in deletes:
        top = top_of(step)
        if top is None:
            continue
        below = [o for o in objects if _under(o.kind, o.key, top.kind, top.key)]
        images[step.address] = [_image(o, step.address if o is not top else step.parent)
                                for o in [top, *below]]
    return images


def _under(kind: str, key: str, top_kind: str, top_key: str) -> bool:
    """Whether the object ``kind:key`` is a child (or grandchild) of ``top_kind:top_key``."""
    parent = kinds.get(kind).parent
    while parent is not None:
        key = kinds.split_key(kinds.get(kind), key)[0] or ""
        if parent == top_kind and key == top_key:
            return True
        kind, parent = parent, kinds.get(parent).parent
    return False


def _image(obj: Seen | LiveObject, parent: str | None) -> dict[str, Any]:
    doc = copy.deepcopy(obj.doc)
    for path in SECRET_PATHS.get(obj.kind, ()):
        head, _, rest = path.partition(".")
        holder = doc.get(head) if rest else doc
        name = rest or head
        if isinstance(holder, dict) and holder.get(name) not in (None, ""):
            holder[name] = sensitive.MASK
    return {"kind": obj.kind, "key": obj.key, "id": obj.id, "parent": parent, "doc": doc}


def _created(unit: Unit, ids: Callable[[str], str | None], failed: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for step in unit.steps:
        if step.action == "create" and step.address not in failed:
            found = ids(step.address)
            if found:
                out[step.address] = found
    return out


# --------------------------------------------------------------------------- reading


@dataclass
class Run:
    """A journal read back: its header, which steps ended how, and whether it finished."""

    path: Path
    run_id: str
    area: str
    dialect: str
    started: str
    plan: Plan
    sources: list[str] = field(default_factory=list)
    manifests: str = ""  # the digest of the manifests it applied (manifests_digest; "": not kept)
    done: set[str] = field(default_factory=set)  # addresses of steps written
    failed: set[str] = field(default_factory=set)
    begun: set[str] = field(default_factory=set)  # started, with no end recorded
    created: dict[str, str] = field(default_factory=dict)  # address -> new id
    finished: str | None = None  # when the run finished (None: stopped before)
    summary: dict[str, int] = field(default_factory=dict)
    calls: int = 0  # the calls its execution made (0: not recorded)
    # what its deletes took away: address -> the object and its children, parents first
    deleted: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.finished is not None

    @property
    def last(self) -> str:
        """When the run last wrote to its journal."""
        return self.finished or self._last

    _last: str = ""


def locate(run_id: str, journal: str | None = None, folder: Path = RUNS_DIR) -> Path:
    """The journal of ``run_id``: ``journal`` when given, else the default place."""
    path = Path(journal) if journal else default_path(run_id, folder)
    if not path.is_file():
        where = f"{path}" if journal else f"{path} (give its journal with --journal PATH)"
        raise JournalError(f"unknown run {run_id!r}: no journal at {where}")
    return path


def load(path: Path, *, run_id: str | None = None, area: str | None = None) -> Run:
    """The run ``path`` journals. Refused: a file that is not a journal, a truncated one (a
    line cut short: a crash mid-line), one of another run id or of another ``area``."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc}") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            raise JournalError(f"{path}:{number}: the journal is truncated or damaged "
                               "(a line is not JSON)") from None
        if not isinstance(record, dict) or "type" not in record:
            raise JournalError(f"{path}:{number}: not a journal record")
        records.append(record)
    if not records or records[0].get("type") != "run" or records[0].get("format") != FORMAT:
        raise JournalError(f"{path}: not an apply journal (no run record on its first line)")
    head = records[0]
    if run_id is not None and head.get("run_id") != run_id:
        raise JournalError(f"{path}: the journal is of run {head.get('run_id')!r}, not {run_id!r}")
    if area is not None and head.get("area") != area:
        raise JournalError(f"{path}: the journal is of the area {head.get('area')!r}, not "
                           f"{area!r}; nothing was written")
    try:
        plan = Plan.from_json(head["steps_planned"])
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"{path}:1: the journal's plan is damaged: {exc}") from None
    run = Run(path, str(head["run_id"]), str(head.get("area", "")), str(head.get("dialect", "")),
              str(head.get("started", "")), plan, list(head.get("sources") or []),
              str(head.get("manifests") or ""))
    run._last = run.started
    for record in records[1:]:
        _replay(run, record)
    return run


def _replay(run: Run, record: Mapping[str, Any]) -> None:
    kind = record["type"]
    steps = [str(s) for s in record.get("steps", [])]
    run._last = str(record.get("at", run._last))
    if kind == "deleted":
        run.deleted.update(record.get("images") or {})
    elif kind == "start":
        run.begun.update(steps)
    elif kind == "end":
        run.begun.difference_update(steps)
        failed = {str(s) for s in record.get("failed", [])}
        if record.get("status") == "failed":
            failed = set(steps)
        run.failed.update(failed)
        run.done.update(s for s in steps if s not in failed)
        run.created.update({str(k): str(v) for k, v in (record.get("created") or {}).items()})
    elif kind == "finish":
        run.finished = str(record.get("at", ""))
        run.summary = dict(record.get("summary") or {})
        run.calls = int(record.get("calls") or 0)


def listing(folder: Path = RUNS_DIR) -> list[Run | JournalError]:
    """The runs journaled in ``folder``, oldest first; a damaged journal as its error."""
    out: list[tuple[str, Run | JournalError]] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            run = load(path)
            out.append((run.started, run))
        except JournalError as exc:
            out.append(("", exc))
    return [r for _, r in sorted(out, key=lambda item: item[0])]


def calls_today(area: str, folder: Path = RUNS_DIR, today: str | None = None) -> int:
    """The calls the runs journaled in ``folder`` made today (UTC) on ``area``: what they took
    of the daily quota, as far as this machine knows."""
    day = today or time.strftime("%Y-%m-%d", time.gmtime())
    return sum(r.calls for r in listing(folder)
               if isinstance(r, Run) and r.area == area and r.started.startswith(day))


def manifests_digest(doc: Mapping[str, Any]) -> str:
    """A digest of a manifest document (as read, secret references unresolved): a resume whose
    manifests have the run's digest plans only what the run left undone, reading only what
    that needs (:func:`apimctl.applying.reading.resume_reads`)."""
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
