"""``apimctl export --openapi``: the services of an area as OpenAPI 3.1 documents.

:func:`export_openapi` exports the area's services as manifests (the export of
:mod:`apimctl.export`, so defaults are left out and secrets are references), describes each
chosen service (:func:`apimctl.openapi.describe.describe_service`), checks each document with
the validator the import uses, and returns them with their YAML text; :func:`write_documents`
writes them into a directory, one ``<service>.openapi.yaml`` each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.export.command import Connect, ExportRequest, export
from apimctl.openapi.describe import describe_service


@dataclass(frozen=True)
class ServiceDocument:
    """The OpenAPI document of one service, and its YAML."""

    service: str
    document: dict[str, Any]
    text: str

    @property
    def file_name(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.service.lower()).strip("-") or "unnamed"
        return f"{slug}.openapi.yaml"


async def export_openapi(connect: Connect, *, services: Sequence[str] = (),
                         target: str = "") -> list[ServiceDocument]:
    """The documents of the area's services (only those named in ``services``, if given)."""
    request = ExportRequest(kinds=(kinds.SERVICE.manifest_key,), target=target)
    done = await export(request, connect)
    manifest = yaml.safe_load(done.export.files[0].text) or {}
    found = list(manifest.get(kinds.SERVICE.manifest_key) or [])
    names = {str(s["name"]) for s in found}
    missing = [name for name in services if name not in names]
    if missing:
        raise ApimctlError(f"--service: the area has no service named {', '.join(map(repr, missing))}"
                           f" (it has: {', '.join(sorted(names)) or 'none'})")
    chosen = [s for s in found if not services or s["name"] in services]
    return [_document(s) for s in chosen]


def _document(service: dict[str, Any]) -> ServiceDocument:
    doc = describe_service(service)
    try:
        validate(doc)
    except OpenAPIValidationError as exc:  # a describe bug, not the user's
        raise ApimctlError(f"the OpenAPI document of service {service['name']!r} is not valid: "
                           f"{exc.message}") from None
    text = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return ServiceDocument(str(service["name"]), doc, text)


class _Dumper(yaml.SafeDumper):
    """Writes a value met twice twice, never as an anchor and alias."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_documents(documents: Sequence[ServiceDocument], out_dir: str) -> list[str]:
    """Write each document into ``out_dir``; the paths written."""
    folder = Path(out_dir)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for document in documents:
            path = folder / document.file_name
            path.write_text(document.text, encoding="utf-8")
            written.append(str(path))
    except OSError as exc:
        raise ApimctlError(f"cannot write the OpenAPI documents to {out_dir}: {exc}") from None
    return written
