"""Which management API a command talks to: the connection options turned into an ApiClient.

The commands that reach the API (``plan``, ``apply``, ``drift``, ``export``) take the common
connection options (``apimctl.cli.common.connection_options``) and open their client with
:func:`open_client`. With ``--url`` it is that API, authenticated by ``--token`` or by the
token exchange. Without it, it is the embedded reference server in ``.apimctl/local.db``
under the current directory, reached in-process through an ASGI transport: this module is
the only place where the reconciler touches the server package (STYLE §11).

The embedded default is refused where it would be a silent mistake: when ``CI`` is set (a
pipeline must name its area) and when a connection variable is set but empty (a missing or
misnamed pipeline secret). ``--url embedded`` asks for it explicitly. Settings not given on
the command line or in the environment come from a profile (:mod:`apimctl.cli.profiles`).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import sqlite3
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import click
import httpx
from click.core import ParameterSource

from apimctl import sensitive
from apimctl.api.auth import Credentials
from apimctl.api.client import ApiClient
from apimctl.api.dialect import DialectChoice
from apimctl.cli.common import envvar
from apimctl.cli.profiles import apply_profile
from apimctl.cli.tls import verification
from apimctl.errors import ApimctlError, NotFound

EMBEDDED_DIR = ".apimctl"
EMBEDDED_DB = f"{EMBEDDED_DIR}/local.db"
EMBEDDED_URL = "http://embedded/v3/rest"
EMBEDDED_AREA = "local"
EMBEDDED_NOTICE = (
    f"Using the embedded reference server ({EMBEDDED_DB}); "
    "set --url or APIMCTL_URL to target an area."
)
EXPLICIT_EMBEDDED = "embedded"
"""``--url embedded``: the embedded reference server, asked for (allowed in CI)."""
_EXCHANGE_OPTIONS = ("api_key", "api_secret", "username", "password", "area")
CONNECTION_VARIABLES = tuple(envvar(name) for name in ("url", "token", *_EXCHANGE_OPTIONS, "profile"))
"""The variables that name a target or its credentials: one that is set but empty is a
pipeline secret that did not arrive, never a request for the embedded server."""


@asynccontextmanager
async def open_client(
    *,
    url: str | None,
    token: str | None,
    api_key: str | None,
    api_secret: str | None,
    username: str | None,
    password: str | None,
    area: str | None,
    qps: float | None,
    qps_given: bool,
    parallelism: int,
    timeout: float,
    verbose: bool,
    announce: Callable[[str], None],
    dialect: str = "auto",
    dialect_source: str = "",
    observe: Callable[[httpx.Response], None] | None = None,
    verify: ssl.SSLContext | bool = True,
) -> AsyncIterator[ApiClient]:
    """An open ApiClient for the target the options name; closed on exit. ``observe`` is
    shown every reply (``apimctl doctor`` reads the quota headers)."""
    common: dict[str, Any] = {
        "parallelism": parallelism,
        "timeout": timeout,
        "log": announce if verbose else None,
    }
    if observe is not None:
        common["on_response"] = observe
    if url:
        exchange = {
            "api_key": api_key,
            "api_secret": api_secret,
            "username": username,
            "password": password,
            "area": area,
        }
        client = _remote_client(url, token, exchange, qps=qps_in_effect(url, qps, qps_given),
                                verify=verify, **common)
        close = _nothing
    else:
        transport, embedded_token, close = _embedded_server()
        announce(EMBEDDED_NOTICE)
        client = ApiClient(EMBEDDED_URL, token=embedded_token, qps=qps_in_effect(url, qps, qps_given),
                           transport=transport, **common)
    # the dialect asked for (SUPPLEMENT §10); "auto": detected (the embedded server is spec)
    client.dialect = DialectChoice(dialect or "auto", dialect_source, embedded=not url,
                                   host=client.dialect.host)
    try:
        async with client:
            try:
                yield client
            except NotFound as exc:
                raise _wrong_base(exc, client, url) from None
    finally:
        close()  # an embedded server's database closed with the client


def qps_in_effect(url: str | None, qps: float | None, qps_given: bool) -> float | None:
    """The client-side limit a command runs with: ``--qps`` when it was given; else none
    against the embedded server (``url`` empty) and this machine (``apimctl serve``), and the
    default against any other host."""
    if qps_given or (url and not loopback(url)):
        return qps
    return None


def loopback(url: str) -> bool:
    """Whether ``url`` names this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    host = (httpx.URL(url).host if "://" in url else "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def connection_settings(ctx: click.Context) -> dict[str, Any]:
    """The keyword arguments of :func:`open_client` (without ``announce``) from a command's
    parsed connection options; ``qps_given`` is true when ``--qps`` came from the command
    line, ``APIMCTL_QPS`` or a profile. Settings given neither on the command line nor in the
    environment come from the profile (``--profile``, ``APIMCTL_PROFILE`` or the config
    file's default). ``url`` is ``None`` for the embedded server, which is refused in CI and
    when a connection variable is set but empty unless ``--url embedded`` asked for it."""
    params = ctx.params
    names = ("url", "token", *_EXCHANGE_OPTIONS, "qps", "parallelism", "timeout", "verbose")
    settings = {name: params.get(name) for name in names}
    given = {name for name in names
             if ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)}
    settings["dialect"] = params.get("dialect") or "auto"
    if ctx.get_parameter_source("dialect") in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
        given.add("dialect")
    from_profile = apply_profile(settings, given, params.get("profile"))
    register_credentials(settings)
    settings["qps_given"] = "qps" in given or "qps" in from_profile
    settings["verbose"] = bool(settings["verbose"])
    remote = bool(settings.get("url")) and str(settings["url"]).strip() != EXPLICIT_EMBEDDED
    settings["verify"] = (verification(params.get("ca_bundle"), bool(params.get("insecure")))
                          if remote else True)  # the embedded server is in-process: no TLS
    settings["dialect_source"] = ("APIMCTL_DIALECT" if ctx.get_parameter_source("dialect") == ParameterSource.ENVIRONMENT
                                  else "profile" if "dialect" in from_profile else "--dialect")
    url = settings["url"]
    if isinstance(url, str) and url.strip() == EXPLICIT_EMBEDDED:
        settings["url"] = None
    elif not url:
        settings["url"] = None
        refuse_implicit_embedded(os.environ)
    return settings


def register_credentials(settings: Mapping[str, Any]) -> None:
    """The connection's credentials, wherever they came from (flag, ``APIMCTL_*``, a profile's
    ``${VAR}``), registered with the scrubber before the first call (:mod:`apimctl.sensitive`)."""
    values = [settings.get(name) for name in ("token", "api_key", "api_secret", "password")]
    key, secret = settings.get("api_key"), settings.get("api_secret")
    pair = f"{key}:{secret}" if key and secret else None  # the exchange's HTTP Basic
    sensitive.register_credentials(*(v for v in (*values, pair) if isinstance(v, str)))


def refuse_implicit_embedded(environ: Mapping[str, str]) -> None:
    """Refuse the embedded default when ``CI`` is set or a connection variable is empty: a
    pipeline that lost its ``APIMCTL_URL`` must fail, not apply to a throw-away local area."""
    empty = [name for name in CONNECTION_VARIABLES if name in environ and not environ[name].strip()]
    if empty:
        raise click.UsageError(
            f"{', '.join(empty)} {'is' if len(empty) == 1 else 'are'} set but empty (a missing or "
            "misnamed pipeline secret?): refusing to fall back to the embedded reference server; "
            f"give the area's --url, or --url {EXPLICIT_EMBEDDED} to use the embedded server")
    ci = environ.get("CI", "").strip().lower()
    if ci and ci not in ("0", "false", "no"):
        raise click.UsageError(
            "no --url (APIMCTL_URL) and CI is set: refusing the embedded reference server, "
            "which would change a throw-away local area and succeed; give the area's --url "
            f"(or a --profile), or --url {EXPLICIT_EMBEDDED} to use the embedded server deliberately")


def target_label(url: str | None) -> str:
    """How to name the target in output and in saved plans: the API base without
    credentials, query or trailing slash (``--url`` forms that reach the same API have the
    same label), or the embedded server with the absolute path of its database (a plan made
    in one directory is refused in another)."""
    if not url or url.strip() == EXPLICIT_EMBEDDED:
        return f"embedded ({Path(EMBEDDED_DB).resolve()})"
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL:
        return "(invalid URL)"
    parsed = parsed.copy_with(username=None, password=None, query=None, fragment=None)
    if parsed.scheme in ("http", "https") and parsed.host and parsed.path in ("", "/"):
        parsed = parsed.copy_with(path="/v3/rest")
    return str(parsed).rstrip("/")


def api_base(url: str) -> str:
    """The management API base from ``--url``; a bare ``http(s)://host[:port]`` gets
    ``/v3/rest``. Refuses URLs that are not http(s) or that carry credentials."""
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise click.UsageError(f"--url ({envvar('url')}): not a valid URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise click.UsageError(
            f"--url ({envvar('url')}): expected http(s)://HOST[:PORT]/v3/rest, "
            f"got {target_label(url)!r}"
        )
    if parsed.userinfo:
        raise click.UsageError(
            f"--url ({envvar('url')}): must not carry credentials; "
            "use --token, or --api-key/--api-secret/--username/--password/--area"
        )
    if parsed.path in ("", "/"):
        parsed = parsed.copy_with(path="/v3/rest")
    return str(parsed.copy_with(query=None, fragment=None)).rstrip("/")


def _remote_client(
    url: str, token: str | None, exchange: dict[str, str | None], **options: Any
) -> ApiClient:
    """The client of the API at ``url``: with ``--token``, else with the token exchange."""
    base = api_base(url)
    if token:
        return ApiClient(base, token=token, **options)
    return ApiClient(base, credentials=_credentials(exchange), **options)


def _credentials(values: dict[str, str | None]) -> Credentials:
    """Credentials for the token exchange, or a usage error naming what is missing."""
    missing = [name for name in _EXCHANGE_OPTIONS if not values.get(name)]
    empty = [name for name in ("token", *missing) if os.environ.get(envvar(name)) == ""]
    hint = (f" ({', '.join(envvar(n) for n in empty)} {'is' if len(empty) == 1 else 'are'} set "
            "but empty: a missing or misnamed pipeline secret?)") if empty else ""
    if len(missing) == len(_EXCHANGE_OPTIONS):
        every = ", ".join(_option(name) for name in _EXCHANGE_OPTIONS)
        raise click.UsageError(
            f"--url needs credentials: --token ({envvar('token')}), "
            f"or for the token exchange all of {every}{hint}"
        )
    if missing:
        raise click.UsageError(
            "the token exchange needs --api-key, --api-secret, --username, --password and "
            f"--area; missing: {', '.join(_option(name) for name in missing)}{hint}"
        )
    return Credentials(**{name: str(values[name]) for name in _EXCHANGE_OPTIONS})


def _wrong_base(error: NotFound, client: ApiClient, url: str | None) -> NotFound:
    """A 404 on a read before any write most often means a wrong API base: say so."""
    if url is None or error.method != "GET" or client.stats.writes():
        return error
    error.message += (f" (the API base {target_label(url)} may be wrong: check that --url "
                      "ends in /v3/rest, e.g. https://HOST/v3/rest)")
    error.args = (error.message,)
    return error


def _option(name: str) -> str:
    return f"--{name.replace('_', '-')} ({envvar(name)})"


def _nothing() -> None:
    """Nothing to close."""


def _embedded_server() -> tuple[httpx.ASGITransport, str, Callable[[], None]]:
    """An in-process reference server on ``.apimctl/local.db``, the token it accepts, and
    what closes it (its database connections) once the client is done with it."""
    try:
        from apimctl.server import ServerConfig, create_app
    except ImportError as exc:
        raise ApimctlError(
            f"the embedded reference server is not available ({exc}); "
            "set --url or APIMCTL_URL to target an area"
        ) from None
    folder, database = Path(EMBEDDED_DIR), Path(EMBEDDED_DB)
    if folder.exists() and not folder.is_dir():
        raise ApimctlError(f"{folder.resolve()} is a file, not the embedded server's directory; "
                           "move it away, or set --url or APIMCTL_URL to target an area")
    if database.exists() and not database.is_file():
        raise ApimctlError(f"{database.resolve()} is not a database file; "
                           "move it away, or set --url or APIMCTL_URL to target an area")
    try:
        folder.mkdir(exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Local state of apimctl's embedded reference server.\n*\n")
    except OSError as exc:
        raise ApimctlError(f"cannot create {folder.resolve()}: {exc.strerror or exc}") from None
    token = secrets.token_urlsafe(24)
    config = ServerConfig(
        db_path=EMBEDDED_DB,
        tokens={token: EMBEDDED_AREA},
        auto_approve_domains=True,
    )
    try:
        app = create_app(config)
    except (OSError, sqlite3.Error) as exc:
        raise ApimctlError(f"cannot open the embedded server's database {database.resolve()}: {exc}; "
                           "move it away to start afresh, or set --url or APIMCTL_URL") from None
    return httpx.ASGITransport(app=app), token, app.state.server.close


class Paced:
    """Opens the client as :func:`open_client` does and remembers it, so that the command can
    say afterwards when the client-side rate limit (``--qps``) set the pace of the run."""

    SHARE = 0.5  # the limit's minimum time over the run's time that is worth a note
    SECONDS = 1.0  # runs shorter than this never are

    def __init__(self, settings: Mapping[str, Any], announce: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.announce = announce
        self.clock = clock
        self.client: ApiClient | None = None
        self.started = clock()

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[ApiClient]:
        async with open_client(**self.settings, announce=self.announce) as client:
            self.client = client
            yield client

    def note(self) -> str | None:
        """``Note: ...`` when the limit's spacing of the calls took most of the run."""
        client = self.client
        qps = client.limiter.qps if client is not None else None
        if client is None or not qps:
            return None
        calls = client.stats.total()
        forced, took = max(0, calls - client.limiter.burst) / qps, self.clock() - self.started
        if took < self.SECONDS or forced < self.SHARE * took:
            return None
        return (f"Note: the client-side rate limit (--qps {qps:g}) spaced this run's {calls} calls "
                f"over at least {forced:.1f} s of its {took:.1f} s; raise it (--qps, APIMCTL_QPS) "
                "where the area allows more, or --qps 0 to turn it off.")
