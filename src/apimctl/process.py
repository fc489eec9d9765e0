"""What one apimctl command keeps until its process ends.

The console script ends its process without taking the interpreter apart
(:func:`apimctl.cli.common.exit_process`). The large values a command is done with before
it prints its result (the manifests: a million objects at 50,000 endpoints) need not be
taken apart one object at a time either, a tenth of a second just before the process ends:
:func:`keep` holds them until then, once the console script has said that the process ends
with the command (:func:`ending_with_command`). A program that imports apimctl never says
so, and its values are freed as usual.
"""

from __future__ import annotations

_kept: list[object] = []
_ending = False


def ending_with_command() -> None:
    """The process ends when the command does (the console script): :func:`keep` keeps."""
    global _ending
    _ending = True


def keep(value: object) -> None:
    """Hold ``value`` until the process ends, when it ends with the command; else nothing."""
    if _ending:
        _kept.append(value)
