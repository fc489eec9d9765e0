"""Policy rules as data: Spectral-style rulesets checked against manifests and live areas.

``apimctl lint`` (``apimctl.cli.lint``) and ``plan``/``apply --lint`` call the entry points of
:mod:`apimctl.lint.run`; the stages, one module each: ``yamldoc`` (ruleset YAML with
positions), ``loading`` (ruleset files, ``extends``, ``overrides``, checking, with located
errors), ``ruleset`` (the ruleset value: rules, overrides, the severity of a rule per file),
``functions`` (the rule functions, one registry table), ``engine`` (running rules over a
document, locating findings), ``run`` (manifests and live areas, inline disables,
``settings.lint``), ``model`` (findings and the report). ``recommended.yaml`` is the built-in
``apimctl:recommended`` ruleset. Rendering is :mod:`apimctl.render.lint`.

Public interface::

    load_rulesets(refs, base=".") -> Ruleset                  raises RulesetError (located)
    lint_paths(paths, overlays=(), rulesets=(), now=None) -> LintReport
    lint_area(client, ruleset, now=None, source="") -> LintReport      (async; reads the area)
    lint_live(live_state, ruleset, now=None, source="") -> LintReport
    LintReport(findings, rules, files, source, live).failures(threshold) -> [Finding]
    Finding(rule, severity, message, path, address, field, file, line, col)
    SEVERITIES = ("error", "warn", "info", "hint"); at_or_above(severity, threshold)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apimctl.lint.loading import load_rulesets
    from apimctl.lint.model import (
        RECOMMENDED,
        SEVERITIES,
        Finding,
        LintReport,
        RuleInfo,
        RulesetError,
        Severity,
        at_or_above,
    )
    from apimctl.lint.ruleset import Ruleset
    from apimctl.lint.run import lint_area, lint_live, lint_manifest, lint_paths

__all__ = [
    "RECOMMENDED",
    "SEVERITIES",
    "Finding",
    "LintReport",
    "RuleInfo",
    "Ruleset",
    "RulesetError",
    "Severity",
    "at_or_above",
    "lint_area",
    "lint_live",
    "lint_manifest",
    "lint_paths",
    "load_rulesets",
]

# imported when first used (PEP 562): a module that needs only the findings' model (the CLI's
# list of formats) does not load the rule engine and what it reads areas with
_EXPORTS = {
    "load_rulesets": "apimctl.lint.loading",
    "Ruleset": "apimctl.lint.ruleset",
    **dict.fromkeys(("RECOMMENDED", "SEVERITIES", "Finding", "LintReport", "RuleInfo", "RulesetError",
                     "Severity", "at_or_above"), "apimctl.lint.model"),
    **dict.fromkeys(("lint_area", "lint_live", "lint_manifest", "lint_paths"), "apimctl.lint.run"),
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
