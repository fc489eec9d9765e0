"""Every recorded call decided twice, before and after a plan, and the changes grouped.

:func:`replay` streams the records through two :class:`~apimctl.replay.decide.Side` values
(the area as it is, the area as the plan would leave it). A call whose answer differs is
blamed on the plan change that causes it (:func:`blame`): from the step that now decides
differently and what the call was routed to, the change of that endpoint, plan, service,
package or maintenance event. Calls whose key the area does not know and calls no endpoint
matched on either side are counted apart, not blamed on the plan; so are bad records (their
first few located by file and line). Keys are never kept in what is reported: a key is
shown by its last four characters at most.
"""

from __future__ import annotations

from collections.abc import Iterable

from apimctl import kinds
from apimctl.plans.model import address
from apimctl.plans.replay import BAD_SHOWN, EXAMPLES, OTHER, Group, Replay, shown_key
from apimctl.replay.decide import Outcome, Side, keyed
from apimctl.replay.records import BadRecord, Record

STEPS = ("request", "route", "transport", "maintenance", "cors", "key", "entitlement", "limits", "forward")


def differing_step(before: Outcome, after: Outcome) -> str:
    """The step that now decides differently: the earlier of the two deciding steps."""
    if before.step == after.step:
        return before.step
    order = {name: place for place, name in enumerate(STEPS)}
    return min(before.step, after.step, key=lambda s: order.get(s, len(STEPS)))


def _key(kind: str, *names: str) -> str:
    parent: str | None = None
    for name in names:
        parent = kinds.join_key(parent, name)
    return address(kind, str(parent))


def candidates(step: str, outcomes: Iterable[Outcome], plan: tuple[str, str], changes: set[str]) -> list[str]:
    """The addresses of the changes that could decide ``step`` differently, most specific
    first: the endpoint and service for the steps an endpoint configures (route, transport,
    CORS, key), the maintenance events for maintenance, the key's plan and package first for
    entitlement and limits."""
    endpoints: list[str] = []
    services: list[str] = []
    outcomes = list(outcomes)
    for outcome in outcomes:
        if outcome.service and outcome.endpoint:
            endpoints.append(_key("endpoint", outcome.service, outcome.endpoint))
        if outcome.service:
            services.append(_key("service", outcome.service))
    plans = [_key("plan", *plan)] if all(plan) else []
    packages = [_key("package", plan[0])] if plan[0] else []
    if step == "maintenance":
        events = [_key("maintenanceEvent", o.event) for o in outcomes if o.event]
        return [*events, *sorted(c for c in changes if c.startswith("maintenanceEvent:")), *endpoints, *services]
    if step in ("entitlement", "limits"):
        return [*plans, *packages, *endpoints, *services]
    return [*endpoints, *services]


def blame(step: str, before: Outcome, after: Outcome, plan: tuple[str, str], changes: set[str]) -> str:
    """The plan change that makes the call's answer differ (``changes``: the plan's addresses)."""
    for found in candidates(step, (after, before), plan, changes):
        if found in changes:
            return found
    for service in (after.service, before.service):  # a change inside the service (an error set)
        if service:
            inside = sorted(c for c in changes if c.split(":", 1)[1].startswith(kinds.join_key(None, service) + "/"))
            if inside:
                return inside[0]
    return OTHER


def replay(records: Iterable[Record | BadRecord], before: Side, after: Side, changes: set[str],
           *, recorded_on: Side | None = None) -> Replay:
    """Decide every record on both sides; group the changed answers by plan change.
    ``recorded_on``: the side the calls were recorded against (where a call's key is put and
    whether the area knows it; ``before`` unless said)."""
    placed = recorded_on or before
    out = Replay()
    for record in records:
        if isinstance(record, BadRecord):
            out.bad += 1
            if len(out.bad_shown) < BAD_SHOWN:
                out.bad_shown.append(f"{record.where}: {record.reason}")
            continue
        out.calls += 1
        call = keyed(placed.areas, record)
        old = before.decide(call, record.status)
        new = after.decide(call, record.status)
        if record.key and not placed.knows(record.key):
            out.unknown_keys += 1
            continue
        if old.step == "route" and new.step == "route" and old.status == 596:
            out.unmatched += 1
            continue
        if (old.status, old.error) == (new.status, new.error):
            continue
        out.changed += 1
        step = differing_step(old, new)
        plan = placed.plan_of(record.key) if record.key else ("", "")
        change = blame(step, old, new, plan, changes)
        group = out.groups.setdefault((change, old.answer, new.answer, step),
                                      Group(change, old.answer, new.answer, step))
        group.calls += 1
        if record.key:
            group.keys.add(record.key)
            application = placed.application_of(record.key)
            if application:
                group.applications.add(application)
        example = f"{record.method} {record.path}" + (f" (key {shown_key(record.key)})" if record.key else "")
        if len(group.examples) < EXAMPLES and example not in group.examples:
            group.examples.append(example)
    return out


