"""Options shared by the commands, and the one place that maps errors to exit codes."""

from __future__ import annotations

import atexit
import functools
import math
import os
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click
from click.core import ParameterSource

from apimctl import sensitive
from apimctl.errors import ApimctlError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_ERROR, EXIT_CHANGES, EXIT_PARTIAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# The credentials of the connection (options and their variables): never shown, in any encoding.
CREDENTIAL_OPTIONS = ("token", "api_secret", "password")
CREDENTIAL_MASK = "(sensitive)"
_MIN_CREDENTIAL = 4


def connection_credentials(argv: Sequence[str] | None = None,
                           environ: Mapping[str, str] | None = None) -> set[str]:
    """The credential values given on the command line or in ``APIMCTL_*`` variables."""
    argv = sys.argv[1:] if argv is None else argv
    environ = os.environ if environ is None else environ
    given = {name: {environ.get(envvar(name), "")} for name in (*CREDENTIAL_OPTIONS, "api_key")}
    flags = {"--" + name.replace("_", "-"): name for name in given}
    for i, arg in enumerate(argv):
        flag, sep, value = arg.partition("=")
        if flag in flags:
            given[flags[flag]].add(value if sep else (argv[i + 1] if i + 1 < len(argv) else ""))
    found = {value for name in (*CREDENTIAL_OPTIONS, "api_key") for value in given[name] if value}
    for key in (k for k in given["api_key"] if k):  # the token exchange's HTTP Basic: KEY:SECRET
        found |= {f"{key}:{secret}" for secret in given["api_secret"] if secret}
    return {value for value in found if len(value) >= _MIN_CREDENTIAL}


def scrub_credentials(text: str, credentials: set[str]) -> str:
    """``text`` with every encoding of every credential, and of every value registered with
    :mod:`apimctl.sensitive`, replaced by ``(sensitive)``."""
    sensitive.register(*credentials)
    return sensitive.scrub(text)


def run_guarded(group: click.Group) -> int:
    """Run the click group; map every failure to an exit code, never a traceback. The
    credentials on the command line and in ``APIMCTL_*`` are registered with the scrubber
    first (a profile's are registered when it is read: :mod:`apimctl.cli.target`)."""
    verbose = "-v" in sys.argv or "--verbose" in sys.argv
    sensitive.register_credentials(*connection_credentials())
    try:
        rv = group.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        _name_environment_variable(exc)
        exc.show()
        return EXIT_ERROR
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except ApimctlError as exc:
        click.echo(scrub_credentials(f"Error: {exc}", connection_credentials()), err=True)
        return exc.exit_code
    except Exception as exc:  # a bug: say so plainly
        if verbose:
            traceback.print_exc()
        message = f"Error: internal error: {type(exc).__name__}: {exc}"
        click.echo(scrub_credentials(message, connection_credentials()), err=True)
        return EXIT_ERROR
    return int(rv or 0)


def exit_process(code: int) -> NoReturn:
    """End the process with ``code`` once the output is flushed and the exit handlers have
    run, without taking the interpreter apart object by object (a tenth of a second after a
    large run, for nothing: the process ends). The usual way when a thread that is not a
    daemon still runs, or the output cannot be flushed (a closed pipe): Python then reports
    that as it always does."""
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # written by an exit handler into a closed pipe: nothing more can be said
    os._exit(code)


if TYPE_CHECKING:
    _FloatType = click.ParamType[float, Any]
else:  # click < 8.2 has no generic ParamType
    _FloatType = click.ParamType


class Number(_FloatType):
    """A finite number of seconds or calls: positive, or also 0 when ``zero`` is allowed."""

    name = "number"

    def __init__(self, *, zero: bool) -> None:
        self.zero = zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number) or number < 0 or (number == 0 and not self.zero):
            self.fail(f"{value!r} must be a {'non-negative' if self.zero else 'positive'} number", param, ctx)
        return number


def _name_environment_variable(exc: click.ClickException) -> None:
    """A bad value that came from ``APIMCTL_<NAME>`` says so: the user never typed the option."""
    if not isinstance(exc, click.BadParameter) or exc.ctx is None or exc.param is None:
        return
    param, name = exc.param, exc.param.name
    # the option's names alone (click adds "(env var: ...)" to options that show it in --help)
    hint = exc.param_hint if isinstance(exc.param_hint, str) else " / ".join(f"'{o}'" for o in param.opts)
    exc.param_hint = hint
    if name is None or exc.ctx.get_parameter_source(name) is not ParameterSource.ENVIRONMENT:
        return
    names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or [])
    exc.param_hint = f"{hint} (from {', '.join(names)})" if names else hint


def envvar(name: str) -> str:
    """Every common option also comes from ``APIMCTL_<NAME>``."""
    return "APIMCTL_" + name.upper().replace("-", "_")


def _public_env(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from apimctl.manifests import environment  # here: importing the manifests takes time

    environment.configure(public=value)
    return value


def _symlinks(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    from apimctl.manifests import environment

    environment.configure(allow_symlinks_outside=value)
    return value


def manifest_options(func: F) -> F:
    """PATH..., --overlay and --recursive, and what the manifests may read (--public-env,
    --allow-symlinks-outside), for the commands that read manifests. The command is given the
    paths to read (``--recursive`` adds the subdirectories: :mod:`apimctl.cli.paths`), and a
    subdirectory with manifests left unread is warned about on stderr. --public-env and
    --allow-symlinks-outside are given by the pipeline (command line, ``APIMCTL_PUBLIC_ENV``),
    never by a file of the repository; their callbacks set the policy
    (:mod:`apimctl.manifests.environment`), the commands take them in ``**_``."""
    from apimctl.cli import paths as folders

    command = func

    @functools.wraps(command)
    def reading(*args: Any, **kwargs: Any) -> Any:
        given, overlays = tuple(kwargs.get("paths") or ()), tuple(kwargs.get("overlays") or ())
        if kwargs.pop("recursive", False):
            kwargs["paths"] = folders.recursive(given, overlays)
        else:
            for warning in folders.unread_warnings(given, overlays):
                click.echo(warning, err=True)
        return command(*args, **kwargs)

    func = cast(F, reading)
    func = click.option("--recursive", is_flag=True,
                        help="Also read the manifests in every subdirectory of a directory PATH "
                             "(except overlays).")(func)
    func = click.option(
        "--allow-symlinks-outside", is_flag=True, callback=_symlinks,
        envvar=envvar("allow_symlinks_outside"),
        help="Read manifest files through symbolic links that leave their folder (refused by "
             "default: a pull request could point one at any file of the runner).")(func)
    func = click.option(
        "--public-env", "public_env", multiple=True, metavar="PATTERN",
        callback=_public_env, envvar=envvar("public_env"), type=LINES,
        help="Environment variables (glob, e.g. 'QPS_*') whose values manifests may show in "
             "fields that are not secret; others are masked in every output. Names on the "
             "deny-list (*TOKEN*, *SECRET*, *PASSWORD*, *KEY*, GITHUB_*, AWS_*, APIMCTL_*) stay "
             "refused outside secret fields. Repeatable; APIMCTL_PUBLIC_ENV: one per line or "
             "comma-separated.")(func)
    func = click.option(
        "--overlay",
        "overlays",
        multiple=True,
        type=click.Path(exists=True, file_okay=False),
        help="Directory of per-environment files deep-merged onto the base by identity.",
    )(func)
    func = click.argument("paths", nargs=-1, type=click.Path())(func)
    return func


def rotation_options(func: F) -> F:
    """--rotate-secrets and --rotate, for the commands that plan (plan and apply)."""
    from apimctl.cli.completers import complete_field_address  # here: a module only for completion

    func = click.option("--rotate", "rotate", multiple=True, metavar="KIND:NAME:PATH",
                        shell_complete=complete_field_address,
                        help="Send this write-only secret (patterns allowed). Repeatable.")(func)
    func = click.option("--rotate-secrets", is_flag=True,
                        help="Send every declared write-only secret (systemDomainAuthentication."
                             "password), which the API never returns and so cannot be compared.")(func)
    return func


IMPACT_MODES = ("auto", "always", "never")


def impact_option(func: F) -> F:
    """--impact, for the commands that plan (plan, apply, drift)."""
    return click.option(
        "--impact", type=click.Choice(IMPACT_MODES), default="auto", show_default=True,
        envvar=envvar("impact"),
        help="Who the changes affect, from the area's package keys: auto reads them when a "
             "change governs calls, always reads them, never reads none.")(func)


def rotations(rotate_secrets: bool, rotate: tuple[str, ...]) -> tuple[str, ...]:
    """The request's ``rotate`` entries: ``--rotate-secrets`` is every write-only secret."""
    from apimctl.planning.rules import ROTATE_ALL  # here: validate never imports planning

    return ((ROTATE_ALL,) if rotate_secrets else ()) + rotate


def connection_options(func: F) -> F:
    """--url, credentials, --qps, --parallelism, -v: how to reach the management API."""
    opts = [
        click.option("--profile", envvar=envvar("profile"), metavar="NAME", help="Connection settings from this profile of apimctl.toml or $XDG_CONFIG_HOME/apimctl/config.toml."),
        click.option("--url", envvar=envvar("url"), help="Management API base, e.g. https://host/v3/rest; 'embedded': the embedded reference server in .apimctl/local.db (the default, refused in CI)."),
        click.option("--token", envvar=envvar("token"), help="Bearer access token."),
        click.option("--api-key", envvar=envvar("api_key"), help="API key for the token exchange."),
        click.option("--api-secret", envvar=envvar("api_secret"), help="API secret for the token exchange."),
        click.option("--username", envvar=envvar("username"), help="User for the token exchange."),
        click.option("--password", envvar=envvar("password"), help="Password for the token exchange."),
        click.option("--area", envvar=envvar("area"), help="Area (scope) for the token exchange."),
        click.option("--qps", type=Number(zero=True), default=2.0, show_default=True, envvar=envvar("qps"), help="Client-side rate limit, calls per second (0: no limit). Off against the embedded server unless given, and against this machine (localhost, 127.0.0.1: apimctl serve)."),
        click.option("--parallelism", type=click.IntRange(1, 64), default=8, metavar="N", show_default=True, envvar=envvar("parallelism"), help="Concurrent calls at most."),
        click.option("--timeout", type=Number(zero=False), default=30.0, show_default=True, envvar=envvar("timeout"), help="Seconds one call may take in all (connecting, sending, reading the whole reply; the token exchange too); a call that takes longer is retried, and counts towards giving up on the server."),
        click.option("--deadline", type=Number(zero=True), default=0.0, metavar="SECONDS", envvar=envvar("deadline"), help="Seconds the whole command may take (0: no limit); then it stops as on SIGTERM and fails."),
        click.option("--ca-bundle", type=click.Path(dir_okay=False), metavar="FILE", envvar=envvar("ca_bundle"), help="Certificates (PEM) of the CAs that sign the area's TLS certificate, for a private CA; default: SSL_CERT_FILE, REQUESTS_CA_BUNDLE, else the bundled public CAs. Proxies come from HTTPS_PROXY, HTTP_PROXY and NO_PROXY."),
        click.option("--insecure", is_flag=True, envvar=envvar("insecure"), help="Do not verify the area's TLS certificate (anyone on the path can then read the token): for a test area only."),
        click.option("-v", "--verbose", is_flag=True, envvar=envvar("verbose"), help="Log every call (never secrets)."),
        click.option("--dialect", type=click.Choice(["spec", "mashery", "auto"]), default="auto", show_default=True, envvar=envvar("dialect"), help="The target's dialect: spec, the platform's specification; mashery, as real deployments answer (README, Against a real area); auto: detected (the embedded server is spec)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def color_wanted(no_color: bool, stream: IO[str] | None = None) -> bool:
    """Whether output to ``stream`` (stdout by default) may be coloured: not with
    ``--no-color``, a non-empty ``NO_COLOR`` (no-color.org), ``TERM=dumb``, or when the
    stream is not a terminal."""
    if no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    out = sys.stdout if stream is None else stream
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


if TYPE_CHECKING:
    _StrType = click.ParamType[str, Any]
else:
    _StrType = click.ParamType


class Lines(_StrType):
    """A string option that can be repeated: from its environment variable, one value per
    line (names may hold spaces: ``APIMCTL_PLAN_TARGET='plan:Weather Partners/Gold'``)."""

    name = "text"
    envvar_list_splitter = "\n"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return str(value)

    def split_envvar_value(self, rv: str) -> Sequence[str]:
        return [line.strip() for line in rv.splitlines() if line.strip()]


LINES = Lines()
