"""``apimctl lint PATH... | --live [--ruleset FILE]... [--fail-severity S] [--format F]``.

The adapter around :mod:`apimctl.lint`: it parses the options, lints the manifests
(:func:`apimctl.lint.lint_paths`, offline) or the live area (:func:`apimctl.lint.lint_area`,
through :func:`apimctl.cli.target.open_client`, the list calls ``plan`` makes), prints the
findings (:mod:`apimctl.render.lint`) on stdout and a one-line summary on stderr.

It also gives ``plan`` and ``apply`` their ``--lint`` option: :func:`lint_options` adds the
options and :func:`lint_gate` runs the rules before anything else, printing the findings on
stderr and refusing when one is at or above ``--fail-severity``.

Exit codes: 0 no finding at or above ``--fail-severity`` (default ``error``), 1 such findings,
or an error (a bad ruleset, invalid manifests, an API error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import click

from apimctl import lint, sensitive
from apimctl.cli.common import EXIT_ERROR, EXIT_OK, F, connection_options, manifest_options
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.errors import ApimctlError
from apimctl.lint.model import RECOMMENDED, SEVERITIES, LintReport, Severity
from apimctl.render.lint import FORMATS, render, summary

_RULESET_HELP = (f"Ruleset file (Spectral-style YAML), or {RECOMMENDED}. Repeatable; later ones win. "
                 f"Default: settings.lint.rulesets, else {RECOMMENDED}.")
_SEVERITY_HELP = "Fail (exit 1) on findings of this severity or more severe."


@click.command("lint")
@manifest_options
@click.option("--live", is_flag=True,
              help="Lint the live area (read with the list calls plan uses) instead of manifests.")
@click.option("--ruleset", "rulesets", multiple=True, metavar="FILE",
              help=_RULESET_HELP)
@click.option("--fail-severity", type=click.Choice(SEVERITIES), default="error", show_default=True,
              help=_SEVERITY_HELP)
@click.option("--openapi-spec", "openapi", multiple=True, metavar="[SERVICE=]SPEC",
              help="An OpenAPI document the manifests were imported from: its operations without "
                   "operationId and its paths no endpoint of SERVICE (default: its title) routes "
                   "are findings. Repeatable. A $ref is followed inside the document and to files "
                   "under its folder only.")
@click.option("--allow-ref-host", "ref_hosts", multiple=True, metavar="HOST",
              help="With --openapi-spec: fetch a $ref to an http(s) URL on HOST (repeatable; "
                   "default: no $ref is fetched over the network).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: file:line:col: severity rule: message; json: for tools; github: "
                   "Actions annotations; sarif: SARIF 2.1.0 for code scanning.")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, paths: tuple[str, ...], overlays: tuple[str, ...], live: bool,
            rulesets: tuple[str, ...], fail_severity: str, openapi: tuple[str, ...],
            ref_hosts: tuple[str, ...], fmt: str, **_connection: Any) -> int:
    """Check manifests in PATH... (or the live area, --live) against policy rules.

    Rules come from Spectral-style rulesets (--ruleset), by default apimctl:recommended.
    Exit codes: 0 no finding at or above --fail-severity, 1 such findings or an error.
    """
    if live and openapi:
        raise click.UsageError("--openapi-spec checks a document against manifests: give PATH..., not --live")
    if live and (paths or overlays):
        raise click.UsageError("--live lints the area: give PATH... or --live, not both")
    if not live and not paths:
        raise click.UsageError("give at least one manifest PATH (a file or a directory), or --live")
    threshold = cast(Severity, fail_severity)
    if live:
        settings = connection_settings(ctx)
        report = run_command(lambda: _lint_live(rulesets, settings), deadline_of(ctx), _say)
    else:
        report = lint.lint_paths(paths, overlays, rulesets=rulesets, openapi=openapi,
                                 ref_hosts=ref_hosts)
    for warning in report.warnings:
        _say(f"Warning: {warning}")
    output = render(report, fmt, threshold)
    if output:
        click.echo(output, nl=False)
    _say(summary(report, threshold))
    return EXIT_ERROR if report.failures(threshold) else EXIT_OK


async def _lint_live(rulesets: Sequence[str], settings: dict[str, Any]) -> LintReport:
    ruleset = lint.load_rulesets(list(rulesets) or [RECOMMENDED])  # a bad ruleset fails before any call
    async with open_client(**settings, announce=_say) as client:
        return await lint.lint_area(client, ruleset, source=target_label(settings.get("url")))


def lint_options(func: F) -> F:
    """``--lint``, ``--ruleset`` and ``--fail-severity`` for ``plan`` and ``apply``."""
    opts = [
        click.option("--lint", "lint", is_flag=True,
                     help="Run the lint rules on the manifests first; refuse on findings at or "
                          "above --fail-severity."),
        click.option("--ruleset", "rulesets", multiple=True, metavar="FILE",
                     help="With --lint: " + _RULESET_HELP),
        click.option("--fail-severity", type=click.Choice(SEVERITIES), default="error",
                     show_default=True, help="With --lint: " + _SEVERITY_HELP),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def lint_gate(ctx: click.Context, paths: Sequence[str], overlays: Sequence[str]) -> None:
    """With ``--lint``: lint the manifests, print the findings on stderr, and raise
    :class:`ApimctlError` (exit 1) when any is at or above ``--fail-severity``."""
    params = ctx.params
    if not params.get("lint"):
        return
    if not paths:
        raise click.UsageError("--lint checks manifests: give PATH... (a saved --plan was "
                               "linted when it was made with plan --lint)")
    threshold = cast(Severity, params.get("fail_severity") or "error")
    report = lint.lint_paths(paths, overlays, rulesets=params.get("rulesets") or ())
    for warning in report.warnings:
        _say(f"Warning: {warning}")
    for finding in report.findings:
        _say(sensitive.scrub(str(finding)))
    verdict = summary(report, threshold)
    if report.failures(threshold):
        raise ApimctlError(f"lint: {verdict} Refusing to {ctx.info_name or 'continue'}.")
    _say(f"lint: {verdict}")


def _say(line: str) -> None:
    click.echo(line, err=True)
