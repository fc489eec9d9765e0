"""``apimctl validate`` as a function: every problem of the manifests, offline.

The core of ``apimctl.cli.validate``: :func:`validate` runs the manifest pipeline
(:func:`apimctl.manifests.pipeline.validate`) on a :class:`ValidateRequest` and returns its
:class:`~apimctl.manifests.pipeline.ValidationResult`; the CLI renders it. No network is used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from apimctl.manifests import pipeline
from apimctl.manifests.pipeline import ValidationResult
from apimctl.manifests.variables import LenientEnv


@dataclass(frozen=True)
class ValidateRequest:
    """The inputs of one validation. ``allow_missing_vars``: an unset ``${VAR}`` is a
    warning, not an error (for pre-commit and machines without the secrets)."""

    paths: tuple[str, ...]
    overlays: tuple[str, ...] = ()
    allow_missing_vars: bool = False


def validate(request: ValidateRequest) -> ValidationResult:
    """Every problem of the manifests at ``request.paths``, with the files and objects read."""
    env = LenientEnv(os.environ) if request.allow_missing_vars else None
    return pipeline.validate(request.paths, request.overlays, env)
