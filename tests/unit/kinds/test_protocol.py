"""Every kind in ``KINDS`` implements the per-kind operations (``Kind.ops``, :class:`KindOps`)."""

from __future__ import annotations

import pytest

from apimctl import kinds
from apimctl.kinds.base import Context, KindOps, Lookups, MissingOps, Read


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_kind_implements_the_protocol(kind: kinds.Kind) -> None:
    assert isinstance(kind.ops, KindOps), f"{kind.name}: Kind.ops does not implement KindOps"
    assert not isinstance(kind.ops, MissingOps), f"{kind.name}: declares no operations (Kind.ops)"


@pytest.mark.parametrize("kind", kinds.KINDS, ids=lambda k: k.name)
def test_operations_answer_for_their_own_kind(kind: kinds.Kind) -> None:
    raw = {"id": "1", kind.identity: "x"}
    read = kind.ops.read(raw, Lookups(), None)
    assert isinstance(read, Read)
    assert isinstance(kind.ops.context({}), Context)
    assert set(kind.ops.collections) <= set(kind.sub_resources)  # each one is written through its API


def test_a_kind_without_operations_fails_loudly() -> None:
    bare = kinds.Kind(name="x", manifest_key="xs", path="/xs", body="x")
    assert not isinstance(bare.ops, KindOps) or isinstance(bare.ops, MissingOps)
    with pytest.raises(NotImplementedError):
        bare.ops.read({}, Lookups(), None)
