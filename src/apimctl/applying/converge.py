"""The convergence check of apply: read again only what the apply touched, and compare it
with what the plan asked for, the way ``plan`` compares.

Called by :func:`apimctl.applying.run.verify` after the writes.

**What is read.** The top-level objects the done steps touched, whole: a step on an endpoint
or an error set is checked on its service, a step on a plan on its package, a role, domain or
maintenance event on itself. Each is read with the ``fields`` projection of
:func:`apimctl.state.live.read_raw` (``Kind.fields_param``), so its child objects come back
with it, and found by id: ``filter=id:A|B|C``, one list call per top-level kind touched. A
vertical bar makes a set of values (specification, "Common rules" 3), which the reference
server accepts on every list in both dialects; several ``filter`` parameters, or the
``mashery`` dialect's comma-joined filters (SUPPLEMENT §10.3), are ANDed on most lists and
could not fetch several objects at once. A kind's ids are split over more calls only when
they would make the request target longer than :data:`MAX_TARGET` (about 100 service ids fit
in one) or answer more than a page. Ids are known for every object that existed before the
apply (``Step.id``, ``Step.parent_id``) and for every object it created (the writer records
them in :class:`~apimctl.applying.bodies.LiveIndex`); an object without one is looked up by
name (``filter=name:X``, one call each). Lists match filter values as substrings, so only the
objects asked for are kept; an id the set reply left out is asked for once more on its own
before the object is called missing.

**How it compares.** Each done step against the object read again, matched by id (by name
for a create without a known id): a delete must find it gone, a create or update must find no
difference left after normalise, the dialect's vocabulary, diff and the plan's ignore rules,
the comparison planning makes. References the API renders by id (a maintenance event's
endpoints, a plan's entitlements) are named from the objects read again and, for objects not
read again, from the ids the apply knows.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_plus, urlencode

from apimctl import kinds
from apimctl.api.quirks import as_list
from apimctl.applying.bodies import resolve_secrets
from apimctl.applying.calls import Client
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Contextual
from apimctl.kinds.dialects import comparable, dialect_of
from apimctl.kinds.ops import Key, Lookups
from apimctl.planning.diff import diff, ignored
from apimctl.plans.model import Plan, Step, address
from apimctl.plans.result import StepOutcome
from apimctl.state.live import PAGE_SIZE, lookups_of
from apimctl.state.normalise import Context, normalise

# Longest request target (path and query, URL-encoded) of one call: the 8 KB many gateways
# allow, less a margin (the reference server allows 16 KB).
MAX_TARGET = 7 * 1024

Raw = dict[str, list[dict[str, Any]]]


# --------------------------------------------------------------------------- what to read


@dataclass
class Wanted:
    """The top-level objects to read again, per kind name: by id, and by name where no id is
    known. Both keep the order the steps came in, without repeats. ``gone``: the ids of those
    the plan deletes (expected missing from the replies)."""

    ids: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)

    def add(self, kind: Kind, obj_id: str | None, name: str) -> None:
        where, value = (self.ids, obj_id) if obj_id else (self.names, name)
        found = where.setdefault(kind.name, [])
        if value not in found:
            found.append(value)


def top_of(step: Step, ids: Mapping[str, str]) -> tuple[Kind, str | None, str]:
    """The top-level object that holds ``step``'s object: its kind, its id if known, its name.

    A child's parent is the step's ``parent`` (its id recorded by the writer when the apply
    created or renamed it, else the id the plan carries)."""
    kind = kinds.get(step.kind)
    if kind.parent is None:
        return kind, step.id or ids.get(step.address), kinds.split_key(kind, step.key)[1]
    parent = kinds.get(kind.parent)
    parent_key = kinds.split_key(kind, step.key)[0] or ""
    parent_addr = step.parent or address(parent.name, parent_key)
    return parent, ids.get(parent_addr) or step.parent_id, kinds.split_key(parent, parent_key)[1]


def wanted(steps: Iterable[Step], ids: Mapping[str, str]) -> Wanted:
    """What reading again ``steps`` needs (temporary route steps need nothing: the object's own
    step says where it ends up)."""
    out = Wanted()
    for step in steps:
        if step.temporary:
            continue
        kind, obj_id, name = top_of(step, ids)
        out.add(kind, obj_id, name)
        if obj_id and step.action == "delete" and kind.name == step.kind:
            out.gone.add(obj_id)
    return out


@dataclass(frozen=True)
class ListCall:
    """One list call of the check: a top-level kind's path and its query."""

    kind: Kind
    params: tuple[tuple[str, str], ...]
    ids: tuple[str, ...] = ()  # the ids it asks for
    name: str = ""  # or the name it looks up

    @property
    def path(self) -> str:
        return self.kind.collection_path()


def _projection(kind: Kind) -> list[tuple[str, str]]:
    """The query of :func:`apimctl.state.live.read_raw` for ``kind``."""
    return [("fields", kind.fields_param())]


def _encoded(text: str) -> int:
    """Bytes of ``text`` in a query string (``quote_plus``: the longest common encoding)."""
    return len(quote_plus(text))


_SEPARATOR = _encoded("|")


def chunks(values: Sequence[str], budget: int, max_count: int = PAGE_SIZE) -> list[list[str]]:
    """``values`` in runs whose ``|``-joined text takes at most ``budget`` bytes of a query
    string and that answer at most ``max_count`` objects (one page); a value alone over the
    budget gets a run of its own."""
    out: list[list[str]] = []
    size = 0
    for value in values:
        cost = _encoded(value)
        if out and len(out[-1]) < max_count and size + _SEPARATOR + cost <= budget:
            out[-1].append(value)
            size += _SEPARATOR + cost
        else:
            out.append([value])
            size = cost
    return out


def _budget(kind: Kind, max_target: int) -> int:
    """What the ids of one call may take of ``max_target``: all but the path and the rest of
    the query (the projection, ``filter=id:``, paging)."""
    rest = [*_projection(kind), ("filter", "id:"), ("limit", str(PAGE_SIZE)), ("offset", "0")]
    return max_target - len(kind.collection_path()) - 1 - len(urlencode(rest))


def list_calls(want: Wanted, max_target: int = MAX_TARGET) -> list[ListCall]:
    """The list calls reading ``want``: as few as the ids allow, in the registry's order."""
    out: list[ListCall] = []
    for kind in kinds.TOP_LEVEL:
        base = _projection(kind)
        for run in chunks(want.ids.get(kind.name, []), _budget(kind, max_target)):
            out.append(ListCall(kind, (*base, ("filter", "id:" + "|".join(run))), tuple(run)))
        for name in want.names.get(kind.name, []):
            out.append(ListCall(kind, (*base, ("filter", f"{kind.identity}:{name}")), name=name))
    return out


# --------------------------------------------------------------------------- reading


async def _answer(client: Client, call: ListCall) -> list[dict[str, Any]]:
    items = await client.list_all(call.path, list(call.params), page_size=PAGE_SIZE,
                                  page_index=call.kind.page_index)
    if call.ids:
        asked = set(call.ids)
        return [i for i in items if str(i.get("id")) in asked]
    kind = call.kind
    return [i for i in items if kind.identity_of(str(i.get(kind.identity))) == kind.identity_of(call.name)]


async def read_again(client: Client, want: Wanted) -> Raw:
    """The raw objects of ``want``, per kind name (calls made concurrently). An id a set reply
    left out that should be there is asked for on its own once, so that a server answering
    sets differently never makes a present object look missing."""
    calls = list_calls(want)
    replies = await asyncio.gather(*(_answer(client, c) for c in calls))
    raw: Raw = {k.name: [] for k in kinds.TOP_LEVEL}
    for call, items in zip(calls, replies, strict=True):
        raw[call.kind.name].extend(items)
    missing = [ListCall(c.kind, (*_projection(c.kind), ("filter", f"id:{i}")), (i,))
               for c, items in zip(calls, replies, strict=True) if len(c.ids) > 1
               for i in sorted(set(c.ids) - want.gone - {str(x.get("id")) for x in items})]
    for call, items in zip(missing, await asyncio.gather(*(_answer(client, c) for c in missing)),
                           strict=True):
        raw[call.kind.name].extend(items)
    return raw


# --------------------------------------------------------------------------- what was read


@dataclass(frozen=True)
class Seen:
    """One object read again, in manifest shape (as :func:`apimctl.state.live.from_raw` reads
    it), with the context its normal form needs."""

    kind: str
    key: str
    id: str
    doc: dict[str, Any]
    context: Context


@dataclass
class Found:
    """The objects read again, by (kind, id) and by address."""

    by_id: dict[tuple[str, str], Seen] = field(default_factory=dict)
    by_address: dict[str, Seen] = field(default_factory=dict)

    def add(self, seen: Seen) -> None:
        self.by_id[(seen.kind, seen.id)] = seen
        self.by_address.setdefault(address(seen.kind, seen.key), seen)

    def of(self, step: Step, ids: Mapping[str, str]) -> Seen | None:
        """The object ``step`` is about: by its id (the plan's, or the one the apply created),
        else by its address."""
        obj_id = step.id or ids.get(step.address)
        if obj_id:
            return self.by_id.get((step.kind, obj_id))
        return self.by_address.get(step.address)


class KnownIds(Lookups):
    """Lookups of the objects read again, falling back to every id the apply knows (an object
    not read again, such as the endpoint a touched maintenance event links to)."""

    def __init__(self, read: Lookups, ids: Mapping[str, str]) -> None:
        super().__init__(read.keys)
        self._ids = ids
        self._known: dict[str, dict[str, Key]] | None = None

    def key(self, label: str, obj_id: Any) -> Key | None:
        found = super().key(label, obj_id)
        if found is None:
            found = self._reverse().get(label, {}).get(str(obj_id))
        return found

    def _reverse(self) -> dict[str, dict[str, Key]]:
        if self._known is None:
            self._known = {}
            for addr, obj_id in self._ids.items():  # later entries (new names) win
                label, _, key = addr.partition(":")
                self._known.setdefault(label, {})[obj_id] = key_names(key)
        return self._known


def key_names(key: str) -> Key:
    """``("a/b", "c")`` for the key ``a\\/b/c``: the names of a key, unescaped."""
    names: list[str] = []
    rest: str | None = key
    while rest is not None:
        head, tail = kinds.split_first(rest)
        if head is None:
            names.append(kinds.unescape_name(tail))
            rest = None
        else:
            names.append(kinds.unescape_name(head))
            rest = tail
    return tuple(names)


def found_in(raw: Raw, ids: Mapping[str, str]) -> Found:
    """The objects of ``raw`` (top-level objects with their children) in manifest shape."""
    lookups = KnownIds(lookups_of(raw), ids)
    found = Found()
    for kind in kinds.TOP_LEVEL:
        for item in raw.get(kind.name, []):
            _add(found, kind, item, lookups)
    return found


def _add(found: Found, kind: Kind, item: Mapping[str, Any], lookups: Lookups,
         parent: Mapping[str, Any] | None = None, parent_key: str | None = None,
         context: Context | None = None) -> None:
    """``item`` read by its kind, and its child objects, each in the context its siblings
    make (an endpoint's error sets), as the live read makes it."""
    key = kind.key_of(str(item.get(kind.identity)), parent_key)
    doc = kind.ops.read(item, lookups, parent).doc
    found.add(Seen(kind.name, key, str(item.get("id")), doc, context or Context()))
    listed = [(child, [i for i in as_list(item.get(child.manifest_key)) if isinstance(i, Mapping)])
              for child in kinds.children_of(kind)]
    siblings = {child.name: [str(i.get(child.identity, "")) for i in items] for child, items in listed}
    for child, items in listed:
        contextual = kinds.capability(child, Contextual)
        child_context = contextual.context(siblings) if contextual is not None else Context()
        for sub in items:
            _add(found, child, sub, lookups, item, key, child_context)


# --------------------------------------------------------------------------- comparing


def _ignore_patterns(plan: Plan, addr: str) -> list[str]:
    out = []
    for entry in plan.ignored:
        target = str(entry.get("target", ""))
        kind, _, rest = target.partition(":")
        key, sep, path = rest.rpartition(":")
        if sep and fnmatch.fnmatchcase(addr, f"{kind}:{key}"):
            out.append(path)
    return out


def remaining_changes(plan: Plan, step: Step, obj: Seen | None, env: Mapping[str, str]) -> str | None:
    """Why ``step`` has not converged, or ``None`` when the object read again (``obj``; ``None``
    when it is gone) matches it."""
    if step.temporary:
        return None  # a temporary route: its object's own step says where it ends up
    if step.action == "delete":
        return None if obj is None else "still exists"
    if obj is None:
        return "does not exist"
    kind = kinds.get(step.kind)
    desired = resolve_secrets(step, step.desired or {}, plan.secret_values, env)
    have, want = normalise(kind, obj.doc, obj.context), normalise(kind, desired, obj.context)
    comparable(kind, have, want, desired, dialect_of(plan.dialect))
    changes = diff(kind, have, want)
    changes, _ = ignored(changes, _ignore_patterns(plan, step.address))
    if not changes:
        return None
    paths = [c.path for c in changes]
    return "still differs: " + ", ".join(paths[:8]) + (", ..." if len(paths) > 8 else "")


def not_converged(plan: Plan, steps: Sequence[tuple[StepOutcome, Step]], found: Found,
                  env: Mapping[str, str], ids: Mapping[str, str]) -> list[StepOutcome]:
    """The done steps (each with its plan step) that the objects read again do not bear out."""
    out = []
    for outcome, step in steps:
        reason = remaining_changes(plan, step, found.of(step, ids), env)
        if reason is not None:
            out.append(StepOutcome(outcome.address, outcome.action, reason))
    return out
