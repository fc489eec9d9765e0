"""The export's YAML writer (``export.emit``) writes exactly what PyYAML's pure-Python emitter
writes with the export's representers (``export.dump.pure_dump``), whatever the document holds:
the writer's own layout, its scalars rendered by PyYAML, and its hand-overs to PyYAML (a line
PyYAML would fold, a multi-line scalar, an anchor, an unknown type) all end in the same bytes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.export import emit
from apimctl.export.dump import export_file, pure_dump


def written(doc: dict[str, Any]) -> str:
    return emit.document(dict(doc), pure_dump)


ODD = ["", " ", "yes", "No", "null", "~", "1", "01", "1.5", "0x1F", "1e3", ".inf", "2026-12-01", "1:20",
       "<<", "=", "-", "- a", "? x", ": y", "a: b", "a #b", "#a", "'q'", '"d"', "a,b", "[x]", "{y}", "*r", "&a",
       "!t", "%p", "@at", "`b`", "|", ">", "--- x", "... y", "tab\there", "bell\x07", "nel\x85", "ls\u2028",
       "bom\ufeff", "del\x7f", "é", "中文", "😀", "\xa0nbsp", "${VAR}", "$${HOME}", "a\nb", "a\nb\n",
       "a\nb\n\n", "\n", " lead\nx", "trail \nx", "x\n ", "\r\n", "line\r", "a\\b"]
WORDS = st.sampled_from(["alpha", "b", "ep-1", "/s1/e2", "api.example.com", "x_y", "über", "a(b)",
                         "$x", "get", "it's", "a: b", "https://x.y/z", "k,v", "1"])
TEXT = st.one_of(
    st.sampled_from(ODD),
    st.lists(WORDS, min_size=1, max_size=30).map(" ".join),
    st.text(min_size=0, max_size=120),
)
SCALARS = st.one_of(TEXT, st.booleans(), st.none(), st.integers(-10**20, 10**20),
                    st.sampled_from([0.0, -0.0, 1.5, 1e20, 1e-7, float("inf"), float("-inf"), 2.0]))
KEYS = st.one_of(st.sampled_from(["name", "description", "cors", "maxAge", "endpoints"]), TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(KEYS, inner, max_size=5)), max_leaves=25)
DOCS = st.dictionaries(KEYS, st.lists(VALUES, max_size=5), min_size=1, max_size=3)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCS)
def test_any_document_is_written_as_pyyaml_writes_it(doc: dict[str, Any]) -> None:
    assert written(doc) == pure_dump(dict(doc))


@pytest.mark.parametrize("width", range(40, 110, 3))
def test_lines_around_the_width_fold_where_pyyaml_folds_them(width: int) -> None:
    text = " ".join(["word"] * (width // 5))
    doc = {"services": [{"name": "S", "description": text, "endpoints": [{"name": "E", "notes": text}]},
                        {"name": text, "roles": [text, "b"]}]}
    assert written(doc) == pure_dump(doc)


def test_flow_style_at_the_json_limit() -> None:
    for size in range(50, 65):
        item = "x" * (size - 4)  # '["' + item + '"]' is ``size`` long
        doc = {"roles": [{"name": "r", "a": [item], "b": {"k": item[:-5]}}], "domains": [item]}
        assert written(doc) == pure_dump(doc)


def test_literal_blocks_keep_their_indentation_hints() -> None:
    doc = {"services": [{"name": "S", "sample": "  indented\nsecond\n", "other": "a\n\nb",
                         "endpoints": [{"name": "E", "body": "{\n  \"a\": 1\n}"}], "list": ["x\ny", "z"]}]}
    assert written(doc) == pure_dump(doc)


def test_what_the_writer_hands_to_pyyaml() -> None:
    shared = {"k": "v"}
    cases = [
        {"services": [{"a": shared}, {"b": shared}]},  # an anchor and an alias
        {"services": [{"a": "kept\n\n"}]},  # ``|+`` may end the stream with ``...``
        {"services": [{"k" * 130: 1}]},  # a key too long to be a simple key
        {"services": [{1: "int key"}]},
        {"a": 1},  # a document of scalars: flow style
        {"services": [[["nested"], "x"], [], [{}]]},
    ]
    for doc in cases:
        assert written(doc) == pure_dump(dict(doc))


def test_a_type_the_representers_do_not_know_fails_as_pyyaml_fails() -> None:
    class Text(str):
        pass

    with pytest.raises(Exception) as direct:
        pure_dump({"services": [{"name": Text("x")}]})
    with pytest.raises(type(direct.value)):
        written({"services": [{"name": Text("x")}]})


def test_the_header_names_the_variables_the_yaml_references() -> None:
    doc = {"services": [{"name": "S", "secret": "${S_SECRET}", "literal": "$${HOME}", "quoted": "x ${Q} y\n"}]}
    text = export_file("f.yaml", doc, "").text
    header = text.split("services:")[0]
    assert "#   S_SECRET" in header and "#   Q" in header and "HOME" not in header
