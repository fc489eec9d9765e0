"""``apimctl import openapi SPEC``: an OpenAPI (or Swagger) document as a service manifest.

The adapter around :mod:`apimctl.openapi`: it turns the options into
:class:`~apimctl.openapi.ImportOptions` (endpoint fields given on the command line apply to
every endpoint, over the document's own ``x-apimctl-endpoint``), imports the document, and
prints the manifest (``--out -``, the default), writes it to a file (``--out FILE``), or
updates the manifests of a directory in place (``--into DIR``, keeping hand edits). What the
import left out and what the re-import did go to stderr.

A ``$ref`` is followed only inside the document and to files under its folder; a URL only on
a host given with ``--allow-ref-host``. ``--lenient`` imports a document whose problems lie
only in parts the import does not read, and says what it ignored.

Exit codes: 0 imported, 1 error (an unreadable, invalid or unsupported document).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from apimctl.cli.common import EXIT_OK, envvar
from apimctl.cli.group import assign_envvars
from apimctl.errors import ApimctlError
from apimctl.openapi import (
    GROUPINGS,
    ImportOptions,
    Merge,
    OpenApiError,
    import_openapi,
    merge_into,
    new_file_text,
)
from apimctl.openapi.document import ReadOptions
from apimctl.openapi.mapping import Grouping

_LOCATIONS = ("request-parameters", "request-path", "request-body", "request-header", "custom")
_REQUEST_TIMEOUTS = ("2", "5", "10", "20", "30", "45", "60")
_RESPONSE_TIMEOUTS = (*_REQUEST_TIMEOUTS, "120", "300", "600", "900", "1200")
_LENIENT_HINT = ("These problems lie only in parts the import does not read (schemas, responses, "
                 "parameters): --lenient imports the paths and operations anyway.")
_GROUP_HELP = ("One endpoint per path (default: a path's operations share it), per static path "
               "prefix (/pets and /pets/{id} together), or per first tag.")


@click.group("import")
def command() -> None:
    """Make manifests from another description of the APIs (import openapi SPEC)."""


@command.command("openapi")
@click.argument("spec", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--service", help="Name of the service (default: x-apimctl-service.name, else info.title).")
@click.option("--group", type=click.Choice(GROUPINGS), default="path", show_default=True,
              help=_GROUP_HELP)
@click.option("--out", default="-", show_default=True, metavar="FILE|-",
              help="Write the manifest to FILE, or to stdout with -.")
@click.option("--into", "into", type=click.Path(file_okay=False), metavar="DIR",
              help="Update the service in the manifests of DIR in place (a new file when none "
                   "holds it): generated fields are set, fields you added and comments are kept.")
@click.option("--prune", is_flag=True,
              help="With --into: remove endpoints and methods the document no longer has.")
@click.option("--public-domain", "public_domains", multiple=True, metavar="HOST",
              help="Public host name of the endpoints (repeatable; default: the servers' hosts).")
@click.option("--path-prefix", metavar="PATH",
              help="Prefix of every requestPathAlias (default: the path of the first server URL).")
@click.option("--traffic-manager-domain", metavar="HOST",
              help="trafficManagerDomain of every endpoint (default: its first public host).")
@click.option("--system-domain", "system_domains", multiple=True, metavar="HOST",
              help="Back-end host of every endpoint (repeatable).")
@click.option("--error-set", metavar="NAME", help="Error set every endpoint answers with.")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Allow browser calls from ORIGIN only (repeatable): CORS for every endpoint.")
@click.option("--key-location", type=click.Choice(_LOCATIONS),
              help="Where callers put the API key (default: the apiKey security scheme's place).")
@click.option("--key-name", metavar="NAME", help="Name of the API key's field, with --key-location.")
@click.option("--request-timeout", type=click.Choice(_REQUEST_TIMEOUTS),
              help="Seconds to connect to the back end (connectionTimeoutForSystemDomainRequest).")
@click.option("--response-timeout", type=click.Choice(_RESPONSE_TIMEOUTS),
              help="Seconds for the back end to answer (connectionTimeoutForSystemDomainResponse).")
@click.option("--allow-ref-host", "allow_ref_hosts", multiple=True, metavar="HOST",
              help="Fetch a $ref to an http(s) URL on HOST (repeatable; default: no $ref is fetched "
                   "over the network).")
@click.option("--lenient", is_flag=True,
              help="Import the paths and operations even when the document has problems, if they "
                   "lie only in parts the import does not read (schemas, responses, parameters); "
                   "each is reported as a warning. Operations on a path with a #fragment are left "
                   "out.")
def openapi(spec: str, service: str | None, group: str, out: str, into: str | None, prune: bool,
            public_domains: tuple[str, ...], path_prefix: str | None,
            allow_ref_hosts: tuple[str, ...], lenient: bool, **fields: Any) -> int:
    """Turn the OpenAPI 3.0/3.1 or Swagger 2.0 document SPEC (YAML or JSON; - reads stdin)
    into a service.

    The document is validated first. A $ref is followed inside the document and to files
    under the document's folder (not through a symbolic link that leaves it); a $ref to a
    URL only when its host is given with --allow-ref-host; any other is refused. Endpoints
    come from the paths, supportedHttpMethods from the operations, methods from the
    operationIds, public domains and path prefix from the servers, other fields from
    x-apimctl-endpoint and x-apimctl-service extensions and these options.
    """
    if prune and not into:
        raise click.UsageError("--prune removes endpoints from the manifests of --into DIR: give --into")
    chosen: Grouping = "tag" if group == "tag" else "prefix" if group == "prefix" else "path"
    options = ImportOptions(service=service, group=chosen, public_domains=public_domains,
                            path_prefix=path_prefix, endpoint=_endpoint_fields(**fields),
                            read=ReadOptions(allow_ref_hosts, lenient))
    try:
        imported = import_openapi(spec, options)
    except OpenApiError as exc:
        if exc.lenient_would_help:
            raise ApimctlError(f"{exc}\n{_LENIENT_HINT}") from None
        raise
    for warning in imported.warnings:
        _say(f"Warning: {warning}")
    source = "stdin" if spec == "-" else Path(spec).name
    if into:
        _report(merge_into(into, imported.service, source, prune=prune))
    elif out == "-":
        click.echo(new_file_text(imported.service, source), nl=False)
    else:
        try:
            Path(out).write_text(new_file_text(imported.service, source), encoding="utf-8")
        except OSError as exc:
            raise ApimctlError(f"cannot write {out}: {exc.strerror or exc}") from None
        _say(f"Wrote {out} (service {imported.service['name']!r})")
    return EXIT_OK


def _endpoint_fields(traffic_manager_domain: str | None, system_domains: tuple[str, ...],
                     error_set: str | None, cors_origins: tuple[str, ...], key_location: str | None,
                     key_name: str | None, request_timeout: str | None,
                     response_timeout: str | None) -> dict[str, Any]:
    if key_name and not key_location:
        raise click.UsageError("--key-name names the key's field at --key-location: give both")
    given: dict[str, Any] = {
        "trafficManagerDomain": traffic_manager_domain,
        "systemDomains": list(system_domains) or None,
        "errorSet": error_set,
        "cors": {"allDomainsEnabled": False, "domainsAllowed": list(cors_origins)} if cors_origins else None,
        "apiKeyValueLocations": [key_location] if key_location else None,
        "apiKeyValueLocationKey": key_name,
        "connectionTimeoutForSystemDomainRequest": int(request_timeout) if request_timeout else None,
        "connectionTimeoutForSystemDomainResponse": int(response_timeout) if response_timeout else None,
    }
    return {k: v for k, v in given.items() if v is not None}


def _report(merge: Merge) -> None:
    if merge.created:
        _say(f"Wrote {merge.file}: a new file with {_count(len(merge.added))}")
        return
    if not merge.written:
        _say(f"No changes: {merge.file} already matches the document")
    else:
        parts = [f"{_count(len(merge.added))} added", f"{len(merge.updated)} updated"]
        if merge.removed:
            parts.append(f"{len(merge.removed)} removed")
        _say(f"Updated {merge.file}: " + ", ".join(parts))
    kept = [name for name in merge.gone if name not in merge.removed]
    if kept:
        _say("Warning: the document no longer has these endpoints (kept; --prune removes them): "
             + ", ".join(kept))
    if merge.gone_methods:
        what = "removed" if merge.pruned else "kept; --prune removes them"
        _say(f"Warning: the document no longer has these methods ({what}): "
             + ", ".join(merge.gone_methods))


def _count(n: int) -> str:
    return f"{n} endpoint" if n == 1 else f"{n} endpoints"


def _say(line: str) -> None:
    click.echo(line, err=True)


# Its options' variables are APIMCTL_IMPORT_<NAME> (as serve's are APIMCTL_SERVE_<NAME>): an
# APIMCTL_OUT or APIMCTL_PRUNE meant for plan and apply must not reach an import.
for _param in openapi.params:
    if isinstance(_param, click.Option):
        _param.envvar = envvar("import_" + max(_param.opts, key=len).lstrip("-"))
assign_envvars("import", openapi)
