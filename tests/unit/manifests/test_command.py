"""The core function of ``apimctl validate``, without click: every problem returned as a value."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from apimctl.manifests.command import ValidateRequest, validate


def test_validate_returns_every_problem(manifests: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORE_TEST_UNSET", raising=False)
    path = manifests("roles: [{name: Partners, colour: red}, {name: '${CORE_TEST_UNSET}'}]\n")
    strict = validate(ValidateRequest((path,)))
    assert not strict.valid and strict.errors == 2 and strict.files == [path]
    lenient = validate(ValidateRequest((path,), allow_missing_vars=True))
    assert lenient.errors == 1 and lenient.warnings == 1
