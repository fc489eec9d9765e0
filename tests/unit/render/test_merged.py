"""One comment for several areas' plans (``apimctl.render.merged``): within the limit
whatever the plans, every area in the table, the largest fold cut first."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.plans.model import Plan
from apimctl.render.merged import AreaReview, render_merged

from .render_plans import big_plan, mixed_plan, no_change_plan

SIZES = st.tuples(st.integers(0, 80), st.integers(0, 40), st.integers(0, 3))
NAMES = ["dev", "qa", "staging", "prod", "eu|1", "<b>x</b>"]


def _area(name: str, plan: Plan | None, refusals: tuple[str, ...] = ()) -> AreaReview:
    source = f"plans/{name}.json" if name.isalnum() else "plans/other.json"  # a code span there
    return AreaReview(name, source, plan, refusals)


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(SIZES, min_size=1, max_size=len(NAMES)), missing=st.sets(st.integers(0, 5)),
       limit=st.integers(2_000, 65_536))
def test_the_comment_fits_and_names_every_area(sizes: list[tuple[int, int, int]], missing: set[int],
                                               limit: int) -> None:
    areas = [_area(NAMES[i], None if i in missing else big_plan(*size)) for i, size in enumerate(sizes)]
    out = render_merged(areas, limit=limit, artifacts="https://github.com/o/r/actions/runs/1")
    assert len(out) <= limit
    assert out.count("<details>") == out.count("</details>")
    assert "<b>" not in out  # a name is text, not markup
    rows = re.findall(r"^\| \*\*(.+?)\*\* \|", out, re.MULTILINE)
    folds = re.findall(r"^<details><summary>(?:⛔ )?(.+?): ", out, re.MULTILINE)
    planned = len(areas) - len([i for i in missing if i < len(sizes)])
    if limit >= 8_000:  # room for the table and a line per area: every area shown
        assert len(rows) == len(areas) and len(folds) == planned
    else:  # else the plans give way to the table, never the table to the plans
        assert len(folds) in (0, planned) and (len(rows) == len(areas) or not folds)
    if "Not shown (comment length limit)" in out or "(not shown: comment length limit" in out:
        assert "[the workflow run's artifacts](https://github.com/o/r/actions/runs/1)" in out


def test_the_largest_plan_is_cut_first() -> None:
    small, large = mixed_plan(), big_plan(400, 100)
    out = render_merged([_area("small", small), _area("large", large), _area("none", no_change_plan())],
                        limit=30_000)
    assert len(out) <= 30_000
    large_fold = out[out.index("<details><summary>large: "):out.index("<details><summary>none: ")]
    small_fold = out[out.index("<details><summary>small: "):large_fold and out.index("<details><summary>large: ")]
    assert "(not shown: comment length limit; the whole plan is in `plans/large.json`)" in large_fold
    assert "not shown" not in small_fold.lower()
    assert out.rstrip().endswith("the whole plans: the saved plan files.")


def test_refusals_come_first_and_mark_the_fold() -> None:
    out = render_merged([_area("dev", mixed_plan()),
                         _area("prod", mixed_plan(), ("--max-deletes 0 (1 to delete)",)),
                         _area("qa", None)])
    alert = out[out.index("> [!CAUTION]"):out.index("| Area |")]
    assert "Apply would stop at **prod**: 2 areas cannot be applied as planned." in alert
    assert "> - **prod**: --max-deletes 0 (1 to delete)" in alert
    assert "> - **qa**: no plan" in alert
    assert out.index("> [!CAUTION]") < out.index("| Area |") < out.index("<details>")
    assert "<details><summary>⛔ prod: 2 to create, 2 to update, 1 to delete</summary>" in out
    assert "<details><summary>dev: 2 to create" in out
    assert "| **prod** | 2 | 2 | 1 | 2 | not made | ⛔ refused: --max-deletes 0 (1 to delete) |" in out
