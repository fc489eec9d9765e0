"""Connection options to an ApiClient: a URL with a token or the token exchange (the embedded
reference server is tested in ``tests/integration/test_target_embedded.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from apimctl.api.client import ApiClient
from apimctl.cli import target
from apimctl.cli.common import connection_options

from .targetkit import options as _options

pytestmark = pytest.mark.anyio


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The arguments ApiClient was built with."""
    calls: list[dict[str, Any]] = []

    def recording(base_url: str, **kwargs: Any) -> ApiClient:
        calls.append({"base_url": base_url, **kwargs})
        return ApiClient(base_url, **kwargs)

    monkeypatch.setattr(target, "ApiClient", recording)
    return calls


async def test_url_and_token(built: list[dict[str, Any]]) -> None:
    notes: list[str] = []
    async with target.open_client(**_options(token="abc"), announce=notes.append) as client:
        assert client.base_url == "https://apim.example.test/v3/rest"
        assert client.limiter.qps == 2.0
    (args,) = built
    assert args["token"] == "abc" and "credentials" not in args
    assert (args["parallelism"], args["timeout"], args["log"]) == (8, 30.0, None)
    assert notes == []


async def test_url_and_the_token_exchange(built: list[dict[str, Any]]) -> None:
    creds = {"api_key": "k", "api_secret": "s", "username": "u", "password": "p", "area": "a1"}
    async with target.open_client(**_options(**creds, verbose=True), announce=print):
        pass
    (args,) = built
    assert vars(args["credentials"]) == creds
    assert args["log"] is print


async def test_a_bare_host_gets_the_api_path(built: list[dict[str, Any]]) -> None:
    async with target.open_client(
        **_options(url="http://127.0.0.1:8080", token="t"), announce=print
    ) as client:
        assert client.base_url == "http://127.0.0.1:8080/v3/rest"


async def test_url_without_any_credentials_names_the_options() -> None:
    with pytest.raises(click.UsageError) as caught:
        async with target.open_client(**_options(), announce=print):
            pass
    message = caught.value.message
    assert "--token (APIMCTL_TOKEN)" in message
    for option, env in [
        ("--api-key", "APIMCTL_API_KEY"),
        ("--area", "APIMCTL_AREA"),
        ("--password", "APIMCTL_PASSWORD"),
    ]:
        assert f"{option} ({env})" in message


async def test_partial_credentials_name_what_is_missing() -> None:
    with pytest.raises(click.UsageError) as caught:
        async with target.open_client(
            **_options(api_key="k", api_secret="s", username="u"), announce=print
        ):
            pass
    message = caught.value.message
    assert message.endswith("missing: --password (APIMCTL_PASSWORD), --area (APIMCTL_AREA)")
    assert "--api-key (" not in message


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://host/v3/rest", "expected http(s)://HOST[:PORT]/v3/rest"),
        ("apim.example.test/v3/rest", "expected http(s)://HOST[:PORT]/v3/rest"),
        ("https://user:hunter2@apim.example.test/v3/rest", "must not carry credentials"),
    ],
)
async def test_bad_urls(url: str, says: str) -> None:
    with pytest.raises(click.UsageError, match=r"--url \(APIMCTL_URL\)") as caught:
        async with target.open_client(**_options(url=url, token="t"), announce=print):
            pass
    assert says in caught.value.message and "hunter2" not in caught.value.message


def test_target_label() -> None:
    assert target.target_label(None) == f"embedded ({Path.cwd() / '.apimctl' / 'local.db'})"
    assert target.target_label("embedded") == target.target_label(None)
    assert target.target_label("https://h/v3/rest/") == "https://h/v3/rest"
    assert target.target_label("https://h") == target.target_label("https://h/") == "https://h/v3/rest"
    assert (
        target.target_label("https://apim.example.test/v3/rest")
        == "https://apim.example.test/v3/rest"
    )
    assert target.target_label("https://u:secret@h:8443/v3/rest?x=1") == "https://h:8443/v3/rest"


def _settings(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    @click.command()
    @connection_options
    def command(**_: Any) -> None:
        seen.update(target.connection_settings(click.get_current_context()))

    result = CliRunner().invoke(command, args, env=env or {}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen


def test_connection_settings_from_the_options() -> None:
    settings = _settings(["--url", "https://h/v3/rest", "--token", "t", "-v"])
    assert settings == _options(url="https://h/v3/rest", token="t", verbose=True)
    assert _settings(["--qps", "5"])["qps_given"] is True
    assert _settings([], env={"APIMCTL_QPS": "3"}) == _options(url=None, qps=3.0, qps_given=True)


@pytest.mark.parametrize(("url", "given", "limit"), [
    ("http://127.0.0.1:8080/v3/rest", False, None),
    ("http://localhost:8080/v3/rest", False, None),
    ("http://[::1]:8080/v3/rest", False, None),
    ("http://127.0.0.1:8080/v3/rest", True, 2.0),     # asked for: kept
    ("https://apim.example.test/v3/rest", False, 2.0),
])
async def test_no_client_side_limit_against_this_machine(url: str, given: bool, limit: float | None) -> None:
    async with target.open_client(**_options(url=url, token="t", qps_given=given),
                                  announce=print) as client:
        assert client.limiter.qps == limit


class _Stub:
    """What Paced reads of a client: its limiter and its call count."""

    def __init__(self, qps: float | None, calls: int) -> None:
        self.limiter = type("L", (), {"qps": qps, "burst": 1})()
        self.stats = type("S", (), {"total": lambda _self: calls})()


@pytest.mark.parametrize(("qps", "calls", "took", "noted"), [
    (2.0, 9, 4.5, True),        # 4 s of spacing in a 4.5 s run
    (2.0, 9, 20.0, False),      # the area was slow, not the limit
    (2.0, 2, 0.6, False),       # too short to matter
    (None, 90, 9.0, False),     # no limit
])
def test_the_plan_says_when_the_rate_limit_set_the_pace(qps: float | None, calls: int, took: float,
                                                        noted: bool) -> None:
    now = [100.0]
    paced = target.Paced({}, print, clock=lambda: now[0])
    paced.client = _Stub(qps, calls)  # type: ignore[assignment]
    now[0] += took
    note = paced.note()
    assert (note is not None) == noted
    if note:
        assert note.startswith(f"Note: the client-side rate limit (--qps 2) spaced this run's {calls} calls")
        assert "--qps 0" in note
