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
@click.option("--from", "source", required=True, metavar="AREA", help="The area whose version is promoted.")
@click.option("--to", "target", required=True, metavar="AREA",
              help="The area that gets it (its overlay is edited), or 'base' for every area.")
@click.option("--only", "only", multiple=True, metavar="KIND:KEY",
              help="Only this object (with what it holds), e.g. service:Payments or "
                   "endpoint:Payments/Forecast. Repeatable; default: every difference.")
@click.option("--repo", default=".", show_default=True, type=click.Path(exists=True, file_okay=False),
              help="The repository: DIR/base and DIR/overlays/NAME.")
def command(source: str, target: str, only: tuple[str, ...], repo: str) -> int:
    """Give area --to what area --from has: edit the overlay of --to (or the base), keeping
    comments and key order, so the pull request carries the promotion.

    Then plan and apply as usual: apimctl plan REPO/base --overlay REPO/overlays/AREA.
    """
    from apimctl.areas.promote import PromoteRequest, plan_promotion, write_promotion

    promotion = plan_promotion(PromoteRequest(repo, source, target, only))
    if not promotion.changes:
        click.echo(f"Nothing to promote: {target} already has what {source} has there.", err=True)
        return EXIT_OK
    written = write_promotion(promotion)
    for path in written:
        click.echo(f"Edited {path}", err=True)
    click.echo(f"Promoted from {source} to {target}: {', '.join(promotion.promoted)}", err=True)
    return EXIT_OK
