"""How the client verifies the area's TLS certificate: ``--ca-bundle``, the environment, or
``--insecure``.

httpx already reads ``SSL_CERT_FILE``/``SSL_CERT_DIR`` and the proxy variables
(``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``); this adds ``--ca-bundle FILE``
(``APIMCTL_CA_BUNDLE``), ``REQUESTS_CA_BUNDLE`` (what Python tools behind a company proxy
usually already set) and ``--insecure``, which turns verification off with a warning on
every run.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable, Mapping

import click

INSECURE_WARNING = ("Warning: --insecure: the area's TLS certificate is not verified; anyone "
                    "on the network path can read the token and change the replies. Use "
                    "--ca-bundle FILE for a private CA instead.")


def verification(ca_bundle: str | None, insecure: bool, environ: Mapping[str, str] | None = None,
                 warn: Callable[[str], None] | None = None) -> ssl.SSLContext | bool:
    """``False`` for ``--insecure`` (after the warning), a context trusting ``--ca-bundle`` or
    ``REQUESTS_CA_BUNDLE``, else ``True`` (httpx's default, which reads ``SSL_CERT_FILE``)."""
    environ = os.environ if environ is None else environ
    if insecure:
        if ca_bundle:
            raise click.UsageError("--insecure and --ca-bundle contradict each other: give one")
        (warn or _stderr)(INSECURE_WARNING)
        return False
    bundle, where = (ca_bundle, "--ca-bundle") if ca_bundle else (None, "")
    if bundle is None and environ.get("REQUESTS_CA_BUNDLE") and not environ.get("SSL_CERT_FILE"):
        bundle, where = environ["REQUESTS_CA_BUNDLE"], "REQUESTS_CA_BUNDLE"
    if bundle is None:
        return True
    try:
        return ssl.create_default_context(cafile=bundle)
    except FileNotFoundError:
        raise click.UsageError(f"{where} {bundle}: no such file") from None
    except (OSError, ssl.SSLError) as exc:
        raise click.UsageError(f"{where} {bundle}: not a PEM file of CA certificates ({exc})") from None


def _stderr(line: str) -> None:
    click.echo(line, err=True)
