"""`apimctl export`: the live configuration of an area as manifests (bootstrap).

The adapter around :func:`apimctl.export.command.export`: it parses the options, hands the
core a way to open the client (:func:`apimctl.cli.target.open_client`), and prints the single
document on stdout unless the core wrote the files into ``--out DIR``. What was written, and
which environment variables the secret references need, goes to stderr. With ``--openapi`` it
describes the services as OpenAPI 3.1 documents instead (:mod:`apimctl.openapi.area`).

Exit codes: 0 exported, 1 error.
"""

from __future__ import annotations

from typing import Any

import click

from apimctl.cli.common import EXIT_OK, connection_options
from apimctl.cli.completers import complete_top_level_kinds
from apimctl.cli.running import deadline_of, run_command
from apimctl.cli.target import connection_settings, open_client, target_label
from apimctl.export import LAYOUTS, Layout
from apimctl.export.command import ExportRequest, export


def _split_kinds(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command("export")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Directory to write the manifests into (default: print one document on stdout).")
@click.option("--kinds", "kinds_", multiple=True, metavar="KIND[,KIND...]",
              shell_complete=complete_top_level_kinds,
              help="Only these top-level kinds (services, packages, roles, domains, "
                   "scheduledMaintenanceEvents), plus the kinds they refer to. Repeatable.")
@click.option("--layout", type=click.Choice(LAYOUTS), default="single", show_default=True,
              help="single: one apimctl.yaml; per-service: one file per service plus one per kind.")
@click.option("--with-ids", is_flag=True, help="Pin every object to its live id (`id:`).")
@click.option("--into", "into", type=click.Path(file_okay=False),
              help="With --area NAME=TARGET (repeatable): export several areas into one repository, "
                   "DIR/base (what they share) and DIR/overlays/NAME (what differs in each).")
@click.option("--rewrite", "rewrite", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --into: values that differ between areas by a rule (hosts, name prefixes), "
                   "written as variables of the base with each area's value.")
@click.option("--openapi", "openapi", is_flag=True,
              help="Write an OpenAPI 3.1 document per service instead of manifests.")
@click.option("--service", "services", multiple=True, metavar="NAME",
              help="With --openapi: only this service (repeatable).")
@connection_options
@click.pass_context
def command(ctx: click.Context, /, out_dir: str | None, kinds_: tuple[str, ...], layout: str,
            with_ids: bool, openapi: bool, services: tuple[str, ...], into: str | None = None,
            rewrite: str | None = None, **_connection: Any) -> int:
    """Write the live configuration of the area as manifests that plan to zero changes.

    Defaults are omitted, ids too unless --with-ids, and secrets are written as ${VAR}
    references (never values); the variables to set are listed on stderr and in each file's
    header. Two exports of the same area are byte-identical. With --into DIR and --area
    NAME=TARGET for each area (a profile or a URL): one base and one overlay per area, each
    planning to zero changes with: apimctl plan DIR/base --overlay DIR/overlays/NAME.
    """
    areas: tuple[str, ...] = tuple(ctx.params.get("area") or ())
    if into is not None or rewrite is not None:
        return _into(ctx, into, rewrite, areas, bool(out_dir or kinds_ or with_ids or openapi or services
                                                     or layout != "single"))
    if len(areas) > 1:
        raise click.UsageError("several --area values export several areas: give --into DIR")
    ctx.params["area"] = areas[0] if areas else None  # the token exchange's area
    if openapi or services:
        return _openapi(ctx, out_dir, services, bool(kinds_ or with_ids or layout != "single"))
    if layout == "per-service" and not out_dir:
        raise click.UsageError("--layout per-service writes several files: give --out DIR")
    settings = connection_settings(ctx)
    chosen: Layout = "per-service" if layout == "per-service" else "single"
    request = ExportRequest(kinds=tuple(_split_kinds(kinds_)), with_ids=with_ids, layout=chosen,
                            out=out_dir, target=target_label(settings.get("url")))
    done = run_command(lambda: export(request, lambda: open_client(**settings, announce=_say), notice=_say),
                       deadline_of(ctx), _say, done="no file was written")
    result = done.export
    if out_dir is None:
        click.echo(result.files[0].text, nl=False)
    else:
        for path in done.removed:
            _say(f"Removed {path} (written by an earlier export; no longer in the area)")
        files = "1 file" if len(done.written) == 1 else f"{len(done.written)} files"
        _say(f"Wrote {files} to {out_dir} ("
             + ", ".join(f"{k}: {n}" for k, n in result.counts.items()) + ")")
        for path in done.foreign:
            _say(f"Warning: {path} was not written by this export and will be merged with it")
    for path in result.dropped:
        _say(f"Warning: {path} not exported: the area returned a field manifests do not hold")
    if result.variables:
        _say("Secrets are written as references; set these environment variables before "
             "plan/apply: " + ", ".join(result.variables))
    return EXIT_OK


def _openapi(ctx: click.Context, out_dir: str | None, services: tuple[str, ...],
             other_options: bool) -> int:
    from apimctl.openapi.area import export_openapi, write_documents

    if other_options:
        raise click.UsageError("--openapi describes services: --kinds, --layout and --with-ids "
                               "are for manifests")
    if services and not ctx.params.get("openapi"):
        raise click.UsageError("--service chooses the services of --openapi: give --openapi")
    settings = connection_settings(ctx)
    documents = run_command(lambda: export_openapi(lambda: open_client(**settings, announce=_say),
                                                   services=services,
                                                   target=target_label(settings.get("url"))),
                            deadline_of(ctx), _say, done="no file was written")
    if out_dir is None:
        click.echo("---\n".join(d.text for d in documents), nl=False)
    else:
        written = write_documents(documents, out_dir)
        _say(f"Wrote {len(written)} OpenAPI document{'s' if len(written) != 1 else ''} to {out_dir}")
    return EXIT_OK


def _into(ctx: click.Context, into: str | None, rewrite: str | None, areas: tuple[str, ...],
          other_options: bool) -> int:
    from apimctl.areas.exporting import AreasRequest, export_areas
    from apimctl.cli.areas import area_source, split_area

    if into is None:
        raise click.UsageError("--rewrite is for several areas: give --into DIR and --area NAME=TARGET")
    if other_options:
        raise click.UsageError("--into writes base and overlays: --out, --kinds, --layout, --with-ids "
                               "and --openapi are for one area")
    if not areas:
        raise click.UsageError("--into DIR: give each area as --area NAME=TARGET (a profile or a URL)")
    sources = tuple(area_source(ctx, *split_area(value), _say) for value in areas)
    request = AreasRequest(sources, into, rewrite)
    done = run_command(lambda: export_areas(request), deadline_of(ctx), _say, done="no file was written")
    base = sum(len(v) for v in done.split.base.values())
    _say(f"Wrote {len(done.written)} files to {into}: base/ ({base} top-level objects shared)")
    for name, docs in done.split.overlays.items():
        count = sum(len(v) for v in docs.values())
        _say(f"  overlays/{name}/ ({done.dialects.get(name, '')}): {count} top-level objects differ; "
             f"plan with: apimctl plan {into}/base --overlay {into}/overlays/{name}")
    if done.secrets:
        _say("Secrets are written as references; set these environment variables before "
             "plan/apply: " + ", ".join(done.secrets))
    return EXIT_OK


def with_areas(cmd: click.Command) -> click.Command:
    """``--area`` of ``export`` is repeatable: several areas with --into, else the token
    exchange's area (one value)."""
    for index, param in enumerate(cmd.params):
        if param.name == "area":
            cmd.params[index] = click.Option(
                ["--area"], multiple=True, envvar="APIMCTL_AREA", metavar="NAME=TARGET",
                help="With --into: an area to export (NAME=PROFILE or NAME=URL; repeatable). "
                     "Otherwise the area (scope) for the token exchange.")
    return cmd


command = with_areas(command)


def _say(line: str) -> None:
    click.echo(line, err=True)
