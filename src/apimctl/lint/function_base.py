"""What every rule function is made of: the check signature, options errors, the absent value.

Shared by :mod:`apimctl.lint.functions` (the registry and the Spectral core functions) and
:mod:`apimctl.lint.time_functions`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apimctl import sensitive
from apimctl.manifests.model import JsonPath


class _Absent:
    """The value of a field that is not there (``undefined`` in Spectral)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

Result = tuple[JsonPath, str]


@dataclass(frozen=True)
class Context:
    """What a check may need beyond its value: the time "now" means (UTC)."""

    now: datetime


class OptionError(Exception):
    """``functionOptions`` cannot be used; ``path`` is relative to ``functionOptions``."""

    def __init__(self, path: JsonPath, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


Check = Callable[[Any, Any, str, Context], list[Result]]


def _same(options: Any) -> Any:
    return options


@dataclass(frozen=True)
class Function:
    """One rule function: its check, the JSON Schema of its options, how they are prepared."""

    name: str
    check: Check
    summary: str
    options: Mapping[str, Any] | None = None  # None: the function takes no options
    prepare: Callable[[Any], Any] = _same
    on_absent: bool = False


def show(value: Any, limit: int = 60) -> str:
    """A short JSON rendering of ``value`` for a message: scrubbed, then cut (a value read from
    the environment is masked whole, never cut to its first characters)."""
    return sensitive.cut(json.dumps(value, ensure_ascii=False, default=str), limit, "...")
