"""The idioms apimctl's speed work repeats, written once.

- :func:`collector_paused`: the cyclic garbage collector paused while many small, acyclic
  containers are made (decoding pages, building the live model, loading manifests,
  unpickling a worker's call): each collection would otherwise walk every object made so
  far, again and again.
- :func:`per_name`: a value computed once per named table (a kind, a dialect) and kept,
  made again only when a new table of the same name replaces it (tests derive kinds with
  ``dataclasses.replace``).
- :func:`is_mapping`: ``isinstance(value, Mapping)`` for values that are nearly always dicts,
  answered for a dict without the abstract class's check.

This module depends on nothing else of apimctl, so every layer may use it.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar


@contextmanager
def collector_paused(*, promote: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector for the ``with`` block, when it runs.

    ``promote``: the objects made meanwhile are kept (the live model, the manifests): they go
    to the oldest generation when the collector resumes, rather than being scanned at once by
    the next collection of the youngest (half a second at 50,000 endpoints). A paused
    collector (an outer pause, or a program that turned it off) is left as it is."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if promote:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


class Named(Protocol):
    """Anything with a ``name``: kinds and dialects."""

    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)
T = TypeVar("T")


def per_name(make: Callable[[N], T]) -> Callable[[N], T]:
    """``make`` memoised by the argument's ``name``, made again when another object of that
    name comes (the objects are immutable tables, unhashable: they hold mappings)."""
    made: dict[str, tuple[N, T]] = {}

    @functools.wraps(make)
    def memo(table: N) -> T:
        found = made.get(table.name)
        if found is None or found[0] is not table:
            found = made[table.name] = (table, make(table))
        return found[1]

    return memo


def is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, answering for a dict (nearly always) without the ABC."""
    return type(value) is dict or isinstance(value, Mapping)
