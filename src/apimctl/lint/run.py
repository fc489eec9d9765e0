"""Linting manifests and live areas: the entry points ``apimctl lint`` and ``--lint`` call.

- :func:`lint_paths` loads the manifests (overlays applied, ``${VAR}`` substituted, unset
  variables left as references so no secret is needed) and lints the merged document;
  findings are located in the file each node was written in (an overlay's value in the
  overlay), overrides match that file, and ``# apimctl-lint-disable-next-line RULE`` on the
  line above silences a finding. ``settings.lint`` names rulesets and disables rules.
- :func:`lint_area` reads the live area with the list calls ``plan`` uses, turns it into
  manifest documents as ``export`` does, and lints those; findings name object addresses.

Both lint the canonical form of the manifests (shorthands expanded: ``domains`` as
``{domain: ...}``, ``roles`` as ``{name: ...}``, plan endpoints as ``{name: ...}``), as
written: defaults are not filled in. Secret fields show their ``${VAR}`` reference, or
``(sensitive)`` for a literal, so no rule and no message ever sees a secret value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from apimctl.errors import ManifestError
from apimctl.kinds.dialects import SPEC, Dialect, dialect_of
from apimctl.kinds.references.paths import rewrite
from apimctl.lint.engine import run_rules
from apimctl.lint.loading import load_rulesets
from apimctl.lint.model import RECOMMENDED, Finding, LintReport, RuleInfo
from apimctl.lint.ruleset import Ruleset
from apimctl.manifests import Manifest, validate
from apimctl.manifests.canonical import expand
from apimctl.manifests.checks import secret_paths
from apimctl.manifests.model import JsonPath, Position
from apimctl.manifests.variables import LenientEnv
from apimctl.openapi.coverage import FACTS_KEY, Coverage, coverage_facts
from apimctl.planning import target_dialect
from apimctl.state.live import DATA_SOURCES, Lister, LiveState, read_live, refused_lines

DISABLE_NEXT_LINE = "apimctl-lint-disable-next-line"
_DIRECTIVE = re.compile(r"#\s*" + DISABLE_NEXT_LINE + r"\b(.*)$")
_REFERENCE = re.compile(r"\$\{[^}]*\}")


def lint_paths(paths: Sequence[str], overlays: Sequence[str] = (), *,
               rulesets: Sequence[str] = (), now: datetime | None = None,
               env: Mapping[str, str] | None = None, openapi: Sequence[str] = (),
               ref_hosts: Sequence[str] = ()) -> LintReport:
    """Lint the manifests at ``paths`` with ``rulesets`` (default: ``settings.lint.rulesets``,
    else ``apimctl:recommended``), and the OpenAPI documents ``openapi`` (``[SERVICE=]SPEC``,
    whose ``$ref`` may fetch from ``ref_hosts``) against them. Raises ``RulesetError``,
    ``ManifestError`` or ``OpenApiError``."""
    chosen = load_rulesets(rulesets) if rulesets else None  # a bad ruleset fails first
    result = validate(paths, overlays, LenientEnv(os.environ if env is None else env))
    if result.manifest is None:
        raise ManifestError(result.problems)
    manifest = result.manifest
    settings = _lint_settings(manifest)
    if chosen is None:
        refs, base = _settings_rulesets(manifest, settings)
        chosen = load_rulesets(refs, base)
    return lint_manifest(manifest, chosen, now=now, disabled=settings.get("disable") or (),
                         openapi=openapi, ref_hosts=ref_hosts)


def lint_manifest(manifest: Manifest, ruleset: Ruleset, *, now: datetime | None = None,
                  disabled: Sequence[str] = (), openapi: Sequence[str] = (),
                  ref_hosts: Sequence[str] = ()) -> LintReport:
    """Lint a loaded manifest; findings located in its files, inline disables honoured.
    With ``openapi`` documents, their facts are linted too (located in the documents)."""
    doc = masked(manifest.doc, manifest.secret_refs)
    cover = coverage_facts(openapi, manifest.doc, ref_hosts) if openapi else Coverage()
    if openapi:
        doc = {**doc, FACTS_KEY: cover.facts}
    findings = run_rules(ruleset, doc, now=now or datetime.now(UTC),
                         locate=_locator(manifest, cover), disabled=disabled)
    disables = InlineDisables()
    findings = [f for f in findings if not disables.silences(f)]
    unknown = [name for name in disabled if name not in ruleset.rules]
    warnings = [f"settings.lint.disable: no rule is named {name!r}" for name in unknown]
    files = [*manifest.files, *(str(f["document"]) for f in cover.facts)]
    idle = () if openapi else _openapi_rules(ruleset)  # nothing to look at: not counted as run
    return LintReport(findings, _infos(ruleset, [*disabled, *idle]), files=files,
                      source="manifests", warnings=[*cover.warnings, *warnings])


def _locator(manifest: Manifest, cover: Coverage) -> Callable[[JsonPath], Position | None]:
    """Positions in the manifests, and in the OpenAPI documents for their facts."""
    def locate(path: JsonPath) -> Position | None:
        if not path or path[0] != FACTS_KEY:
            return manifest.where(path)
        key = tuple(path)
        while key and key not in cover.positions:
            key = key[:-1]
        return cover.positions.get(key)
    return locate


async def lint_area(client: Lister, ruleset: Ruleset, *, now: datetime | None = None,
                    source: str = "") -> LintReport:
    """Read the live area through ``client`` and lint it (see :func:`lint_live`), in the
    area's dialect."""
    # lint compares nothing; a data source the area refuses to list is linted as none
    live = await read_live(client, normal_forms=False, raw=False, optional=DATA_SOURCES)
    found = await target_dialect(client, None, live)
    report = lint_live(live, ruleset, now=now, source=source, dialect=dialect_of(found.name))
    report.warnings.extend(refused_lines(live))
    return report


def lint_live(live: LiveState, ruleset: Ruleset, *, now: datetime | None = None,
              source: str = "", dialect: Dialect = SPEC) -> LintReport:
    """Lint a live state in manifest shape, as ``export`` would write it for the area's
    ``dialect`` (its defaults left out); findings carry addresses, not files."""
    from apimctl.export import build_documents

    docs, _ = build_documents(live, dialect=dialect)
    doc: dict[str, Any] = expand(dict(docs))
    findings = run_rules(ruleset, masked(doc, {}), now=now or datetime.now(UTC))
    return LintReport(findings, _infos(ruleset, _openapi_rules(ruleset)), source=source, live=True)


def masked(doc: dict[str, Any], refs: Mapping[JsonPath, str]) -> dict[str, Any]:
    """``doc`` with every secret field replaced by its ``${VAR}`` reference text, or by
    ``(sensitive)`` for a literal value. Containers on the way to a secret are copied;
    ``doc`` itself is not changed."""
    values = []
    for path in secret_paths(doc):
        raw = refs.get(path)
        if raw is None:
            value: Any = doc
            for part in path:
                value = value[part]
            plain = isinstance(value, str) and (not value or _REFERENCE.fullmatch(value))
            raw = value if plain else "(sensitive)"
        values.append((path, raw))
    return rewrite(doc, values) if values else doc


def _lint_settings(manifest: Manifest) -> dict[str, Any]:
    settings = manifest.doc.get("settings")
    lint = settings.get("lint") if isinstance(settings, dict) else None
    return lint if isinstance(lint, dict) else {}


def _settings_rulesets(manifest: Manifest, settings: Mapping[str, Any]) -> tuple[list[str], str]:
    """``settings.lint.rulesets`` and the directory they are relative to (the file that
    sets them); the built-in recommended ruleset when there are none."""
    refs = [str(r) for r in settings.get("rulesets") or []]
    if not refs:
        return [RECOMMENDED], "."
    where = manifest.where(("settings", "lint", "rulesets"))
    return refs, os.path.dirname(where.file) if where is not None else "."


def _openapi_rules(ruleset: Ruleset) -> list[str]:
    """The rules that look only at OpenAPI documents' facts (``lint --openapi-spec``)."""
    return [r.name for r in ruleset.candidates()
            if r.given and all(FACTS_KEY in text for text, _ in r.given)]


def _infos(ruleset: Ruleset, disabled: Sequence[str]) -> list[RuleInfo]:
    return [r.info() for r in ruleset.candidates() if r.name not in disabled]


class InlineDisables:
    """``# apimctl-lint-disable-next-line RULE[, RULE...]`` comments, read from the files.

    The directive applies to the next line that is not a comment: it may sit among other
    comment lines right above the finding's line. Without rule names it silences every
    rule on that line."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}

    def silences(self, finding: Finding) -> bool:
        if not finding.file or finding.line < 2:
            return False
        lines = self.read(finding.file)
        index = finding.line - 2
        while 0 <= index < len(lines) and lines[index].lstrip().startswith("#"):
            found = _DIRECTIVE.search(lines[index])
            if found is not None:
                names = {n for n in re.split(r"[\s,]+", found.group(1).strip()) if n}
                if not names or finding.rule in names:
                    return True
            index -= 1
        return False

    def read(self, file: str) -> list[str]:
        lines = self.lines.get(file)
        if lines is None:
            try:
                with open(file, encoding="utf-8") as handle:
                    lines = handle.read().splitlines()
            except (OSError, UnicodeDecodeError):
                lines = []
            self.lines[file] = lines
        return lines
