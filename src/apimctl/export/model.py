"""The values an export produces: its files (:class:`ExportFile`) and the whole result
(:class:`Export`).

:mod:`apimctl.export.dump` makes the files, :mod:`apimctl.export.area` returns the
:class:`Export`, :mod:`apimctl.export.layout` writes it, and ``apimctl export``
(:mod:`apimctl.cli.export`) reports on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ExportFile:
    """One file of an export: its name (relative to the output directory) and its text."""

    name: str
    text: str


@dataclass
class Export:
    """The result of an export: the files, the variables they reference, the kinds written."""

    files: list[ExportFile] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # live fields the manifests cannot hold
