"""`apimctl promote --from A --to B [--only KIND:KEY ...]`: move differences between the areas
of a repository (``--repo DIR``, as ``export --into`` writes it) by editing B's overlay, or the
base with ``--to base``; nothing is sent to an area: plan and apply B as usual.

The adapter around :mod:`apimctl.areas.promote`. Exit codes: 0 promoted (or nothing to
promote), 1 error (nothing written).
"""

from __future__ import annotations

import click

from apimctl.cli.common import EXIT_OK


@click.command("promote")
@click.option("--from", "source", metavar="AREA", help="The area whose version is promoted.")
@click.option("--to", "target", metavar="AREA",
              help="The area that gets it (its overlay is edited), or 'base' for every area.")
@click.option("--only", "only", multiple=True, metavar="KIND:KEY",
              help="Only this object (with what it holds), e.g. service:Payments or "
                   "endpoint:Payments/Forecast. Repeatable; default: every difference.")
@click.option("--repo", default=".", show_default=True, type=click.Path(exists=True, file_okay=False),
              help="The repository: DIR/base and DIR/overlays/NAME.")
@click.option("--copy", "copied", metavar="KIND:NAME",
              help="Within one area: copy this top-level object (with what it holds) in the manifests "
                   "at --in, under the names --rename makes (DEV Payments -> QA Payments).")
@click.option("--rename", "renames", multiple=True, metavar="OLD=NEW",
              help="With --copy: replace OLD by NEW in every string of the copy (repeatable).")
@click.option("--in", "manifests", type=click.Path(exists=True), metavar="PATH",
              help="With --copy: the manifests (a file or a directory) declaring the object.")
def command(source: str | None, target: str | None, only: tuple[str, ...], repo: str,
            copied: str | None = None, renames: tuple[str, ...] = (), manifests: str | None = None) -> int:
    """Give area --to what area --from has: edit the overlay of --to (or the base), keeping
    comments and key order, so the pull request carries the promotion.

    Then plan and apply as usual: apimctl plan REPO/base --overlay REPO/overlays/AREA. Within
    one area, --copy KIND:NAME --rename OLD=NEW --in PATH copies an object under new names.
    """
    from apimctl.areas.promote import (
        CopyRequest,
        PromoteRequest,
        plan_copy,
        plan_promotion,
        write_promotion,
    )

    if copied is not None:
        if source or target or only or not manifests:
            raise click.UsageError("--copy works within the manifests of --in PATH: no --from, --to or --only")
        pairs = []
        for text in renames:
            old, sep, new = text.partition("=")
            if not sep or not old:
                raise click.UsageError(f"--rename {text!r}: expected OLD=NEW")
            pairs.append((old, new))
        promotion = plan_copy(CopyRequest(manifests, copied, tuple(pairs)))
        for path in write_promotion(promotion):
            click.echo(f"Edited {path}", err=True)
        click.echo(f"Copied {', '.join(promotion.promoted)}", err=True)
        return EXIT_OK
    if not source or not target:
        raise click.UsageError("give --from AREA and --to AREA (or --copy KIND:NAME within one area)")
    promotion = plan_promotion(PromoteRequest(repo, source, target, only))
    if not promotion.changes:
        click.echo(f"Nothing to promote: {target} already has what {source} has there.", err=True)
        return EXIT_OK
    written = write_promotion(promotion)
    for path in written:
        click.echo(f"Edited {path}", err=True)
    click.echo(f"Promoted from {source} to {target}: {', '.join(promotion.promoted)}", err=True)
    return EXIT_OK
