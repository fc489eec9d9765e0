"""Manifests: the YAML files that describe an area, read into one validated document.

The first stage of the pipeline (manifests -> validation -> normalise -> diff -> plan ->
apply). ``plan``, ``apply``, ``drift`` and ``export`` call :func:`load_manifests`;
``apimctl validate`` calls :func:`validate`. The stages, one module each: ``loader`` (files,
YAML with positions, ``${VAR}`` substitution via ``variables``), ``merge`` (files into one),
``overlay`` (``--overlay DIR``), ``schema`` (the JSON Schema), ``checks`` (references and
rules beyond the schema), ``canonical`` (shorthand expansion); ``pipeline`` runs them.

Public interface::

    Position(file, line, col)                   1-based; line 0 = the whole file
    Manifest(doc, positions, secret_refs, files, warnings).where(path)
    load_manifests(paths, overlays=(), env=None) -> Manifest      raises ManifestError
    validate_paths(paths, overlays=(), env=None) -> list[Problem] never raises for input
    validate(paths, overlays=(), env=None) -> ValidationResult    problems, files, objects
    SECRET_FIELDS                               path patterns of secret fields ("*" = index)
    is_secret_path(path) -> bool
"""

from __future__ import annotations

from collections.abc import Sequence

from apimctl.manifests.checks import SECRET_FIELDS
from apimctl.manifests.identity import pattern
from apimctl.manifests.model import JsonPath, Manifest, Position, format_path
from apimctl.manifests.pipeline import ValidationResult, load_manifests, validate, validate_paths
from apimctl.manifests.schema import manifest_schema, schema_text


def is_secret_path(path: Sequence[str | int]) -> bool:
    """Whether ``path`` (a path in ``Manifest.doc``) is a secret field."""
    return pattern(tuple(path)) in SECRET_FIELDS


__all__ = [
    "SECRET_FIELDS",
    "JsonPath",
    "Manifest",
    "Position",
    "ValidationResult",
    "format_path",
    "is_secret_path",
    "load_manifests",
    "manifest_schema",
    "schema_text",
    "validate",
    "validate_paths",
]
