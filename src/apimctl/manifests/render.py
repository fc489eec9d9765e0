"""The effective manifests: what the base and the overlays add up to, variables substituted,
secrets masked. The core of ``apimctl render``, for a reviewer who wants to see what an
overlay produced.

Secret fields never show their value: one written as a ``${VAR}`` reference shows the
reference, a literal shows :data:`MASK`; as in ``plan``, so does a field secret by its name
and any value that is or holds one registered with :mod:`apimctl.sensitive` (credentials,
environment values a manifest may not show). ``mock_env`` fills variables that are not set with
placeholders (``MOCK_<NAME>``), so a CI job without the secrets can render too; the
placeholders used are listed in the result.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apimctl import sensitive
from apimctl.manifests.checks import secret_paths
from apimctl.manifests.environment import MockEnv
from apimctl.manifests.model import JsonPath
from apimctl.manifests.pipeline import load_manifests

MASK = "(sensitive)"
@dataclass
class Rendered:
    """The effective document (secrets masked), the files read, warnings, and the variables
    filled with placeholders."""

    doc: dict[str, Any]
    files: list[str]
    warnings: list[str] = field(default_factory=list)
    mocked: list[str] = field(default_factory=list)


def render_manifests(paths: Sequence[str], overlays: Sequence[str] = (),
                     env: Mapping[str, str] | None = None, *, mock_env: bool = False) -> Rendered:
    """The manifests at ``paths`` with ``overlays`` applied and variables substituted, as
    one document whose secrets are masked. Raises
    :class:`~apimctl.errors.ManifestError` like :func:`load_manifests`."""
    base = os.environ if env is None else env
    source: Mapping[str, str] = MockEnv(base) if mock_env else base
    manifest = load_manifests(paths, overlays, source)
    doc = copy.deepcopy(manifest.doc)
    secret_at = list(secret_paths(doc))
    sensitive.register(*(_get(doc, path) for path in secret_at))  # a copy elsewhere is masked too
    for path in secret_at:
        _set(doc, path, manifest.secret_refs.get(path, MASK))
    doc = _masked(doc)
    mocked = sorted(source.mocked) if isinstance(source, MockEnv) else []
    return Rendered(doc, list(manifest.files), [str(w) for w in manifest.warnings], mocked)


def _masked(value: Any, name: str = "") -> Any:
    """``value`` masked as ``plan`` masks it: a field secret by its name, and any value that
    is or holds a registered one (a credential, an environment value not declared public)."""
    if isinstance(value, dict):
        return {k: _masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, name) for v in value]
    if name in sensitive.SECRET_FIELD_NAMES and isinstance(value, str) and value and not value.startswith("${"):
        return MASK
    return MASK if sensitive.masks(value) else value


def _get(doc: dict[str, Any], path: JsonPath) -> str | None:
    holder: Any = doc
    for part in path:
        holder = holder[part]
    return holder if isinstance(holder, str) else None


def _set(doc: dict[str, Any], path: JsonPath, value: str) -> None:
    holder: Any = doc
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = value
