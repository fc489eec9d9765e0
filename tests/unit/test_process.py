"""``apimctl.process``: large values kept until the process ends, only when it ends with
the command (the console script); a program importing apimctl frees them as usual."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from apimctl import process


class _Value:
    pass


def test_values_are_kept_only_once_the_process_ends_with_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "_kept", [])
    monkeypatch.setattr(process, "_ending", False)
    value = _Value()
    freed = weakref.ref(value)
    process.keep(value)
    del value
    gc.collect()
    assert freed() is None  # a library caller's values are freed as usual
    process.ending_with_command()
    value = _Value()
    kept = weakref.ref(value)
    process.keep(value)
    del value
    gc.collect()
    assert kept() is not None


def test_the_core_hands_the_manifests_to_its_callers_keep() -> None:
    """``plan``, ``apply`` and ``drift`` read the manifests through ``read_manifests``: the
    caller's ``keep`` gets them (the console script passes :func:`process.keep`); by default
    the core keeps nothing."""
    from apimctl.manifests import Manifest
    from apimctl.planning.command import quiet, read_manifests

    folder = Path(__file__).resolve().parents[1] / "scenarios" / "001-create-from-empty" / "manifests"
    kept: list[object] = []
    manifest = read_manifests((str(folder),), (), (), (), quiet, keep=kept.append)
    assert kept == [manifest] and isinstance(manifest, Manifest)
    value = read_manifests((str(folder),), (), (), (), quiet)
    freed = weakref.ref(value)
    del value
    gc.collect()
    assert freed() is None
