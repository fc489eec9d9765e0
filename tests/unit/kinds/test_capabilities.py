"""The kind contract: a small :class:`KindOps` every kind has, and capabilities some declare."""

from __future__ import annotations

from pathlib import Path

import pytest

import apimctl.planning
from apimctl import kinds
from apimctl.kinds.capabilities import CAPABILITIES, KeyRules, Routed
from apimctl.kinds.ops import KindOps, Ops
from apimctl.kinds.plan import KEY_RULES, PLAN_READ_FIELDS


def members(protocol: type) -> set[str]:
    """The names a protocol asks for: its methods and its annotated attributes."""
    names = {*vars(protocol), *vars(protocol).get("__annotations__", {})}
    return {n for n in names if not n.startswith("_")}


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_a_kind_implements_each_capability_it_declares(kind: kinds.Kind) -> None:
    """Declared by subclassing (``class EndpointOps(Ops, Routed)``), each member written by the
    kind's class rather than inherited as the protocol's stub; and a kind whose operations
    answer for a capability declares it where it is defined."""
    cls = type(kind.ops)
    for capability in CAPABILITIES:
        declared = capability in cls.__mro__
        assert declared == isinstance(kind.ops, capability), (kind.name, capability.__name__)
        if not declared:
            continue
        for name in members(capability):
            assert hasattr(kind.ops, name), f"{kind.name}: {capability.__name__}.{name} missing"
            stub = vars(capability).get(name)
            assert stub is None or getattr(cls, name) is not stub, \
                f"{kind.name}: {capability.__name__}.{name} not implemented"


def test_the_shared_operations_have_no_capability() -> None:
    """What one kind does is no default of every kind's."""
    every = {n for capability in CAPABILITIES for n in members(capability)}
    assert not every & set(dir(Ops)), sorted(every & set(dir(Ops)))
    assert not every & members(KindOps)


def test_the_contract_stays_small() -> None:
    assert len(members(KindOps)) <= 10, sorted(members(KindOps))
    for capability in CAPABILITIES:
        assert kinds.having(capability), f"{capability.__name__}: no kind has it"


def test_stages_find_kinds_by_capability() -> None:
    assert kinds.having(Routed) == (kinds.ENDPOINT,)
    assert kinds.capability(kinds.ENDPOINT, Routed) is kinds.ENDPOINT.ops
    assert kinds.capability(kinds.SERVICE, Routed) is None
    # an entry outside the registry is asked directly
    other = kinds.Kind(name="endpoint", manifest_key="xs", path="/xs", body="x", operations=Ops)
    assert kinds.capability(other, Routed) is None


def test_the_rules_of_keys_are_the_plan_kinds() -> None:
    """Each field a rule of key impact names is a field of the plan kind, and the engine
    (planning's caller impact) names none of them: it asks the kind."""
    rules = kinds.capability(kinds.PLAN, KeyRules)
    assert rules is not None and rules.key_rule("rateLimitCeiling") is KEY_RULES["rateLimitCeiling"]
    assert rules.key_rule("description") is None
    limits = {r.limit for r in KEY_RULES.values() if r.limit is not None}
    named = set(KEY_RULES) | {f for lim in limits for f in (lim.ceiling, lim.exempt, lim.override, lim.period) if f}
    assert named <= set(PLAN_READ_FIELDS)
    camel = {f for f in named if f != f.lower()}  # not a word such as ``status``
    for path in Path(apimctl.planning.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not [f for f in camel if f in text], path
