"""Property tests of the field-level diff with DeepDiff as an independent oracle.

``apimctl.planning.diff`` is written by hand (it knows keyed collections, opaque maps,
collections a manifest leaves alone, and secrets, and it produces the plan's ``Change``
values); DeepDiff knows none of that and compares plain nested data. Over generated pairs of
endpoints, brought into their normal form, the two must agree: the diff is empty exactly when
DeepDiff finds no difference, and every path one reports lies on a path the other reports
(the diff stops at a list, an opaque map or a whole keyed item; DeepDiff goes down to the
element)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deepdiff import DeepDiff
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl import kinds
from apimctl.kinds import Kind
from apimctl.planning.diff import diff
from apimctl.state.normalise import Context, normalise

KIND = kinds.ENDPOINT
NAMES = st.sampled_from(["a", "b", "c"])
TEXT = st.sampled_from(["", "x", "y"])
_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[([^\]]+)\]")


@st.composite
def endpoints(draw: st.DrawFn) -> dict[str, Any]:
    """An endpoint in manifest shape, each optional part present or not."""
    doc: dict[str, Any] = {"name": "F", "requestPathAlias": "/" + draw(NAMES)}
    if draw(st.booleans()):
        doc["supportedHttpMethods"] = draw(st.lists(st.sampled_from(["get", "post", "put"]), unique=True,
                                                    max_size=3))
    if draw(st.booleans()):
        doc["cors"] = {"maxAge": draw(st.integers(0, 2)), "cookiesAllowed": draw(st.booleans())}
    if draw(st.booleans()):
        doc["processor"] = {"adapter": draw(TEXT), "preInputs": draw(st.dictionaries(NAMES, TEXT, max_size=2))}
    if draw(st.booleans()):
        doc["systemDomainAuthentication"] = {"type": "httpBasic", "username": draw(TEXT)}
    if draw(st.booleans()):
        doc["systemDomainCredentialSecret"] = draw(TEXT)
    if draw(st.booleans()):
        methods = []
        for name in draw(st.lists(NAMES, unique=True, max_size=2)):
            method: dict[str, Any] = {"name": name, "sampleJsonResponse": draw(TEXT)}
            if draw(st.booleans()):
                method["responseFilters"] = [{"name": f, "notes": draw(TEXT)}
                                             for f in draw(st.lists(NAMES, unique=True, max_size=2))]
            methods.append(method)
        doc["methods"] = methods
    return doc


def comparable(kind: Kind, live: Mapping[str, Any], desired: Mapping[str, Any], schema: str = "") -> dict[str, Any]:
    """``live`` without the collections ``desired`` leaves alone by omitting them (the only
    knowledge of the kind the oracle is given: the diff documents that it skips them)."""
    out: dict[str, Any] = {}
    for name, value in live.items():
        sub = f"{schema}.{name}" if schema else name
        if name not in desired and sub in kind.compare.left_alone:
            continue
        want = desired.get(name)
        if sub in kind.keyed and isinstance(value, Mapping) and isinstance(want, Mapping):
            value = {key: comparable(kind, item, want[key], sub)
                     if isinstance(item, Mapping) and isinstance(want.get(key), Mapping) else item
                     for key, item in value.items()}
        out[name] = value
    return out


def tokens(path: str) -> list[str]:
    return [a or b for a, b in _TOKEN.findall(path)]


def related(one: list[Any], other: list[Any]) -> bool:
    shorter = min(len(one), len(other))
    return [str(t) for t in one[:shorter]] == [str(t) for t in other[:shorter]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(endpoints(), endpoints())
def test_the_diff_agrees_with_deepdiff(live_doc: dict[str, Any], desired_doc: dict[str, Any]) -> None:
    live = normalise(KIND, live_doc, Context("Default"))
    desired = normalise(KIND, desired_doc, Context("Default"))
    changes = diff(KIND, live, desired)
    oracle = DeepDiff(comparable(KIND, live, desired), desired)

    assert bool(changes) == bool(oracle), (changes, oracle)
    found = [tokens(c.path) for c in changes]
    expected = [level.path(output_format="list") for report in oracle.tree.values() for level in report]
    for path in expected:
        assert any(related(path, f) for f in found), f"DeepDiff sees {path}, the diff does not: {changes}"
    for path in found:
        assert any(related(path, e) for e in expected), f"the diff reports {path}, DeepDiff does not: {oracle}"
    assert len({c.path for c in changes}) == len(changes)  # one change per path


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(endpoints(), endpoints())
def test_changes_are_sensitive_exactly_on_secret_fields(live_doc: dict[str, Any],
                                                          desired_doc: dict[str, Any]) -> None:
    live = normalise(KIND, live_doc, Context("Default"))
    desired = normalise(KIND, desired_doc, Context("Default"))
    for change in diff(KIND, live, desired):
        secret = any(change.path == s or change.path.startswith(s + ".") or s.startswith(change.path + ".")
                     for s in KIND.compare.secret)
        assert change.sensitive == secret, change


@settings(max_examples=100, deadline=None)
@given(endpoints())
def test_an_object_does_not_differ_from_itself(doc: dict[str, Any]) -> None:
    normal = normalise(KIND, doc, Context("Default"))
    assert diff(KIND, normal, normal) == []
    assert not DeepDiff(normal, normalise(KIND, doc, Context("Default")))
