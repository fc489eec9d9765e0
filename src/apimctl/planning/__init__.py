"""Planning: from the manifests and the live state to a :class:`~apimctl.plans.Plan`.

One module per step of making a plan, in the order they run: ``desired`` (what the manifests
declare), ``matching`` (identity: each desired object's live object), ``rules`` (prune, ignore,
target), ``steps`` (creates, updates, deletes; fingerprints and secrets), ``comparing``
(whether a pair is unchanged, however that is found), ``diff`` (field changes), ``order``
(dependencies and the order of steps, by the references of :mod:`apimctl.kinds.references`),
``build`` (the entry points: ``read_and_plan`` reads the area and plans). Planning never
writes.
"""

from apimctl.planning.build import PlanOptions, build_plan, make_plan, read_and_plan, target_dialect
from apimctl.planning.desired import ManifestLike
from apimctl.planning.rules import IgnoreRule, ignore_rules, parse_target
from apimctl.planning.steps import LITERAL_SECRET, literal_secrets

__all__ = ["LITERAL_SECRET", "IgnoreRule", "ManifestLike", "PlanOptions", "build_plan", "ignore_rules",
           "literal_secrets", "make_plan", "parse_target", "read_and_plan", "target_dialect"]
