"""``apimctl plan`` as a function: read the manifests and the area, return the plan, save it.

The core of ``apimctl.cli.plan`` (the CLI parses, opens nothing itself, renders the returned
:class:`~apimctl.plans.model.Plan`). Every refusal is made here, and those that need no area
before the client is opened, so invalid input makes no call (and creates no embedded
server):

- an ``out`` file the plan could not be saved to;
- invalid manifests, a malformed ``--target`` or ``--ignore`` (:func:`read_manifests`, which
  ``apply`` and ``drift`` share);
- manifests that declare no objects, a target naming no object, more deletes than
  ``max_deletes`` (:func:`apimctl.planning.build.build_plan`);
- a plan to save whose secrets are literal values rather than ``${VAR}`` references.

Nothing here prints: lines for the user (manifest warnings) go to the ``notice`` callback.
Nothing here decides how long the manifests live: the caller's ``keep`` callback gets them
(the console script passes :func:`apimctl.process.keep`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from apimctl.errors import PlanError
from apimctl.manifests import Manifest, load_manifests
from apimctl.planning.build import PlanOptions, make_plan
from apimctl.planning.rules import RotateRule, ignore_rules, parse_target
from apimctl.planning.steps import literal_secrets
from apimctl.plans.file import check_destination, save_plan
from apimctl.plans.model import Plan
from apimctl.state.live import Lister

Connect = Callable[[], AbstractAsyncContextManager[Lister]]
Notice = Callable[[str], None]
Keep = Callable[[object], None]


def quiet(line: str) -> None:
    """The default ``notice``: tell nobody."""


def keep_nothing(value: object) -> None:
    """The default ``keep``: the manifests are freed as usual, once the command is done."""


@dataclass(frozen=True)
class PlanRequest:
    """The inputs of one plan. ``target`` names the area in the plan (``Plan.target``);
    ``out`` is the file to save the plan to, if any."""

    paths: tuple[str, ...]
    overlays: tuple[str, ...] = ()
    prune: bool = False
    targets: tuple[str, ...] = ()
    ignores: tuple[str, ...] = ()
    max_deletes: int | None = None
    out: str | None = None
    target: str = ""
    repair_duplicates: bool = False
    rotate: tuple[str, ...] = ()  # --rotate KIND:KEY:PATH; --rotate-secrets is ROTATE_ALL
    impact: str | None = "auto"  # --impact; None: no caller impact

    @property
    def options(self) -> PlanOptions:
        """How to plan."""
        return PlanOptions(prune=self.prune, targets=self.targets, ignores=self.ignores,
                           max_deletes=self.max_deletes, repair_duplicates=self.repair_duplicates,
                           rotate=self.rotate, impact=self.impact)


async def plan(request: PlanRequest, connect: Connect, *, notice: Notice = quiet,
               keep: Keep = keep_nothing) -> Plan:
    """The plan of ``request``'s manifests against the area ``connect()`` opens a client to,
    saved to ``request.out`` when given. Raises before opening the client when the input is
    bad, and before saving when the plan may not be saved. ``keep`` gets the manifests."""
    if request.out:
        check_destination(request.out)
    manifest = read_manifests(request.paths, request.overlays, request.targets, request.ignores,
                              notice, rotate=request.rotate, keep=keep)
    async with connect() as client:
        made = await make_plan(client, manifest, request.options)
    made.target = request.target
    if request.out:
        check_saveable(made)
        if manifest.masked_variables:
            # a saved plan holds what apply will send, and pipelines keep it as an artifact a
            # pull request's author can read: it may hold only values declared public
            raise PlanError(f"not saving {request.out}: it would hold values read from the "
                            "environment into fields that are not secret "
                            f"({', '.join(manifest.masked_variables)}), which a saved plan shows "
                            "as they are; declare the variables public with --public-env (from the "
                            "pipeline), or apply from the manifests")
        save_plan(made, request.out)
    return made


def read_manifests(paths: tuple[str, ...], overlays: tuple[str, ...], targets: tuple[str, ...],
                   ignores: tuple[str, ...], notice: Notice, *, rotate: tuple[str, ...] = (),
                   keep: Keep = keep_nothing) -> Manifest:
    """The manifests at ``paths``, with the ``--target``, ``--ignore`` and ``--rotate`` texts checked too:
    everything that can be refused before a call. Warnings go to ``notice``; ``keep`` gets the
    manifests as soon as they are read."""
    manifest = load_manifests(list(paths), list(overlays))
    keep(manifest)
    for warning in manifest.warnings:
        notice(f"Warning: {warning}")
    for text in targets:
        parse_target(text)
    for text in rotate:
        RotateRule.parse(text)
    ignore_rules(manifest.doc.get("settings") or {}, ignores)
    return manifest


def check_saveable(made: Plan) -> None:
    """Refuse to save a plan with literal secret values: a saved plan never holds secret
    values, so ``apply --plan`` could not write them."""
    literals = literal_secrets(made)
    if literals:
        raise PlanError(
            "cannot save the plan: a saved plan never holds secret values, and these secrets "
            "are written as literal values rather than ${ENV_VAR} references, so `apply --plan` "
            "could not write them: " + ", ".join(literals))
