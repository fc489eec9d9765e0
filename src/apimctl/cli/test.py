"""``apimctl test PATH... [--manifests DIR]... [--format text|json|junit|markdown]``: call
tests, run against the traffic emulator.

By default the run is embedded: a throw-away area of the reference server into which the
``--manifests`` are applied first (with the same core as ``apply``), its traffic manager on
a virtual clock, the test files' stub back ends. An embedded run calls no other back end
than those the test files declare (a stub, or a ``url``): a call to any other system domain
is answered as unreachable, and the report says why. With ``--url`` (and ``--token``) and
``--traffic-url`` it runs against a running ``apimctl serve --traffic-port`` instead (real
time; the consumers it creates are deleted afterwards; stubs and ``at`` need the embedded
run; with ``--operator-token`` each call's decisions are read from the server's
``/operator/traffic``, for ``decidedBy``). Test files: ``*.test.yaml`` (schema
``schemas/calltests.schema.json``). Exit 0 when every call met its expectations, 1 on a
failure or bad input (file:line:col).

``--token`` (``APIMCTL_TEST_TOKEN``) is registered with :mod:`apimctl.sensitive` as a
credential before anything is read, and every report goes through its scrubber
(:mod:`apimctl.calltests.report`).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import httpx
from click.core import ParameterSource

from apimctl import sensitive
from apimctl.calltests.model import load
from apimctl.calltests.report import FORMATS, headline, render
from apimctl.calltests.runner import CallResult, Target, default_start, run_file
from apimctl.cli.common import EXIT_ERROR, EXIT_OK
from apimctl.errors import ApimctlError, ManifestError
from apimctl.render.problems import render as render_problems

AREA = "calltests"
DIALECTS = ("auto", "spec", "mashery")  # auto: spec, as the embedded server is (APIMCTL_DIALECT is shared)


@click.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--manifests", "manifests", multiple=True, type=click.Path(exists=True),
              help="Manifests applied to the embedded area before the calls (repeatable).")
@click.option("--overlay", "overlays", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Overlay directories merged over the --manifests, as for plan and apply (repeatable).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text; json; junit (JUnit XML for CI); markdown (a pull-request comment section).")
@click.option("--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file (the summary line still goes to stderr).")
@click.option("--dialect", type=click.Choice(DIALECTS), default="auto", show_default=True,
              help="Dialect of the embedded area (README, Against a real area); auto: spec, as the embedded server.")
@click.option("--url", default=None,
              help="Management API of a running server, instead of the embedded area (with --traffic-url; "
                   "APIMCTL_URL alone does not switch the run away from the embedded area).")
@click.option("--token", default=None, help="Bearer token of --url.")
@click.option("--traffic-url", default=None, help="Traffic listener of that server (apimctl serve --traffic-port).")
@click.option("--operator-token", default=None,
              help="With --url: read each call's decisions from that server's /operator/traffic (decidedBy "
                   "expectations, the deciding step of a failed call).")
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], manifests: tuple[str, ...], overlays: tuple[str, ...],
            fmt: str, output: str | None, dialect: str, url: str | None, token: str | None, traffic_url: str | None,
            operator_token: str | None) -> int:
    """Check what callers of the endpoints see: status, headers, bodies of declared calls."""
    sensitive.register_credentials(token, operator_token)  # --token, --operator-token: never shown
    if url and not traffic_url and ctx.get_parameter_source("url") == ParameterSource.ENVIRONMENT:
        url = None  # APIMCTL_URL names the area plan and apply work on, not a traffic emulator
    if not paths:
        raise click.UsageError("give at least one PATH (a *.test.yaml file or a directory)")
    if bool(url) != bool(traffic_url):
        raise click.UsageError("--url and --traffic-url go together (a running apimctl serve --traffic-port)")
    if overlays and not manifests and ctx.get_parameter_source("overlays") == ParameterSource.ENVIRONMENT:
        overlays = ()  # APIMCTL_OVERLAY is plan's and apply's; without --manifests it has no base here
    if overlays and not manifests:
        raise click.UsageError("--overlay needs --manifests (the base the overlays are merged over)")
    if operator_token and not url:
        if ctx.get_parameter_source("operator_token") != ParameterSource.ENVIRONMENT:
            raise click.UsageError("--operator-token goes with --url and --traffic-url (the embedded run knows "
                                   "every call's decisions)")
        operator_token = None
    if url and manifests:
        raise click.UsageError("--manifests are applied to the embedded area only; apply them to --url with apimctl apply")
    loaded = load(paths)
    if loaded.problems:
        click.echo(render_problems(loaded.problems, "text"), nl=False, err=True)
        click.echo(f"{len(loaded.problems)} problem(s) in the test files", err=True)
        return EXIT_ERROR
    if url:
        results = asyncio.run(_remote(loaded.files, url, token or "", str(traffic_url), operator_token))
    else:
        results = asyncio.run(_embedded(loaded.files, manifests, "spec" if dialect == "auto" else dialect, overlays))
    report = render(results, fmt)
    if output:
        Path(output).write_text(report, encoding="utf-8")
    else:
        click.echo(report, nl=False)
    if fmt != "text" or output:
        click.echo(headline(results), err=True)
    return EXIT_OK if all(r.passed for r in results) else EXIT_ERROR


async def _run(target: Target, files: Sequence[Any]) -> list[CallResult]:
    results: list[CallResult] = []
    for test_file in files:
        results += await run_file(target, test_file)
    return results


def call_checks(paths: Sequence[str], manifests: Sequence[str], overlays: Sequence[str] = (),
                dialect: str = "spec") -> list[CallResult]:
    """The results of the call tests under ``paths`` on a throw-away embedded area with
    ``manifests`` (and ``overlays``) applied: ``plan --tests``. Bad test files raise."""
    loaded = load(paths)
    if loaded.problems:
        raise ApimctlError("the call tests are not valid:\n" + render_problems(loaded.problems, "text").rstrip())
    return asyncio.run(_embedded(loaded.files, manifests, dialect, overlays))


async def _apply(emulator: Any, manifests: Sequence[str], overlays: Sequence[str] = ()) -> None:
    from apimctl.api.client import ApiClient
    from apimctl.applying.run import ApplyOptions, apply_plan
    from apimctl.manifests import load_manifests
    from apimctl.planning import make_plan

    try:
        manifest = load_manifests(list(manifests), list(overlays), env=dict(os.environ))
    except ManifestError as exc:
        shown = render_problems(exc.problems, "text")
        raise ApimctlError(f"the manifests are not valid:\n{shown.rstrip()}") from None
    async with ApiClient("http://embedded/v3/rest", token=emulator.token, qps=None,
                         transport=emulator.management) as client:
        plan = await make_plan(client, manifest)
        result = await apply_plan(client, plan, ApplyOptions(env=dict(os.environ)))
    if not result.ok:
        why = [f"{o.action} {o.address}: {o.reason}" for o in (*result.failed, *result.skipped)]
        raise ApimctlError("applying the manifests to the embedded area failed:\n" + "\n".join(why or ["(no step failed; "
                           "the area did not converge)"]))


async def _embedded(files: Sequence[Any], manifests: Sequence[str], dialect: str,
                    overlays: Sequence[str] = ()) -> list[CallResult]:
    from apimctl.calltests.backends import BackendTransport
    from apimctl.calltests.timing import VirtualClock
    from apimctl.cli.emulator import emulated_services, key_placer, open_emulator, unreachable

    clock = VirtualClock(default_start())
    # only the back ends the test files declare: a test file may come from a pull request, and
    # its calls must not reach the hosts of the machine's network (internal, cloud metadata)
    backends = BackendTransport([], wait=clock.advance, refuse=unreachable)
    with tempfile.TemporaryDirectory(prefix="apimctl-test-") as folder:
        emulator = open_emulator(str(Path(folder) / "area.db"), AREA, clock=clock, transport=backends,
                                 dialect=dialect)
        try:
            if manifests:
                await _apply(emulator, manifests, overlays)
            auth = {"Authorization": f"Bearer {emulator.token}"}
            async with httpx.AsyncClient(transport=emulator.management, base_url="http://embedded/v3/rest",
                                         headers=auth) as api, \
                    httpx.AsyncClient(transport=emulator.traffic, base_url="http://traffic") as traffic:
                target = Target(api, traffic, clock=clock, backends=backends,
                                place_key=key_placer(emulated_services(emulator)),
                                last_call=emulator.last_call, reset=emulator.manager.limits.reset,
                                send=emulator.send)
                return await _run(target, files)
        finally:
            await emulator.manager.aclose()
            emulator.close()


async def _remote(files: Sequence[Any], url: str, token: str, traffic_url: str,
                  operator_token: str | None = None) -> list[CallResult]:
    from apimctl.calltests.placing import CallerError, read_services
    from apimctl.calltests.runner import TrafficLog, TrafficLogError
    from apimctl.cli.emulator import key_placer
    from apimctl.cli.target import api_base

    base = api_base(url)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as api, \
            httpx.AsyncClient(base_url=traffic_url.rstrip("/"), timeout=60) as traffic:
        try:
            services = await read_services(api)
        except httpx.HTTPError as exc:
            raise ApimctlError(f"cannot reach the management API {base}: {type(exc).__name__}") from None
        except CallerError as exc:
            raise ApimctlError(f"{base}: {exc}") from None
        log = None
        if operator_token:
            log = TrafficLog(api, str(httpx.URL(base).copy_with(path="/operator/traffic", query=None)), operator_token)
            try:
                await log.entries()
            except TrafficLogError as exc:
                raise ApimctlError(f"cannot read the decisions of the calls: {exc}") from None
        target = Target(api, traffic, place_key=key_placer(lambda: services), cleanup=True, traffic_log=log)
        return await _run(target, files)
