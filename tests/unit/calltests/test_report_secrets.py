"""No call-test report shows a registered value, in any encoding, nor its beginning.

The properties run over generated values with the characters that encodings change (quotes,
backslashes, ``%``, ``+``, ``&``, ``=``, ``/``, non-ASCII letters): what an echo back end
received (``Basic`` credentials of ``user:secret``, the value in the query as httpx encodes
it, in a JSON body), the failures :func:`apimctl.calltests.runner.check` writes about that
answer (cut at 200 characters) and the emulator's decisions, in every report format; and the
scrubber's own promises (:func:`apimctl.sensitive.cut` and a cut message's beginning of a
value).
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import httpx
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from apimctl import sensitive
from apimctl.calltests.backends import Stub
from apimctl.calltests.report import FORMATS, headline, render
from apimctl.calltests.runner import CallResult, check

SPECIAL = "\"\\'/+%&=:@?;|{}<>$!*()~-_., é€"
ALPHABET = st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" + SPECIAL)
SECRETS = st.text(ALPHABET, min_size=12, max_size=60).filter(lambda s: s.strip() == s and any(c.isalnum() for c in s))
PREFIX = 8
"""The shortest beginning of a value looked for (shorter ones occur in ordinary text)."""
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def leak_forms(secret: str, user: str = "svc") -> set[str]:
    """Every way ``secret`` could show, computed independently of the scrubber: as it is,
    JSON-escaped, URL-encoded (path, form, and as httpx writes a query), base64 of itself and of
    ``user:secret``, and its beginnings (at least :data:`PREFIX` characters)."""
    data = secret.encode()
    out = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
           quote(secret, safe=""), quote(secret), quote_plus(secret),
           httpx.URL("http://h/?v=" + secret).query.decode()[2:]}
    for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data),
                    base64.b64encode(f"{user}:{secret}".encode())):
        out |= {encoded.decode(), encoded.decode().rstrip("=")}
    out |= {secret[:n] for n in range(PREFIX, len(secret))}
    out |= {form[:n] for form in (json.dumps(secret)[1:-1],) for n in range(PREFIX, len(form))}
    return {form for form in out if len(form) >= sensitive.MIN_SCRUB_LENGTH}


def found(text: str, secret: str) -> list[str]:
    return sorted(form for form in leak_forms(secret) if form in text)


def echoed(secret: str, padding: int) -> httpx.Response:
    """What an echo back end answers to the emulator's call: ``Basic`` credentials with the
    secret as the password, the secret in the query after ``padding`` characters of path (so
    that the 200-character cut of a failure can fall inside it) and in a JSON body."""
    url = f"http://backend.example.net/{'p' * padding}?v={secret}&source=tm"
    token = base64.b64encode(f"svc:{secret}".encode()).decode()
    request = httpx.Request("POST", url, headers={"Authorization": f"Basic {token}"},
                            content=json.dumps({"password": secret}).encode())
    return Stub("backend.example.net", echo=True).answer(request)


def reports(secret: str, padding: int) -> list[str]:
    """Every report of a run whose echo back end received ``secret`` (registered)."""
    sensitive.forget()
    sensitive.register(secret)
    answer = echoed(secret, padding)
    expect = {"status": 201, "headers": {"Content-Type": {"equals": "text/plain"}},
              "body": {"contains": "nothing like this", "json": {"$.headers.authorization": "x", "$.query": "x"}}}
    failures = check(expect, answer, None)
    steps = [{"step": "forward", "decision": f"to http://backend.example.net/?v={secret} as svc:{secret}"}]
    results = [CallResult("t.test.yaml", 3, "echo", False, failures, 200, "return", steps),
               CallResult("t.test.yaml", 9, f"named {secret}", True)]
    return [render(results, fmt) for fmt in FORMATS] + [headline(results)]


@EXAMPLES
@given(secret=SECRETS, padding=st.integers(0, 120))
def test_no_report_format_shows_what_an_echo_received(secret: str, padding: int) -> None:
    ordinary = "".join(reports("~" * len(secret), padding))  # what shows whatever the value
    assume(secret[:PREFIX] not in ordinary)
    for fmt, report in zip((*FORMATS, "headline"), reports(secret, padding), strict=True):
        assert found(report, secret) == [], fmt


def test_the_echo_shows_the_shape_of_the_request_with_the_values_masked() -> None:
    sensitive.register('pa"ss\\w%rd&x=1')
    echo = json.loads(echoed('pa"ss\\w%rd&x=1', 3).text)
    assert echo["path"] == "/ppp"
    assert echo["query"].endswith("&source=tm") and "(sensitive)" in echo["query"]
    assert echo["headers"]["authorization"] == "Basic (sensitive)"
    assert echo["body"] == '{"password": "(sensitive)"}'


@EXAMPLES
@given(secret=SECRETS, before=st.text(ALPHABET, max_size=30), limit=st.integers(8, 120))
def test_cut_never_shows_the_beginning_of_a_value(secret: str, before: str, limit: int) -> None:
    sensitive.forget()
    texts = (f"got {before}{secret} and more", json.dumps({"value": before + secret}, ensure_ascii=False))
    assume(all(secret[:PREFIX] not in text.replace(secret, "") for text in texts))
    sensitive.register(secret)
    for text in texts:
        shown = sensitive.cut(text, limit)
        assert len(shown) <= max(limit, len(sensitive.scrub(text)))
        assert found(shown, secret) == [], shown


@EXAMPLES
@given(secret=SECRETS, before=st.text(ALPHABET, max_size=30), data=st.data())
def test_a_value_cut_elsewhere_is_masked_before_its_cut_mark(secret: str, before: str, data: st.DataObject) -> None:
    sensitive.forget()
    assume(secret[:PREFIX] not in "(got " + before)
    sensitive.register(secret)
    shown = data.draw(st.integers(sensitive.MIN_PREFIX_LENGTH, len(secret) - 1))
    for mark in sensitive.CUT_MARKS:
        message = f'(got "{before}{secret[:shown]}{mark}")'
        assert found(sensitive.scrub(message), secret) == [], message


def test_a_cut_mark_after_ordinary_text_changes_nothing() -> None:
    sensitive.register("postgres://admin:hunter2@db.internal.example.com/prod")
    for text in ('(got "a long value...")', "- … and 3 more", "see the plan…", "pos…", "(got \"posts...\")"):
        assert sensitive.scrub(text) == text
    assert sensitive.scrub('(got "postgres://adm...")') == '(got "(sensitive)...")'
    sensitive.register("hello")  # too short to be told by its beginning
    assert sensitive.scrub("say hell...") == "say hell..."


def test_basic_credentials_of_any_user_and_percent_encoded_values_are_masked() -> None:
    sensitive.register("s3cret/+&=value")
    for user in ("svc", "a", "someone@example.com"):
        token = base64.b64encode(f"{user}:s3cret/+&=value".encode()).decode()
        assert sensitive.scrub(f'{{"authorization": "Basic {token}"}}') == '{"authorization": "Basic (sensitive)"}'
    assert sensitive.scrub("GET http://b.example.net/x?a=1&v=s3cret%2F%2B%26%3Dvalue&b=2") == (
        "GET http://b.example.net/x?a=1&v=(sensitive)&b=2")
    assert sensitive.scrub("Basic dXNlcjpvdGhlcg== and http://b.example.net/?q=a%20b") == (
        "Basic dXNlcjpvdGhlcg== and http://b.example.net/?q=a%20b")  # user:other, a b: nothing registered
