"""Hostile call-test files through ``apimctl test``: each gets a located error (file:line:col),
exit 1 and no traceback, within a bound of time and memory: alias bombs, deep nesting, files
over the size bound, numbers the clock cannot take, patterns that are not regular expressions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.calltests import model
from apimctl.cli import cli

CALL = "calls:\n  - name: a\n    url: http://a.example.com/\n    expect: {status: 200}\n"


def run(path: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["test", str(path)], standalone_mode=False, catch_exceptions=False)
    return int(result.return_value or 0), result.stdout, result.stderr


def bomb(levels: int) -> str:
    """A "billion laughs" test file: 9**levels strings from a few hundred bytes."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f'\ncalls: [{{name: x, url: "http://a.example.com/", body: *l{levels - 1},' \
                               ' expect: {status: 200}}]\n'


def test_an_alias_bomb_is_refused_where_it_expands(tmp_path: Path) -> None:
    path = tmp_path / "bomb.test.yaml"
    path.write_text(bomb(9))  # 387M strings if expanded
    assert path.stat().st_size < 600
    code, out, err = run(path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:6:10: l5[0]: YAML aliases expand to more than 100000 nodes; refusing to expand them")
    assert "Traceback" not in err


@settings(max_examples=10, deadline=None)
@given(depth=st.integers(min_value=65, max_value=5000), flow=st.booleans())
def test_deep_nesting_is_refused_with_its_place(tmp_path_factory: pytest.TempPathFactory, depth: int,
                                                flow: bool) -> None:
    path = tmp_path_factory.mktemp("deep") / "deep.test.yaml"
    nested = "[" * depth + "]" * depth if flow else "\n      " + "- " * depth + "1"
    path.write_text(CALL + "    body: " + nested + "\n")
    code, out, err = run(path)
    assert (code, out) == (1, "")
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: ", err), err
    assert "nested more than 64 levels deep" in err or "exceeded maximum nesting depth" in err
    assert "Traceback" not in err and err.endswith("problem(s) in the test files\n")


def test_a_file_over_the_size_bound_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "MAX_BYTES", 1024 * 1024)
    path = tmp_path / "big.test.yaml"
    path.write_text(CALL + "#" * (1024 * 1024) + "\n")
    code, _, err = run(path)
    assert code == 1
    assert err.startswith(f"{path}: file is 1.0 MB, larger than the 1 MB limit for one test file; split it")


@pytest.mark.parametrize(("line", "message"), [
    ("    after: .inf", "5:12: calls[0].after: inf is greater than the maximum of 31622400"),
    ("    after: .nan", "5:12: calls[0].after: not a finite number of seconds"),
    ("    after: -.inf", "5:12: calls[0].after: -inf is less than the minimum of 0"),
    ("    at: 0001-01-01T00:00:00Z", "5:9: calls[0].at: not an ISO 8601 date-time from 1970-01-01T00:00:00Z"),
])
def test_numbers_and_instants_the_clock_cannot_take_are_located(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "n.test.yaml"
    path.write_text("calls:\n  - name: a\n    url: http://a.example.com/\n    expect: {status: 200}\n" + line + "\n")
    code, out, err = run(path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:{message}"), err


def test_a_stub_delay_that_is_not_finite_is_located(tmp_path: Path) -> None:
    path = tmp_path / "d.test.yaml"
    path.write_text("backends:\n  - {address: b.example.net, delay: .nan}\n" + CALL)
    code, _, err = run(path)
    assert code == 1
    assert err.startswith(f"{path}:2:37: backends[0].delay: not a finite number of seconds"), err


def test_one_document_per_file_and_no_duplicate_keys(tmp_path: Path) -> None:
    path = tmp_path / "two.test.yaml"
    path.write_text(CALL + "---\n" + CALL)
    code, _, err = run(path)
    assert code == 1 and err.startswith(f"{path}:5:1: a test file holds one YAML document"), err
    path.write_text(CALL + "calls: []\n")
    code, _, err = run(path)
    assert code == 1 and err.startswith(f"{path}:5:1: calls: duplicate key 'calls' (first written at line 1)"), err


def with_pattern(tmp_path: Path, pattern: str) -> Path:
    path = tmp_path / "p.test.yaml"
    path.write_text("calls:\n  - name: a\n    url: http://a.example.com/\n    expect:\n"
                    f"      headers: {{X-Run: {{matches: '{pattern}'}}}}\n")
    return path


@settings(max_examples=25, deadline=None)
@given(counts=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=6))
def test_counted_repetitions_that_multiply_out_are_refused_before_compiling(
        tmp_path_factory: pytest.TempPathFactory, counts: list[int]) -> None:
    pattern = "a"
    for count in counts:
        pattern = f"(?:{pattern}){{{count}}}"
    path = with_pattern(tmp_path_factory.mktemp("p"), pattern)
    problems = [f"{p.file}:{p.line}:{p.col}: {p.path}: {p.message}" for p in model.load([str(path)]).problems]
    unrolled = 1
    for count in counts:
        unrolled *= count
    if unrolled > 10_000:
        assert problems == [f"{path}:5:24: calls[0].expect.headers.X-Run: its counted repetitions multiply out "
                            "to more than 10,000 elements (such as (a{100}){100}); write the pattern without "
                            "nesting them"]
    else:
        assert problems == []


def test_a_pattern_that_would_hang_the_compiling_is_refused(tmp_path: Path) -> None:
    path = with_pattern(tmp_path, "((((((((((a{100}){100}){100}){100}){100}){100}){100}){100}){100}){100})")
    code, out, err = run(path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:5:24: calls[0].expect.headers.X-Run: its counted repetitions multiply out"), err


def test_patterns_are_python_regular_expressions(tmp_path: Path) -> None:
    path = with_pattern(tmp_path, "(?=x")
    code, _, err = run(path)
    assert code == 1
    assert err.startswith(f"{path}:5:24: calls[0].expect.headers.X-Run: not a regular expression: "
                          "missing ), unterminated subpattern at position 0"), err
