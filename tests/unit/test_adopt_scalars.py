"""``drift --adopt`` writes one scalar in the quoting style of the one it replaces: whatever the
value, the edited line reads back as that value, and nothing around it changes."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.adopt import scalar_text

VALUES = st.one_of(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
                   st.integers(-10**9, 10**9), st.booleans(), st.none())


@settings(max_examples=150, deadline=None)
@given(value=VALUES, style=st.sampled_from([None, "'", '"']), flow=st.booleans())
def test_a_written_scalar_reads_back_as_the_value(value: Any, style: str | None, flow: bool) -> None:
    text = scalar_text(value, style, flow)
    if text is None:
        assert style and not isinstance(value, str)  # a number into a quoted string: refused
        return
    assert "\n" not in text
    line = f"a: {{k: {text}, z: 1}}  # kept\n" if flow else f"k: {text}   # kept\nz: 1\n"
    doc = yaml.safe_load(line)
    doc = doc["a"] if flow else doc
    assert doc["k"] == value and doc["z"] == 1
    if flow:
        assert yaml.safe_load(f"[{text}, z]") == [value, "z"]


def test_the_style_is_kept() -> None:
    assert scalar_text("new text", "'") == "'new text'"
    assert scalar_text("it's", "'") == "'it''s'"
    assert scalar_text("new text", '"') == '"new text"'
    assert scalar_text("new text", None) == "new text"
    assert scalar_text("yes", None) == '"yes"'  # plain would read as a boolean
    assert scalar_text("a: b", None) == '"a: b"'
    assert scalar_text("a, b", None, flow=True) == '"a, b"'
    assert scalar_text(120, None) == "120" and scalar_text(False, None) == "false"
    assert scalar_text("two\nlines", None) is None and scalar_text([1], None) is None
    assert scalar_text("x", "|") is None
