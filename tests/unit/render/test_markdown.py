"""Markdown rendering of plans for pull-request comments (``apimctl.render.markdown``)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from markdown_it import MarkdownIt

from apimctl.plans.model import Change, Plan, Step, Unmanaged
from apimctl.render.markdown import MAX_ROWS, cell, code, render_plan

from .render_plans import big_plan, mixed_plan, no_change_plan

Golden = Callable[[str, str], None]

_md = MarkdownIt("commonmark").enable("table")


def _details_balanced(text: str) -> bool:
    """Every <details> is closed, and none is cut or nested."""
    depth = 0
    for tag in re.findall(r"</?details>", text):
        depth += 1 if tag == "<details>" else -1
        if depth not in (0, 1):
            return False
    return depth == 0


def test_mixed_plan_matches_golden(golden: Golden) -> None:
    golden("mixed.md", render_plan(mixed_plan()))


def test_no_changes_matches_golden(golden: Golden) -> None:
    golden("no_changes.md", render_plan(no_change_plan()))


def test_summary_table_counts() -> None:
    out = render_plan(mixed_plan())
    assert "| Create | Update | Delete | Unmanaged |\n|---:|---:|---:|---:|\n| 2 | 2 | 1 | 2 |\n" in out
    cells = re.findall(r"<td[^>]*>(\d+)</td>", _md.render(out))
    assert cells == ["2", "2", "1", "2"]


def test_risk_alert_lists_deletes_and_limit_changes() -> None:
    out = render_plan(mixed_plan())
    alert = out.split("> [!WARNING]\n", 1)[1].split("\n\n", 1)[0]
    assert "This plan deletes 1 object and changes 2 limits." in alert
    assert "> - delete role `Interns`" in alert
    assert "> - plan `Weather Partners/Gold`: `rateLimitCeiling` `100000` → `50000`" in alert
    assert "qpsLimitKeyOverrideAllowed" in alert
    assert "description" not in alert  # not a limit


@pytest.mark.parametrize("plan", [
    Plan(steps=[Step("update", "endpoint", "W/F", id="e", changes=(Change("rateLimitCeiling", 1, 2),))]),
    Plan(steps=[Step("create", "plan", "P/Gold", desired={"name": "Gold", "rateLimitCeiling": 5})]),
    Plan(steps=[Step("update", "plan", "P/Gold", id="p", changes=(Change("description", "a", "b"),))]),
    no_change_plan(),
], ids=["endpoint-field-of-same-name", "plan-create", "plan-description", "no-change"])
def test_no_risk_alert_for_safe_plans(plan: Plan) -> None:
    assert "[!WARNING]" not in render_plan(plan)


@pytest.mark.parametrize("path", ["rateLimitPeriod", "qpsLimitCeiling", "maxNumKeysAllowed",
                                  "rateLimitExempt", "qpsLimitExempt", "responseFilterOverrideAllowed"])
def test_plan_limit_fields_are_risky(path: str) -> None:
    plan = Plan(steps=[Step("update", "plan", "P/Gold", id="p", changes=(Change(path, 1, 2),))])
    assert "> [!WARNING]\n> This plan changes 1 limit." in render_plan(plan)


def test_details_per_step() -> None:
    out = render_plan(mixed_plan())
    assert "<details><summary>~ update endpoint Weather/Current (5 changes)</summary>" in out
    assert "<details><summary>+ create service Weather (3 fields)</summary>" in out
    assert "<details><summary>- delete role Interns</summary>" in out
    assert "| `cors.maxAge` | `60` | `120` |" in out
    assert _details_balanced(out)


def test_summary_text_is_html_escaped() -> None:
    plan = Plan(steps=[Step("update", "service", "<b>&co", id="s", changes=(Change("version", "1", "2"),))])
    assert "<summary>~ update service &lt;b&gt;&amp;co (1 change)</summary>" in render_plan(plan)


def test_pipes_and_backticks_survive_in_tables() -> None:
    plan = Plan(steps=[Step("update", "endpoint", "W/F", id="e", changes=(
        Change("cors.domainsAllowed", ["a|b"], ["``x`|y"]),))])
    rendered = _md.render(render_plan(plan))
    assert '<td><code>[&quot;a|b&quot;]</code></td>' in rendered
    assert '<td><code>[&quot;``x`|y&quot;]</code></td>' in rendered


def test_code_span_fencing() -> None:
    assert code("plain") == "`plain`"
    assert code("a`b") == "``a`b``"
    assert code("`x``") == "``` `x`` ```"
    assert code("two\nlines") == "`two lines`"
    assert cell("a|b") == "`a\\|b`"
    for text in ["a`b", "`x``", "``", " lead", "a|b`c"]:
        assert _md.renderInline(code(text)) == f"<code>{html.escape(text, quote=False)}</code>"


def test_long_values_are_cut() -> None:
    plan = Plan(steps=[Step("update", "service", "S", id="s", changes=(Change("description", "a" * 500, "b"),))])
    out = render_plan(plan)
    assert "a" * 500 not in out
    assert "a" * 100 in out and "…" in out


def test_rows_per_step_are_capped() -> None:
    desired = {f"field{i:03d}": i for i in range(100)}
    out = render_plan(Plan(steps=[Step("create", "service", "Wide", desired=desired)]))
    assert "(100 fields)" in out
    assert "| ... and 61 more | |" in out
    assert out.count("| `field") == MAX_ROWS - 1


def test_huge_plan_stays_under_limit_and_summarises_the_rest() -> None:
    plan = big_plan(updates=4000, creates=400, deletes=0)
    out = render_plan(plan)
    assert len(out) <= 60_000
    assert _details_balanced(out)
    shown = out.count("<details><summary>")
    assert 100 < shown < 4400
    match = re.search(r"\.\.\. and (\d+) more objects: (\d+) updates, (\d+) creates", out)
    assert match, out[-500:]
    assert int(match.group(1)) == 4400 - shown
    assert int(match.group(2)) + int(match.group(3)) == 4400 - shown
    assert "| 400 | 4000 | 0 | 0 |" in out


def test_remaining_counts_list_the_largest_first() -> None:
    plan = Plan(steps=[Step("delete", "service", f"S{i}", id=str(i)) for i in range(3)]
                + [Step("update", "service", f"U{i}", id=str(i), changes=(Change("version", "1", "2"),))
                   for i in range(2000)])
    out = render_plan(plan, limit=5000)
    assert re.search(r"\.\.\. and \d+ more objects: \d+ updates\b", out)


@pytest.mark.parametrize("limit", [2_000, 3_500, 10_000, 60_000])
@pytest.mark.parametrize("sizes", [(0, 0, 0), (1, 1, 1), (300, 30, 3), (50, 0, 2000)])
def test_any_limit_is_respected(limit: int, sizes: tuple[int, int, int]) -> None:
    plan = big_plan(*sizes)
    plan.unmanaged = [Unmanaged("service", f"Legacy {i}", str(i)) for i in range(sizes[0] * 3)]
    plan.warnings = [f"warning number {i}" for i in range(sizes[1])]
    out = render_plan(plan, limit=limit)
    assert len(out) <= limit
    assert _details_balanced(out)
    assert out.startswith("## apimctl plan\n")
    assert f"| {sizes[1]} | {sizes[0]} | {sizes[2]} | {sizes[0] * 3} |" in out


def test_many_deletes_keep_the_alert_and_count_the_rest() -> None:
    out = render_plan(big_plan(0, 0, 3000))
    assert len(out) <= 60_000
    assert "> [!WARNING]\n> This plan deletes 3000 objects." in out
    assert re.search(r"> - \.\.\. and \d+ more\n", out)


def test_many_unmanaged_are_counted_not_listed() -> None:
    plan = Plan(unmanaged=[Unmanaged("service", f"Legacy service number {i}", str(i)) for i in range(20_000)])
    out = render_plan(plan)
    assert len(out) <= 60_000
    assert "**Unmanaged:** 20000 objects left alone" in out


def test_tiny_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2000"):
        render_plan(Plan(), limit=100)
