"""``apimctl matrix [--changed-files FILE]``: the areas a change touches, as GitHub's
``strategy.matrix`` (``fromJSON()`` of this output).

Reads the ``[areas.NAME]`` of the repository's ``apimctl.toml`` (:mod:`apimctl.cli.fleet`)
and prints one line of JSON, ``{"include": [{"area", "profile", "args", "gates"}, ...]}``, in
apply's order: ``args`` are ``plan``'s manifest arguments (PATH... ``--overlay DIR``),
``gates`` apply's refusals (``--max-deletes N``), each a list of arguments (no shell quoting
to undo: ``jq -r '.args[]'``). Offline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from apimctl.cli.common import EXIT_OK
from apimctl.cli.fleet import AreasError, find_fleet


@click.command("matrix")
@click.option("--changed-files", "changed_files", metavar="FILE",
              help="The changed files, one a line (git diff --name-only); - reads stdin. "
                   "Without it: every area.")
@click.option("--config", "config", type=click.Path(dir_okay=False), metavar="FILE",
              help="The file declaring the areas (default: the repository's apimctl.toml).")
def command(changed_files: str | None, config: str | None) -> int:
    """Print the CI matrix (JSON) of the areas a change touches, in apply's order.

    An area is touched when a changed file lies under its paths or overlays; a change of
    apimctl.toml itself touches every area. No area touched prints {"include": []}, which
    GitHub refuses as a matrix: guard the job with if: (see the README).
    """
    fleet = find_fleet(config)
    areas = list(fleet.areas) if changed_files is None else fleet.touched(_changed(changed_files))
    click.echo(json.dumps(fleet.matrix(areas), separators=(",", ":")))
    return EXIT_OK


def _changed(source: str) -> list[str]:
    if source == "-":
        return sys.stdin.read().splitlines()
    try:
        return Path(source).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AreasError(f"{source}: cannot read the changed files: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise AreasError(f"{source}: not UTF-8 text (byte offset {exc.start})") from None
