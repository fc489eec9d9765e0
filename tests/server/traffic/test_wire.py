"""What a caller of ``apimctl serve --traffic-port`` gets for the request lines an HTTP client
would not send as written (dot segments, encoded reserved characters, control characters,
bytes outside ASCII), over real sockets in both dialects: a call is routed, entitled and
forwarded on one normalised path; what cannot be normalised is a 400; nothing the caller sent
breaks a log line or shows a key; error answers carry their message's status as the reason
phrase; one area cannot take another's public domain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.platform import ERROR_CATALOG
from apimctl.server.dialects import dialect_of

from .served import HOST, SECOND, Served, endpoint, serve


@pytest.fixture(scope="module", params=("spec", "mashery"))
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(Path(tmp_path_factory.mktemp("wire")), request.param) as running:
        yield running


def _forwarded(served: Served, target: str, **kwargs: object) -> tuple[int, list[tuple[str, str]]]:
    """The status of a call and what the back end received for it."""
    before = len(served.seen.calls)
    reply = served.raw(target, **kwargs)  # type: ignore[arg-type]
    return reply.status, served.seen.calls[before:]


# one path ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("climb", ["..", "%2e%2e", ".%2E", "%2E."])
def test_a_dot_segment_is_routed_entitled_and_forwarded_as_one_path(served: Served, climb: str) -> None:
    """``/other/../v2/forecast`` is a call to /v2/forecast: a key whose plan refuses that
    endpoint is refused, and one whose plan allows it reaches the back end there."""
    basic, allowed = served.keys["basic"], served.keys["all"]
    status, seen = _forwarded(served, f"/other/{climb}/v2/forecast?api_key={basic}")
    assert (status, seen) == (403, [])
    status, seen = _forwarded(served, f"/other/{climb}/v2/forecast?api_key={allowed}")
    assert (status, seen) == (200, [("/v2/forecast", f"api_key={allowed}")])
    assert served.traffic_log()[-1]["path"] == "/v2/forecast"


@pytest.mark.parametrize(("target", "path", "query"), [
    ("/p/a%3Fx=1", "/p/a%3Fx=1", ""),  # an encoded '?' is no query
    ("/p/a%23b?q=1", "/p/a%23b", "q=1"),  # an encoded '#' drops nothing
    ("/p/a%2Fb", "/p/a%2Fb", ""),  # an encoded '/' is no separator
    ("/p/a%252F", "/p/a%252F", ""),  # no level of encoding is lost
    ("/p/%7euser/%41%2d", "/p/~user/A-", ""),  # unreserved characters are decoded
    ("/p/caf%c3%a9", "/p/caf%C3%A9", ""),
    ("/p/./a/b/../c", "/p/a/c", ""),
])
def test_the_back_end_receives_the_normalised_path(served: Served, target: str, path: str, query: str) -> None:
    assert _forwarded(served, target) == (200, [(path, query)])
    assert served.traffic_log()[-1]["path"] == path


SEGMENTS = st.sampled_from(["a", "B", "p", "v2", "forecast", ".", "..", "%2e", "%2E%2e", "%2F", "%3F", "%23", "%25",
                            "%41", "%7e", "~", "x;y=1", "a:b@c", "x!$&'()*+,", "%C3%A9", ""])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(SEGMENTS, min_size=1, max_size=6))
def test_routing_and_forwarding_agree_on_the_path(served: Served, segments: list[str]) -> None:
    """Whatever the path, the back end receives the path the router decided on (the call
    log's), and an endpoint is chosen by an alias that is a prefix of that path."""
    status, seen = _forwarded(served, "/p/" + "/".join(segments))
    entry = served.traffic_log()[-1]
    if seen:
        assert status == 200
        assert seen == [(entry["path"], "")]
        alias = {"Open": "/p", "Other": "/other", "Forecast": "/v2/forecast"}[entry["endpoint"]]
        assert entry["path"] == alias or entry["path"].startswith(alias + "/")
    else:
        assert status in (400, 403, 596), entry


# what cannot be normalised ----------------------------------------------------------------------


@pytest.mark.parametrize("target", ["/p/a%00b", "/p/a%0D%0AX-Forged:%201", "/v2/forecast%0a", "/p/%zz",
                                    "/p/%2", "/../p", "/p/../../p"])
def test_a_path_that_cannot_be_normalised_is_a_400(served: Served, target: str) -> None:
    reply = served.raw(target)
    assert (reply.status, reply.body) == (400, b"<h1>Bad Request</h1>")
    entry = served.traffic_log()[-1]
    assert (entry["status"], entry["decidedBy"]) == (400, "request")
    assert "Traceback" not in served.server_log()


@pytest.mark.parametrize("value", ["caf\u00e9".encode(), b"\xff\xfe", b"a\x1bb"])
def test_a_header_value_outside_visible_ascii_is_a_400(served: Served, value: bytes) -> None:
    before = len(served.seen.calls)
    reply = served.raw("/p/x", headers=b"X-Note: " + value + b"\r\n")
    assert reply.status == 400, reply  # the emulator's, or the HTTP parser's own
    assert len(served.seen.calls) == before
    assert "Traceback" not in served.server_log()


def test_what_the_caller_sends_starts_no_line_of_the_server_log(served: Served) -> None:
    served.raw("/p/x%0D%0AFORGED%20log%20line")
    served.raw("/v2/forecast/%0aFORGED")
    assert not [line for line in served.server_log().splitlines() if line.startswith("FORGED")]


# keys in paths, JSONP callbacks -----------------------------------------------------------------


def test_a_key_in_the_path_is_masked_whether_or_not_the_call_is_routed(served: Served) -> None:
    key = served.keys["all"]
    unknown = "unknown-key-0123456789"
    assert served.raw(f"/nowhere/{key}").status == 596
    assert served.raw(f"/other/{key}", host="unserved.example.com").status == 596
    assert served.raw(f"/pk/{unknown}").status == 403  # read from path position 2, not a key of the area
    assert served.raw(f"/pk/{key}/more").status == 200
    entries = served.traffic_log()[-4:]
    assert [e["path"] for e in entries] == ["/nowhere/(key)", "/other/(key)", "/pk/(key)", "/pk/(key)/more"]
    shown = str(served.traffic_log()) + served.server_log()
    assert key not in shown and unknown not in shown


@pytest.mark.parametrize("callback", ["alert(1)//", "a b", "x;y", "1cb", "cb.", "<script>", "a-b"])
def test_a_jsonp_callback_that_is_not_an_identifier_is_a_400(served: Served, callback: str) -> None:
    from urllib.parse import quote

    reply = served.raw(f"/jsonp?callback={quote(callback, safe='')}")
    assert reply.status == 400
    assert callback.encode() not in reply.body


@pytest.mark.parametrize("callback", ["cb", "app.on_error", "$", "_x.$y1"])
def test_a_jsonp_callback_that_is_an_identifier_wraps_the_error(served: Served, callback: str) -> None:
    reply = served.raw(f"/jsonp?callback={callback}")
    assert reply.status == 200
    assert reply.body.startswith(callback.encode() + b"(")


# reason phrases ---------------------------------------------------------------------------------


def test_an_error_answer_carries_its_message_status_as_the_reason_phrase(served: Served) -> None:
    refused = served.raw("/v2/forecast")  # the endpoint's error set names this message's status
    assert (refused.status, refused.reason, refused.body) == (403, "Key Please", b"no key")
    unknown = served.raw("/other?api_key=unknown-0123")
    expected = dialect_of(served.dialect).message("ERR_403_DEVELOPER_INACTIVE")["status"]
    assert ERROR_CATALOG["ERR_403_DEVELOPER_INACTIVE"][0] == unknown.status == 403
    assert unknown.reason == expected  # the catalog's default message
    passed = served.raw("/p/x")
    assert (passed.status, passed.reason) == (200, "OK")
    unrouted = served.raw("/nowhere")
    assert (unrouted.status, unrouted.reason) == (596, "Service Not Found")


# one area, one domain ---------------------------------------------------------------------------


def test_another_area_cannot_take_a_public_domain(served: Served) -> None:
    for domain in ("example.com", "127.0.0.1"):
        assert served.manage("POST", "/domains", token=SECOND, json={"domain": domain}).status_code == 200
    backend = "127.0.0.1:9"
    taken = served.manage("POST", "/services", token=SECOND, json={"name": "Thief", "endpoints": [
        endpoint("Forecast", "/v2/forecast", backend, allowMissingApiKey=True)]})
    assert taken.status_code in (400, 409), taken.text
    assert f"{HOST!r} belongs to another area" in taken.text
    assert served.manage("POST", "/services", token=SECOND, json={"name": "Thief", "endpoints": [
        endpoint("Forecast", "/elsewhere", backend)]}).status_code in (400, 409)
    own = endpoint("Forecast", "/v2/forecast", backend, publicDomains=[{"address": "mine.example.com"}])
    assert served.manage("POST", "/services", token=SECOND, json={"name": "Own", "endpoints": [own]}).status_code == 200
    status, seen = _forwarded(served, f"/v2/forecast?api_key={served.keys['all']}")
    assert (status, [path for path, _ in seen]) == (200, ["/v2/forecast"])
