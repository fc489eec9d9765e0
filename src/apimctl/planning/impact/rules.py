"""Who each change of a plan affects: the rules, one function per kind of change (pure).

:func:`impacts_of` gives a step's :class:`~apimctl.plans.model.Impact` lines from the live
facts (:class:`~apimctl.planning.impact.world.World`) and the keys
(:class:`~apimctl.planning.impact.world.KeySource`):

- a plan's entitlements removed or added (a service, an endpoint, methods): the keys on the
  plan that lose or gain access (the kind's :class:`~apimctl.kinds.capabilities.Granting`);
- a change of a field governing the plan's keys, by the rule the kind gives for it
  (:class:`~apimctl.kinds.capabilities.KeyRules`, in :mod:`apimctl.kinds.plan`): a ceiling
  lowered or raised (the keys that follow the plan's ceiling, those that keep a higher one of
  their own as the plan allows key overrides, those the platform will clamp, named by id,
  those with a lower one or exempt); the period of a limit changed; exempt flags and
  key-override flags set or removed; the number of keys a member may hold below what members
  already hold; the plan made inactive;
- a plan, package, service or endpoint deleted: the keys entitled to it, and what goes with it;
- an endpoint's route changed (``requestPathAlias``, public domains, supported methods): the
  keys entitled to it and what their callers get; a service's ``qpsLimitOverall`` lowered.

A platform limit of 0 (or none) is no limit (SUPPLEMENT §11). A key's own ceiling counts
above its plan's only where the plan allows key overrides; otherwise the platform clamps it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.kinds.capabilities import Granting, KeyRule, KeyRules, Limit, Routed
from apimctl.planning.impact.deletes import goes_with
from apimctl.planning.impact.world import KeySource, PlanFacts, World
from apimctl.plans.model import Change, Impact, Step
from apimctl.state.keys import KeyFacts

SHOWN_IDS = 10


# --- words ------------------------------------------------------------------------------------


def count(number: int, noun: str) -> str:
    """``1 key``, ``0 keys``, ``3 keys``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _names(plans: Sequence[PlanFacts]) -> str:
    names = ", ".join(p.name for p in plans)
    return f"plan {names}" if len(plans) == 1 else f"plans {names}" if plans else "no plan"


def _limit(value: Any) -> float:
    return float(value) if isinstance(value, int) and value > 0 else math.inf


def _they(count: int, one: str, many: str) -> str:
    """``1 follows``, ``3 follow``: a count and its verb."""
    return f"{count} {one if count == 1 else many}"


def _amount(value: Any, per: Any) -> str:
    if _limit(value) == math.inf:
        return "no limit"
    return f"{value} calls per {per}"


class Reach:
    """The keys of some plans, counted: per plan, in all, and their applications."""

    def __init__(self, found: Iterable[tuple[PlanFacts, list[KeyFacts]]], owners: bool) -> None:
        self.by_plan = [(p, ks) for p, ks in found]
        self.keys = [k for _, ks in self.by_plan for k in ks]
        self.owners = owners

    @property
    def plans(self) -> tuple[tuple[str, int], ...]:
        return tuple((p.address, len(ks)) for p, ks in self.by_plan)

    @property
    def applications(self) -> int | None:
        return len({k.application for k in self.keys if k.application}) if self.owners else None

    def who(self) -> str:
        apps = self.applications
        owned = f" ({count(apps, 'application')})" if apps is not None else ""
        return f"{count(len(self.keys), 'key')}{owned} on {_names([p for p, _ in self.by_plan])}"

    def verb(self, one: str, many: str) -> str:
        """The verb agreeing with the number of keys (``loses``, ``lose``)."""
        return one if len(self.keys) == 1 else many

    def impact(self, text: str, effect: str, path: str | None) -> Impact:
        return Impact(text, effect, path, len(self.keys), self.applications, self.plans)


def _reach(plans: Sequence[PlanFacts], keys: KeySource, *, owners: bool = True) -> Reach:
    return Reach(((p, keys.of(p, owners=owners)) for p in plans), keys.owners_known)


# --- entry ------------------------------------------------------------------------------------


def impacts_of(step: Step, world: World, keys: KeySource) -> tuple[Impact, ...]:
    """The impact lines of ``step`` (empty when nothing in it governs calls), and what goes
    with it when it deletes (:func:`apimctl.planning.impact.deletes.goes_with`)."""
    going = goes_with(step, world)
    return _governing(step, world, keys) + ((going,) if going is not None else ())


def _governing(step: Step, world: World, keys: KeySource) -> tuple[Impact, ...]:
    """By the kind's data: an object keys are issued for (``ROLES.keys_for``: a plan), a
    deleted parent of such objects (a package), an object keys call (``Kind.callers.called``: a
    service, an endpoint)."""
    if step.action == "create":
        return ()
    kind = kinds.get(step.kind)
    if kind is kinds.ROLES.keys_for:
        plan = world.plan(step)
        if plan is None:
            return ()
        if step.action == "delete":
            reach = _reach([plan], keys)
            return (reach.impact(f"{reach.who()} {reach.verb('loses', 'lose')} access to everything the plan entitles",
                                 "cuts_off", None),)
        return tuple(i for c in step.changes for i in _plan_change(plan, step, c, keys))
    if step.action == "delete" and any(c is kinds.ROLES.keys_for for c in kinds.children_of(kind)):
        plans = world.of_package(step.key)
        reach = _reach(plans, keys)
        return (reach.impact(f"{reach.who()} {reach.verb('loses', 'lose')} access to everything the package's plans entitle",
                             "cuts_off", None),)
    if kind.callers.called:
        return _called(step, kind, world, keys)
    return ()


# --- plans ------------------------------------------------------------------------------------


def _after(plan: PlanFacts, step: Step, name: str) -> Any:
    """The plan's field ``name`` once the step is applied."""
    change = next((c for c in step.changes if c.path == name), None)
    return change.after if change is not None else plan.doc.get(name)


def _per(plan: PlanFacts, step: Step, limit: Limit) -> Any:
    """The period the calls of ``limit`` are counted over once the step is applied."""
    return (_after(plan, step, limit.period) if limit.period else None) or limit.per


def _plan_change(plan: PlanFacts, step: Step, change: Change, keys: KeySource) -> list[Impact]:
    """By the kind's rules: its entitlements (:class:`Granting`), the fields governing its
    keys (:class:`KeyRules`)."""
    path = change.path
    kind = kinds.get(step.kind)
    granting = kinds.capability(kind, Granting)
    found = granting.entitlement(path) if granting is not None else None
    if granting is not None and found is not None:
        return _entitlement(plan, change, found, granting, keys)
    rules = kinds.capability(kind, KeyRules)
    rule = rules.key_rule(path) if rules is not None else None
    if rule is None:
        return []
    return _key_rule(plan, step, change, rule, keys)


def _key_rule(plan: PlanFacts, step: Step, change: Change, rule: KeyRule,
              keys: KeySource) -> list[Impact]:
    limit = rule.limit
    if rule.effect == "allowance":
        return _allowance(plan, change, keys)
    if rule.effect == "stops":
        if change.after != rule.value:
            return []
        reach = _reach([plan], keys)
        return [reach.impact(f"{reach.who()} {reach.verb('stops', 'stop')} working (the plan is made "
                             f"{rule.value})", "cuts_off", change.path)]
    if limit is None:
        return []
    if rule.effect == "ceiling":
        return _ceiling(plan, step, change, limit, keys)
    if rule.effect == "exempt":
        return _exempt(plan, change, limit, keys)
    if rule.effect == "override":
        return _override(plan, step, change, limit, keys)
    return _period(plan, change, limit, keys)


def _entitlement(plan: PlanFacts, change: Change, found: tuple[str, str | None, str | None],
                 granting: Granting, keys: KeySource) -> list[Impact]:
    service, endpoint, field = found
    reach = _reach([plan], keys)
    if field == "undefinedMethodsAllowed":
        where = f"{service}/{endpoint}"
        if change.after is False:
            return [reach.impact(f"{reach.who()} may call only the listed methods of {where}",
                                 "cuts_off", change.path)]
        return [reach.impact(f"{reach.who()} may call any method of {where}", "grants", change.path)]
    whole = endpoint is None and (change.before is None or change.after is None)
    grants = granting.grants  # (endpoint, method or ``*``) pairs
    before = grants(change.before, endpoint, field)
    after = grants(change.after, endpoint, field)
    out = []
    for pairs, verb, effect in ((before - after, "lose", "cuts_off"), (after - before, "gain", "grants")):
        if pairs:
            what = service if whole else _what(service, pairs)
            out.append(reach.impact(f"{reach.who()} {reach.verb(verb + 's', verb)} access to {what}", effect, change.path))
    return out


def _what(service: str, pairs: set[tuple[str, str]]) -> str:
    """``Ordering/Track order``, ``Ordering/Place order methods create, list``."""
    methods = sorted(m for _, m in pairs if m != "*")
    if methods:
        endpoint = sorted({e for e, m in pairs if m != "*"})[0]
        return f"{service}/{endpoint} method{'s' if len(methods) > 1 else ''} {', '.join(methods)}"
    endpoints = sorted(e for e, _ in pairs if e)
    return ", ".join(f"{service}/{e}" for e in endpoints) or service


def _ceiling(plan: PlanFacts, step: Step, change: Change, limit: Limit,
             keys: KeySource) -> list[Impact]:
    found = keys.of(plan)
    per = _per(plan, step, limit)
    new, old = change.after, change.before
    lowered = _limit(new) < _limit(old)
    allowed = _after(plan, step, limit.override) is True
    follow = higher = lower = exempt = 0
    clamped: list[str] = []
    for key in found:
        own = key.ceiling(limit.name)
        if key.exempt(limit.name):
            exempt += 1
        elif own is None:
            follow += 1
        elif _limit(own) > _limit(new):
            if allowed:
                higher += 1
            else:
                clamped.append(key.id)
        else:
            lower += 1
    reach = Reach([(plan, found)], keys.owners_known)
    parts = [f"{_they(follow, 'follows', 'follow')} the plan's ceiling: "
             f"{_amount(new, per)} (was {_amount(old, per)})"]
    if higher:
        parts.append(f"{_they(higher, 'keeps', 'keep')} a higher ceiling of {'its' if higher == 1 else 'their'} "
                     "own (the plan allows key overrides)")
    if clamped:
        parts.append(f"{_they(len(clamped), 'has', 'have')} a higher ceiling of "
                     f"{'its' if len(clamped) == 1 else 'their'} own, which the plan does not allow")
    if lower:
        parts.append(f"{_they(lower, 'has', 'have')} a lower ceiling of {'its' if lower == 1 else 'their'} own")
    if exempt:
        parts.append(f"{_they(exempt, 'is', 'are')} exempt")
    plan_exempt = _after(plan, step, limit.exempt) is True
    if plan_exempt:
        parts.append("the plan is exempt, so the ceiling does not apply")
    affected = 0 if plan_exempt else follow + (len(clamped) if lowered else 0)
    effect = "tightens" if lowered else "loosens"
    out = [Impact(f"{reach.who()}: {'; '.join(parts)}", effect, change.path, affected,
                  reach.applications, ((plan.address, affected),))]
    if clamped and lowered and not plan_exempt:
        out.append(_clamp(plan, clamped, limit.ceiling, _amount(new, per)))
    return out


def _clamp(plan: PlanFacts, ids: list[str], path: str, to: str) -> Impact:
    shown = ", ".join(ids[:SHOWN_IDS]) + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")
    return Impact(f"the platform will clamp {count(len(ids), 'key')} on plan {plan.name} to {to}: "
                  f"{shown}", "tightens", path, len(ids), None, ((plan.address, len(ids)),),
                  tuple(ids))


def _exempt(plan: PlanFacts, change: Change, limit: Limit, keys: KeySource) -> list[Impact]:
    found = keys.of(plan)
    limited = [k for k in found if not k.exempt(limit.name)]
    reach = Reach([(plan, found)], keys.owners_known)
    noun = limit.noun
    if change.after is True:
        return [Impact(f"{reach.who()}: {len(limited)} no longer have a {noun} limit",
                       "loosens", change.path, len(limited), None, ((plan.address, len(limited)),))]
    return [Impact(f"{reach.who()}: {len(limited)} get a {noun} limit again "
                   f"({len(found) - len(limited)} exempt of their own)", "tightens", change.path,
                   len(limited), None, ((plan.address, len(limited)),))]


def _override(plan: PlanFacts, step: Step, change: Change, limit: Limit,
              keys: KeySource) -> list[Impact]:
    ceiling = _after(plan, step, limit.ceiling)
    what = limit.name
    above = [k.id for k in keys.of(plan) if not k.exempt(what) and k.ceiling(what) is not None
             and _limit(k.ceiling(what)) > _limit(ceiling)]
    to = _amount(ceiling, _per(plan, step, limit))
    if change.after is True:
        return [Impact(f"{count(len(above), 'key')} on plan {plan.name} may use their own higher "
                       f"ceiling again (the plan's is {to})", "loosens", change.path, len(above),
                       None, ((plan.address, len(above)),), tuple(above))]
    return [_clamp(plan, above, change.path, to)] if above else [
        Impact(f"no key on plan {plan.name} has a higher ceiling of its own than {to}", "informs",
               change.path, 0, None, ((plan.address, 0),))]


def _period(plan: PlanFacts, change: Change, limit: Limit, keys: KeySource) -> list[Impact]:
    found = keys.of(plan)
    limited = [k for k in found if not k.exempt(limit.name)]
    rank = {p: i for i, p in enumerate(limit.periods)}
    shorter = rank.get(str(change.after), 0) < rank.get(str(change.before), 0)
    reach = Reach([(plan, found)], keys.owners_known)
    return [Impact(f"{reach.who()}: {len(limited)} count their calls per {change.after} "
                   f"(was per {change.before})", "tightens" if shorter else "loosens",
                   change.path, len(limited), None, ((plan.address, len(limited)),))]


def _allowance(plan: PlanFacts, change: Change, keys: KeySource) -> list[Impact]:
    found = keys.of(plan, owners=True)
    new = _limit(change.after)
    held: dict[str, int] = {}
    for key in found:
        if key.member:
            held[key.member] = held.get(key.member, 0) + 1
    over = {m: n for m, n in held.items() if n > new}
    extra = sum(over.values())
    if not keys.owners_known:
        return []
    return [Impact(f"{count(len(over), 'member')} already {'holds' if len(over) == 1 else 'hold'} "
                   f"more than {change.after} key{'' if change.after == 1 else 's'} on plan "
                   f"{plan.name} ({count(extra, 'key')}): they keep them, and get no new one",
                   "informs", change.path, extra, None, ((plan.address, extra),))]


# --- services and endpoints -------------------------------------------------------------------


def _entitling(kind: Kind, key: str, world: World) -> list[PlanFacts]:
    """The live plans entitling the object ``kind:key``: a top-level one by its key, a nested
    one by its parent's key and its own name."""
    if kind.parent is None:
        return world.entitling(key)
    parent, name = kinds.split_first(key)
    return world.entitling(parent or "", name)


def _called(step: Step, kind: Kind, world: World, keys: KeySource) -> tuple[Impact, ...]:
    """A deleted object keys call (a service, an endpoint), one whose shared QPS limit changes
    (``Kind.callers.shared_qps``), or one whose route no longer takes some calls (the plans entitling
    it are looked up only then: a large plan updates many endpoints)."""
    if step.action == "delete":
        reach = _reach(_entitling(kind, step.key, world), keys)
        return (reach.impact(f"{reach.who()} {reach.verb('loses', 'lose')} access to {step.key}",
                             "cuts_off", None),)
    return _shared(step, kind, world, keys) + _moved(step, kind, world, keys)


def _shared(step: Step, kind: Kind, world: World, keys: KeySource) -> tuple[Impact, ...]:
    change = next((c for c in step.changes if kind.callers.shared_qps and c.path == kind.callers.shared_qps), None)
    if change is None:
        return ()
    reach = _reach(_entitling(kind, step.key, world), keys, owners=False)
    lowered = _limit(change.after) < _limit(change.before)
    text = (f"{reach.who()} {reach.verb('shares', 'share')} {_amount(change.after, 'second')} "
            f"to {step.key} (was {_amount(change.before, 'second')})")
    return (reach.impact(text, "tightens" if lowered else "loosens", change.path),)


def _moved(step: Step, kind: Kind, world: World, keys: KeySource) -> tuple[Impact, ...]:
    routed = kinds.capability(kind, Routed)
    if routed is None:
        return ()
    moving = [c for c in step.changes if c.path in routed.route_fields]
    gone = [t for c in moving for t in routed.cut_off(c.path, c.before, c.after)]
    if not gone:
        return ()
    reach = _reach(_entitling(kind, step.key, world), keys)
    paths = ", ".join(c.path for c in moving)
    return (reach.impact(f"{reach.who()} {reach.verb('calls', 'call')} {step.key}: {'; '.join(gone)}",
                         "cuts_off", paths),)
