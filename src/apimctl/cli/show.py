"""``apimctl show PLANFILE [--format text|markdown|json]``: print a saved plan;
``apimctl show --merge [NAME=]PLANFILE...``: one pull-request comment for the plans of several
areas.

A plan saved with ``plan --out FILE`` is read back as ``apply --plan`` reads it (checked
against the plan format, refused when it is not a plan this apimctl can apply) and rendered
as ``plan`` renders it: for a reviewer, a pull-request comment made later, or a tool. Offline:
nothing is read from an area.

With ``--merge`` each file is an area's plan (``NAME=FILE``; a bare ``FILE`` is named by its
stem, ``plans/dev.json`` is ``dev``), rendered by :func:`apimctl.render.merged.render_merged`,
with the gates apply holds for the area (``max_deletes``, ``max_affected_keys`` of its
``[areas.NAME]`` in ``apimctl.toml``, else ``--max-deletes``/``--max-affected-keys``) checked
as apply checks them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import click
from click.core import ParameterSource

from apimctl.applying.command import check_deletes
from apimctl.cli.common import EXIT_CHANGES, EXIT_OK, color_wanted
from apimctl.cli.fleet import NAME, Fleet, declared_fleet, find_fleet
from apimctl.cli.plan import render
from apimctl.errors import PlanError
from apimctl.planning.impact import check_affected_keys
from apimctl.plans.file import load_plan
from apimctl.plans.model import Plan
from apimctl.render.markdown import DEFAULT_LIMIT, MIN_LIMIT
from apimctl.render.merged import AreaReview, keys_cut, render_merged

FORMATS = ("text", "markdown", "json")
_NAMED = re.compile(rf"({NAME.pattern})=(.+)", re.DOTALL)


@click.command("show")
@click.argument("plan_files", metavar="PLANFILE...", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: as plan prints it; markdown: for a pull request; json: the plan format.")
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 2 when the plan has changes (0 when it has none); with --merge, any plan.")
@click.option("--no-color", is_flag=True, help="Plain output.")
@click.option("--merge", is_flag=True,
              help="One Markdown comment for several areas' plans, each [NAME=]PLANFILE.")
@click.option("--config", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --merge: the file declaring the areas and their gates "
                   "(default: the repository's apimctl.toml, when it declares areas).")
@click.option("--max-deletes", type=click.IntRange(min=0), default=None, metavar="N",
              help="With --merge: the gate of areas that declare none, as apply --max-deletes.")
@click.option("--max-affected-keys", type=click.IntRange(min=0), default=None, metavar="N",
              help="With --merge: the gate of areas that declare none, as apply --max-affected-keys.")
@click.option("--allow-missing", is_flag=True,
              help="With --merge: a PLANFILE that does not exist is an area without a plan "
                   "(its plan job failed), shown as refused, not an error.")
@click.option("--artifacts", metavar="TEXT",
              help="With --merge: where the whole plans are (the workflow run's URL), named "
                   "when plans are cut for length.")
@click.option("--limit", type=click.IntRange(min=MIN_LIMIT), default=DEFAULT_LIMIT, show_default=True,
              metavar="N", help="With --merge: the comment's length at most (GitHub takes 65,536).")
@click.pass_context
def command(ctx: click.Context, plan_files: tuple[str, ...], fmt: str, detailed_exitcode: bool,
            no_color: bool, merge: bool, config: str | None, max_deletes: int | None,
            max_affected_keys: int | None, allow_missing: bool, artifacts: str | None,
            limit: int) -> int:
    """Print the plan saved in PLANFILE (by plan --out) without reaching the area.

    The file is checked as apply --plan checks it; a file that is not a saved plan, or one
    of a newer format, is refused with what is wrong.

    With --merge, one pull-request comment for the plans of several areas: a table of the
    areas (counts, keys cut off or tightened, the gates apply holds and any refusal), then
    each area's plan folded, kept under --limit (the largest plans cut first, pointing to
    --artifacts). Areas come in apply's order when apimctl.toml declares them.
    """
    if not merge:
        if len(plan_files) != 1:
            raise click.UsageError("show takes one PLANFILE (several need --merge)")
        plan = load_plan(plan_files[0])
        click.echo(render(plan, fmt, color=color_wanted(no_color)), nl=False)
        return EXIT_CHANGES if detailed_exitcode and plan.has_changes else EXIT_OK
    if ctx.get_parameter_source("fmt") is not ParameterSource.DEFAULT and fmt != "markdown":
        raise click.UsageError("--merge writes Markdown: leave --format out (or give markdown)")
    fleet = _fleet(config)
    areas = _reviews(plan_files, fleet, allow_missing, max_deletes, max_affected_keys)
    click.echo(render_merged(areas, limit=limit, artifacts=artifacts), nl=False)
    changes = any(a.plan is not None and a.plan.has_changes for a in areas)
    return EXIT_CHANGES if detailed_exitcode and changes else EXIT_OK


def _fleet(config: str | None) -> Fleet | None:
    """The declared areas: of ``config``, else of the repository's apimctl.toml (a broken
    ``[areas]`` is an error); ``None`` when none are declared."""
    if config is not None:
        return find_fleet(config)
    fleet = declared_fleet()
    return fleet if fleet is not None and fleet.areas else None


def _reviews(plan_files: tuple[str, ...], fleet: Fleet | None, allow_missing: bool,
             max_deletes: int | None, max_affected_keys: int | None) -> list[AreaReview]:
    named = [_split(item) for item in plan_files]
    seen: dict[str, str] = {}
    for name, path in named:
        if name in seen:
            raise click.UsageError(f"area {name!r} is given twice ({seen[name]} and {path}): "
                                   "name each plan NAME=PLANFILE")
        seen[name] = path
    reviews = []
    for rank, (name, path) in enumerate(named):
        area = fleet.named(name) if fleet is not None else None
        if area is not None:
            most_deletes, most_keys = area.max_deletes, area.max_affected_keys
            rank = fleet.areas.index(area) if fleet is not None else rank
        else:
            most_deletes, most_keys = max_deletes, max_affected_keys
            rank += len(fleet.areas) if fleet is not None else 0
        if allow_missing and not Path(path).exists():
            reviews.append(AreaReview(name, path, None, order=rank))
            continue
        plan = load_plan(path)
        refusals, allowances = gates(plan, most_deletes, most_keys)
        reviews.append(AreaReview(name, path, plan, tuple(refusals), tuple(allowances), order=rank))
    return sorted(reviews, key=lambda r: r.order)


def _split(item: str) -> tuple[str, str]:
    """``NAME=FILE``, or ``FILE`` named by its stem (``.plan`` dropped: ``dev.plan.json``)."""
    match = _NAMED.fullmatch(item)
    if match:
        return match.group(1), match.group(2)
    return Path(item).name.removesuffix(".json").removesuffix(".plan") or item, item


def gates(plan: Plan, max_deletes: int | None, max_affected_keys: int | None
          ) -> tuple[list[str], list[str]]:
    """What apply would refuse of ``plan`` under these gates, and the gates it passes; decided
    by apply's own checks."""
    refusals: list[str] = []
    allowances: list[str] = []
    if max_deletes is not None:
        deletes = sum(1 for s in plan.steps if s.action == "delete")
        line = f"--max-deletes {max_deletes} ({deletes} to delete)"
        (refusals if _refuses(check_deletes, plan, max_deletes) else allowances).append(line)
    if max_affected_keys is not None:
        cut = keys_cut(plan)
        counted = {"not made": "caller impact not made", "unknown": "caller impact unknown"}.get(
            cut, f"{cut} keys cut off or tightened")
        line = f"--max-affected-keys {max_affected_keys} ({counted})"
        (refusals if _refuses(check_affected_keys, plan, max_affected_keys) else allowances).append(line)
    return refusals, allowances


def _refuses(check: Callable[[Plan, int | None], None], plan: Plan, most: int) -> bool:
    try:
        check(plan, most)
    except PlanError:
        return True
    return False
