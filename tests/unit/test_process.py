"""``apimctl.process``: large values kept until the process ends, only when it ends with
the command (the console script); a program importing apimctl frees them as usual."""

from __future__ import annotations

import gc
import weakref

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
