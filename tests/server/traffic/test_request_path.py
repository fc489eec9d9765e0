"""The traffic manager's one normalised path (:mod:`apimctl.server.traffic.request`):
properties over generated paths."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.server.traffic.request import BadPath, alias_path, escaped, normalise_path

PIECES = st.sampled_from(["a", "Z", "0", "-", ".", "..", "~", "%2e", "%2E", "%2f", "%3f", "%23", "%25", "%41", "%7E",
                          "%c3%a9", "é", " ", '"', "{", ";", "=", "@", ":", "/", "//"])
PATHS = st.lists(PIECES, max_size=10).map(lambda p: "/" + "".join(p))
PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


def _unreserved(octet: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9\-._~]", chr(int(octet[1:], 16))))


@settings(max_examples=150, deadline=None)
@given(PATHS)
def test_a_normalised_path_is_a_fixed_point_without_dot_segments(raw: str) -> None:
    try:
        path = normalise_path(raw)
    except BadPath:
        return
    assert normalise_path(path) == path
    assert path.startswith("/")
    assert not {".", ".."} & set(path.split("/")[1:-1]) and path.split("/")[-1] not in (".", "..")
    assert re.fullmatch(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*", path), path
    assert all(o == o.upper() and not _unreserved(o) for o in PERCENT.findall(path))
    # no octet is decoded or encoded twice: what the segments say is what the caller's said
    assert unquote(path).count("/") <= unquote(raw).count("/")
    assert {"?", "#"} & set(path) == set()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "bc", ".", ".."]), min_size=1, max_size=8))
def test_dot_segments_resolve_as_a_file_system_path_would(segments: list[str]) -> None:
    raw = "/" + "/".join(segments)
    depth, climbs = 0, False
    for segment in segments:
        depth += {"..": -1, ".": 0}.get(segment, 1)
        climbs |= depth < 0
    if climbs:
        with pytest.raises(BadPath):
            normalise_path(raw)
        return
    path = normalise_path(raw)
    assert (path.rstrip("/") or "/") == posixpath.normpath(raw)


@pytest.mark.parametrize("raw", ["", "v2", "/%", "/%4", "/%zz", "/%00", "/a%0d", "/a%0A", "/%7f", "/a\x00", "/a\r\n",
                                 "/..", "/a/../.."])
def test_what_cannot_be_normalised_is_refused(raw: str) -> None:
    with pytest.raises(BadPath):
        normalise_path(raw)


def test_an_alias_is_compared_as_a_path_spells_it() -> None:
    assert [alias_path(a) for a in ("", "/", "v2/forecast", "/v2/forecast/", "/météo", "/a b")] == [
        "", "", "/v2/forecast", "/v2/forecast", "/m%C3%A9t%C3%A9o", "/a%20b"]
    assert normalise_path("/m%c3%a9t%c3%a9o") == alias_path("/météo")


def test_escaped_keeps_a_log_line_one_line() -> None:
    assert escaped("GET /a\r\nforged\x1b[31m") == "GET /a\\r\\nforged\\x1b[31m"
