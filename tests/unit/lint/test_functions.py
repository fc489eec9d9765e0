"""Every rule function of the registry: what passes, what fails, what a missing field does,
and options that cannot be used."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apimctl.lint.functions import ABSENT, FUNCTIONS, OptionError, human, parse_duration

from .lintkit import check

TESTED = {"truthy", "falsy", "defined", "undefined", "pattern", "enumeration", "length", "schema",
          "alphabetical", "xor", "datetime", "interval", "sharedRoutes"}


def test_every_registered_function_is_tested_here() -> None:
    assert set(FUNCTIONS) == TESTED
    spectral_core = {"truthy", "falsy", "defined", "undefined", "pattern", "enumeration", "length",
                     "schema", "alphabetical", "xor"}
    assert spectral_core <= set(FUNCTIONS)


@pytest.mark.parametrize("value", [True, 1, "x", [0], {"a": 1}])
def test_truthy_passes(value: object) -> None:
    assert check("truthy", value) == []


@pytest.mark.parametrize("value", [False, 0, "", [], {}, None])
def test_truthy_fails(value: object) -> None:
    [(path, message)] = check("truthy", value)
    assert path == () and message.startswith("field must be truthy (it is ")


def test_truthy_on_a_missing_field_says_so() -> None:
    assert check("truthy", ABSENT) == [((), "field must be truthy (it is not set)")]


def test_falsy() -> None:
    assert check("falsy", ABSENT) == [] and check("falsy", False) == [] and check("falsy", 0) == []
    assert check("falsy", True) == [((), "field must be falsy (it is true)")]
    assert check("falsy", "on")[0][1] == 'field must be falsy (it is "on")'


def test_defined_and_undefined() -> None:
    assert check("defined", ABSENT) == [((), "field must be defined")]
    assert check("defined", None) == [] and check("defined", False) == []  # null is defined
    assert check("undefined", ABSENT) == []
    assert check("undefined", None) == [((), "field must not be defined")]


def test_pattern_match_and_not_match() -> None:
    options = {"match": "^/v[0-9]+/", "notMatch": "debug"}
    assert check("pattern", "/v2/forecast", options) == []
    assert check("pattern", "/forecast", options) == [((), "field must match the pattern '^/v[0-9]+/'")]
    assert check("pattern", "/v2/debug", options) == [((), "field must not match the pattern 'debug'")]
    assert check("pattern", ABSENT, options) == []  # a missing field is for `defined` to catch


def test_pattern_slash_form_with_flags_and_non_strings() -> None:
    assert check("pattern", "ABC", {"match": "/^abc$/i"}) == []
    assert check("pattern", "ABC", {"match": "^abc$"}) != []
    assert check("pattern", 42, {"match": "^4"}) == []  # numbers are matched as their text
    assert check("pattern", ["a"], {"match": "a"}) == [((), 'field must be a string (it is ["a"])')]
    assert check("pattern", True, {"match": "a"})[0][1].startswith("field must be a string")


@pytest.mark.parametrize("options, key", [({"match": "([a-z"}, "match"), ({"notMatch": "/x/q"}, "notMatch")])
def test_pattern_bad_expressions_are_option_errors(options: dict[str, str], key: str) -> None:
    with pytest.raises(OptionError) as caught:
        FUNCTIONS["pattern"].prepare(options)
    assert caught.value.path == (key,) and "invalid regular expression" in caught.value.message


def test_enumeration_distinguishes_true_from_one() -> None:
    options = {"values": ["https", 1]}
    assert check("enumeration", "https", options) == [] and check("enumeration", 1, options) == []
    assert check("enumeration", True, options) == [((), 'field must be one of: "https", 1 (it is true)')]
    assert check("enumeration", ABSENT, options) == []


@pytest.mark.parametrize("value, options, message", [
    ("abcd", {"max": 3}, "field must be at most 3 characters (it has 4)"),
    ("ab", {"min": 3}, "field must be at least 3 characters (it has 2)"),
    ([1, 2], {"min": 3}, "field must be at least 3 items (it has 2)"),
    ({"a": 1, "b": 2}, {"max": 1}, "field must be at most 1 keys (it has 2)"),
    (120, {"max": 60}, "field must be at most 60 (it is 120)"),
    (1, {"min": 2, "max": 60}, "field must be at least 2 (it is 1)"),
])
def test_length_fails(value: object, options: dict[str, int], message: str) -> None:
    assert check("length", value, options) == [((), message)]


@pytest.mark.parametrize("value", ["abc", [1, 2, 3], 30, ABSENT, True, None])
def test_length_passes(value: object) -> None:
    assert check("length", value, {"min": 3, "max": 60}) == []


def test_schema_reports_each_error_at_its_path() -> None:
    options = {"schema": {"type": "object", "properties": {"maxAge": {"type": "integer", "maximum": 60},
                                                          "origins": {"type": "array", "items": {"pattern": "^https://"}}}}}
    assert check("schema", {"maxAge": 30, "origins": ["https://a"]}, options) == []
    results = check("schema", {"maxAge": 600, "origins": ["https://a", "http://b"]}, options)
    assert [path for path, _ in results] == [("maxAge",), ("origins", 1)]
    assert results[0][1] == "field.maxAge: 600 is greater than the maximum of 60"
    assert results[1][1].startswith("field.origins[1]: 'http://b' does not match")


def test_schema_on_a_missing_field_and_dialects() -> None:
    assert check("schema", ABSENT, {"schema": {"type": "string"}}) == [((), "field must exist")]
    # draft 4: exclusiveMaximum is a boolean
    options = {"schema": {"maximum": 5, "exclusiveMaximum": True}, "dialect": "draft4"}
    assert check("schema", 5, options) != [] and check("schema", 4, options) == []


def test_schema_that_is_not_a_schema_is_an_option_error() -> None:
    with pytest.raises(OptionError) as caught:
        FUNCTIONS["schema"].prepare({"schema": {"type": "nope"}})
    assert caught.value.path == ("schema", "type") and "not a valid JSON Schema" in caught.value.message


def test_alphabetical() -> None:
    assert check("alphabetical", ["a", "b", "c"]) == []
    assert check("alphabetical", ["a", "c", "b"]) == [((2,), 'field must be sorted alphabetically: "b" should come before "c"')]
    items = [{"name": "b"}, {"name": "a"}]
    assert check("alphabetical", items, {"keyedBy": "name"}) == [
        ((1,), 'field must be sorted alphabetically by name: "a" should come before "b"')]
    assert check("alphabetical", {"b": 1, "a": 2})[0][0] == ("a",)
    assert check("alphabetical", {"a": 1, "b": 2}) == [] and check("alphabetical", "text") == []


def test_xor() -> None:
    options = {"properties": ["errorSet", "errorSetId"]}
    assert check("xor", {"errorSet": "x"}, options) == []
    assert check("xor", {}, options) == [((), "field: exactly one of errorSet, errorSetId must be defined (none is)")]
    assert check("xor", {"errorSet": 1, "errorSetId": 2}, options)[0][1].endswith("(errorSet and errorSetId are)")
    assert check("xor", ABSENT, options) == [] and check("xor", "x", options) == []


def test_datetime_against_now_and_fixed_bounds() -> None:
    # lintkit.NOW is 2026-06-01T12:00Z
    assert check("datetime", "2026-06-02T00:00:00Z", {"after": "now"}) == []
    assert check("datetime", "2026-05-01T00:00:00Z", {"after": "now"}) == [
        ((), "field must be in the future (it is 2026-05-01T00:00:00Z)")]
    assert check("datetime", "2026-05-01T00:00:00.000+0000", {"before": "now"}) == []
    assert check("datetime", "2027-01-01T00:00:00Z", {"before": "2026-12-31T00:00:00Z"})[0][1].startswith(
        "field must be before 2026-12-31T00:00:00+00:00")
    assert check("datetime", "tomorrow", {"after": "now"}) == [
        ((), 'field must be an ISO 8601 datetime (it is "tomorrow")')]
    assert check("datetime", ABSENT, {"after": "now"}) == []
    with pytest.raises(OptionError):
        FUNCTIONS["datetime"].prepare({"after": "yesterday"})


def test_interval() -> None:
    options = {"start": "startDateTime", "end": "endDateTime", "maxDuration": "PT12H", "minDuration": "PT1M"}
    window = {"startDateTime": "2026-07-01T00:00:00Z", "endDateTime": "2026-07-01T04:00:00Z"}
    assert check("interval", window, options) == []
    long = {**window, "endDateTime": "2026-07-04T02:00:00Z"}
    assert check("interval", long, options) == [(("endDateTime",), "field lasts 3 days 2 hours, longer than 12 hours")]
    short = {**window, "endDateTime": "2026-07-01T00:00:30Z"}
    assert check("interval", short, options)[0][1] == "field lasts 30 seconds, shorter than 1 minute"
    backwards = {**window, "endDateTime": "2026-06-30T00:00:00Z"}
    assert check("interval", backwards, options) == [(("endDateTime",), "field: endDateTime must be after startDateTime")]
    with pytest.raises(OptionError) as caught:
        FUNCTIONS["interval"].prepare({"start": "a", "end": "b", "maxDuration": "12 hours"})
    assert caught.value.path == ("maxDuration",)


def test_durations() -> None:
    assert parse_duration("PT12H") == timedelta(hours=12)
    assert parse_duration("P1W2DT30M") == timedelta(days=9, minutes=30)
    assert parse_duration("P") is None and parse_duration("PT") is None and parse_duration("12h") is None
    assert human(timedelta(days=1, seconds=61)) == "1 day 1 minute 1 second"


def test_shared_routes() -> None:
    doc = {"services": [
        {"endpoints": [{"requestPathAlias": "/a", "publicDomains": ["API.example.com"]},
                       {"requestPathAlias": "/b", "publicDomains": ["api.example.com"]}]},
        {"endpoints": [{"requestPathAlias": "/a", "publicDomains": ["api.example.com", "x.example.com"]},
                       "not an endpoint", {"publicDomains": ["api.example.com"]}]},
    ]}
    found = check("sharedRoutes", doc)
    assert [path for path, _ in found] == [("services", 0, "endpoints", 0, "requestPathAlias"),
                                           ("services", 1, "endpoints", 0, "requestPathAlias")]
    assert "api.example.com/a is shared by 2 endpoints" in found[0][1]
    assert check("sharedRoutes", {"services": "nothing"}) == [] == check("sharedRoutes", [])
