"""Caller impact and the reviewer's one-pass reading in the rendered plan: impact lines under
their step, the Markdown warning listing every change that cuts off or tightens keys, a
large plan grouped by service and package, the note saying where the whole plan is, and
entitlement and list changes in words."""

from __future__ import annotations

import json

from apimctl.drift import attribute
from apimctl.kinds.plan import entitlement_words
from apimctl.plans.drift import DriftReport
from apimctl.plans.model import Change, Impact, ImpactRead, Plan, Step
from apimctl.render.drift import render_drift
from apimctl.render.markdown import render_plan as render_markdown
from apimctl.render.style import list_words
from apimctl.render.text import render_plan as render_text
from apimctl.state.live import LiveState

CUT = Impact("5 keys (3 applications) on plan Pro lose access to Ordering/Track order",
             "cuts_off", "services[Ordering].endpoints[Track order]", 5, 3, (("plan:Shop/Pro", 5),))
TOLD = Impact("goes with it: 2 endpoints, 1 error set")


def _plan() -> Plan:
    return Plan(steps=[
        Step("update", "plan", "Shop/Pro", id="p1", parent="package:Shop", parent_id="s1",
             changes=(Change("services[Ordering].endpoints[Track order]",
                             {"undefinedMethodsAllowed": True, "methods": []}, None),),
             impact=(CUT,)),
        Step("delete", "service", "Legacy", id="x1", impact=(TOLD,)),
    ], impact=ImpactRead("auto", True, 1, 3, True))


def test_text_shows_impact_lines_the_cost_and_entitlements_in_words() -> None:
    text = render_text(_plan())
    assert ("  ~ update plan \"Shop/Pro\"\n      - Pro loses Ordering/Track order\n"
            f"      ! {CUT.text}\n") in text
    assert f"  - delete service \"Legacy\"\n      # {TOLD.text}\n" in text
    assert ("Caller impact: 3 applications read in 1 list call; the plan cuts off or tightens "
            "5 keys.\n") in text


def test_markdown_warns_of_every_change_that_cuts_off_keys() -> None:
    markdown = render_markdown(_plan())
    alert = next(p for p in markdown.split("\n\n") if p.startswith("> [!WARNING]"))
    assert "has 1 change that cut off or tighten keys (5 keys in all)" in alert
    assert f"> - plan `Shop/Pro`: {CUT.text}" in alert
    assert "**Impact:**\n\n- ⚠️ 5 keys (3 applications)" in markdown


def _large() -> list[Step]:
    steps = []
    for n in range(12):  # interleaved as a plan's order may interleave them
        steps.append(Step("update", "endpoint", f"S{n % 3}/E{n}", id=f"e{n}", parent=f"service:S{n % 3}",
                          changes=(Change("description", "a", "b"),)))
        steps.append(Step("update", "plan", f"P{n % 2}/Plan{n}", id=f"p{n}", parent=f"package:P{n % 2}",
                          changes=(Change("notes", "a", "b"),)))
    return steps


def test_a_large_plan_is_grouped_by_service_and_package() -> None:
    markdown = render_markdown(Plan(steps=_large()))
    headings = [line for line in markdown.splitlines() if line.startswith("#### ")]
    assert headings == ["#### service `S0`", "#### package `P0`", "#### service `S1`",
                        "#### package `P1`", "#### service `S2`"]
    s1 = markdown.index("#### service `S1`")
    assert markdown.index("S1/E1") > s1 and markdown.index("S1/E4") > s1
    assert "#### " not in render_markdown(Plan(steps=_large()[:20]))


def test_a_cut_comment_says_where_the_whole_plan_is() -> None:
    steps = [Step("update", "service", f"S{n:03d}", id=f"s{n}",
                  changes=(Change("description", "x" * 100, "y" * 100),)) for n in range(200)]
    markdown = render_markdown(Plan(steps=steps), limit=4000, saved="plan.json")
    assert "(not shown: comment length limit; the whole plan is in `plan.json`)." in markdown
    assert "the whole plan: `apimctl plan --format json`" in render_markdown(Plan(steps=steps), limit=4000)


def test_words_for_entitlements_and_lists() -> None:
    assert entitlement_words("Pro", "services[Ordering]", None, {"endpoints": {}}) == "Pro gains Ordering"
    assert entitlement_words("Pro", "services[Ordering].endpoints[Place order].methods",
                             ["create", "list"], ["create", "cancel"]) == (
        "Pro loses Ordering/Place order method list; gains Ordering/Place order method cancel")
    assert entitlement_words("Pro", "services[Ordering].endpoints[E].undefinedMethodsAllowed",
                             False, True) == "Pro may call any method of Ordering/E"
    assert list_words(["a", "b"], ["b", "c"]) == 'added "c"; removed "a"'
    assert list_words(["a", "b"], ["b", "a"]) is None  # only the order changed: both lists shown
    assert list_words([], ["a"]) is None and list_words([{"x": 1}], [{"x": 2}]) is None


def test_drift_tells_the_impact_of_each_change_outside_git() -> None:
    raised = Impact("342 keys on plan Gold: 342 follow the plan's ceiling: 5000 calls per day "
                    "(was 1000 calls per day)", "loosens", "rateLimitCeiling", 342, None,
                    (("plan:Shop/Gold", 342),))
    step = Step("update", "plan", "Shop/Gold", id="p1", changes=(Change("rateLimitCeiling", 5000, 1000),),
                impact=(raised,))
    plan = Plan(steps=[step])
    report = DriftReport(plan, attribute(plan.steps, LiveState(), {}))
    text = render_drift(report, "text")
    assert f"    rateLimitCeiling: git 1000, live 5000\n    impact of the change outside git: {raised.text}\n" in text
    (difference,) = json.loads(render_drift(report, "json"))["differences"]
    assert difference["impact"][0]["keys"] == 342 and difference["impact"][0]["effect"] == "loosens"
    assert "Impact of the change outside git:\n\n- 342 keys on plan Gold: 342 follow" in render_drift(
        report, "markdown")
