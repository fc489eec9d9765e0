"""A live model sent between processes (``portable``/``from_portable``): what comes back
is the model that was read, its documents still packed."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.kinds.ops import Context
from apimctl.state.objects import LiveObject, LiveState, from_portable, portable
from apimctl.state.packing import Packer

_values = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=8),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(docs=st.lists(st.dictionaries(st.text(min_size=1, max_size=6), _values, max_size=4), min_size=1, max_size=6),
       digested=st.booleans())
def test_a_model_comes_back_as_it_was_read(docs: list[dict[str, Any]], digested: bool) -> None:
    packer = Packer(b"preset dictionary of the kind")
    live = LiveState(refused={"organization": "403"}, skipped=frozenset({"emailTemplateSet"}))
    for n, doc in enumerate(docs):
        live.add(LiveObject("service", f"s{n}", str(n), {"name": f"s{n}", **doc}, name=f"s{n}",
                            updated="2026-01-01T00:00:00Z", revision=n, packer=packer,
                            context=Context(default_error_set="Default"), digested=digested))
        live.add(LiveObject("endpoint", f"s{n}/e", f"e{n}", {"name": "e"}, f"s{n}", str(n), name="e",
                            digested=digested))
    back = from_portable(pickle.loads(pickle.dumps(portable(live))))
    assert back == live
    assert back.refused == live.refused and back.skipped == live.skipped
    for ours, theirs in zip(live.of("service") + live.of("endpoint"), back.of("service") + back.of("endpoint"),
                            strict=True):
        assert theirs.doc_digest == ours.doc_digest
        assert theirs.context == ours.context and theirs.packed == ours.packed
        assert theirs.raw == {} and not theirs.keeps_lists
