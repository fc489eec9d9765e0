"""The regular expressions of call tests (a header's ``matches``), bounded in time.

A test file is written by whoever opens a pull request, and a pattern that backtracks without
end (``^(a|aa)+$`` on a long value) would hang the run: matching goes through the ``regex``
package with a time bound (:data:`MATCH_SECONDS`), and a match that takes longer fails its
call with the reason. Refusing such patterns up front cannot be done reliably (which nested
quantifiers backtrack depends on the value), and capping the value's length does not help
(thirty characters are enough). ``regex`` unrolls counted repetitions when it compiles, so a
pattern whose repetitions multiply out (``((a{100}){100}){100}``) would hang the compiling
instead: :func:`problem` refuses those before anything is compiled. The syntax is Python's
(``re``).
"""

from __future__ import annotations

import re
from re import _parser  # type: ignore[attr-defined]  # the parser re.compile itself uses
from typing import Any

import regex

MATCH_SECONDS = 1.0  # one match of one pattern on one value
MAX_UNROLLED = 10_000  # elements of a pattern once its counted repetitions are unrolled
_REPEATS = {_parser.MAX_REPEAT, _parser.MIN_REPEAT, getattr(_parser, "POSSESSIVE_REPEAT", None)}


class PatternTimeout(Exception):
    pass


def problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used (``None``: it can)."""
    try:
        parsed = _parser.parse(pattern)
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        return f"not a regular expression: {exc}"
    if _unrolled(parsed) > MAX_UNROLLED:
        return (f"its counted repetitions multiply out to more than {MAX_UNROLLED:,} elements "
                "(such as (a{100}){100}); write the pattern without nesting them")
    try:
        regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as exc:
        return f"not a regular expression: {exc}"
    return None


def search(pattern: str, value: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``value``; :class:`PatternTimeout` when finding
    out takes more than :data:`MATCH_SECONDS`."""
    try:
        return regex.search(pattern, value, timeout=MATCH_SECONDS) is not None
    except TimeoutError:
        raise PatternTimeout(f"matching {pattern!r} took more than {MATCH_SECONDS:g} s (a pattern that "
                             "backtracks without end, such as (a+)+ or (a|aa)+: simplify it)") from None


def _unrolled(items: Any) -> int:
    """The elements of a parsed pattern with each counted repetition written out."""
    total = 0
    for op, arg in items:
        if op in _REPEATS:
            low, high, sub = arg
            total += _unrolled(sub) * max(1, high if high != _parser.MAXREPEAT else low + 1)
        elif op is _parser.SUBPATTERN:
            total += _unrolled(arg[-1])
        elif op is _parser.BRANCH:
            total += sum(_unrolled(branch) for branch in arg[1])
        elif op in (_parser.ASSERT, _parser.ASSERT_NOT):
            total += _unrolled(arg[1])
        elif op is _parser.GROUPREF_EXISTS:
            total += _unrolled(arg[1]) + (_unrolled(arg[2]) if arg[2] else 0)
        else:
            total += 1
        if total > MAX_UNROLLED:
            break
    return total
