"""``--max-affected-keys`` refuses a plan in words that agree with its counts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.errors import PlanError
from apimctl.planning.impact import check_affected_keys
from apimctl.plans.model import Impact, ImpactRead, Plan, Step


def _plan(keys: int) -> Plan:
    cut = Impact(f"{keys} on plan Gold", "tightens", "rateLimitCeiling", keys, None, (("plan:P/Gold", keys),))
    step = Step(action="update", kind="plan", key="P/Gold", id="1", impact=(cut,))
    return Plan(steps=[step], impact=ImpactRead(mode="auto", read=True, calls=1, items=keys))


@settings(max_examples=25, deadline=None)
@given(keys=st.integers(min_value=1, max_value=3000), data=st.data())
def test_the_refusal_counts_keys_in_words_that_agree(keys: int, data: st.DataObject) -> None:
    most = data.draw(st.integers(min_value=0, max_value=keys - 1))
    with pytest.raises(PlanError) as caught:
        check_affected_keys(_plan(keys), most)
    said = str(caught.value)
    noun = "key" if keys == 1 else "keys"
    assert f"the plan cuts off or tightens {keys} {noun}, more than --max-affected-keys {most}:" in said
    assert re.search(r"(?<!\d)1 keys", said) is None, said


def test_a_plan_within_the_bound_passes() -> None:
    check_affected_keys(_plan(1), 1)
