"""The results of a call-test run as text, JSON, JUnit XML (for CI) and a Markdown section
(the pull-request comment of ``plan --tests``).

A report quotes what the back ends received and what the emulator answered, so every format
goes through :mod:`apimctl.sensitive` twice: each text of the results before it is escaped for
its format (JSON, XML, a Markdown cell: an escape could change how a value is written), and the
whole report after.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from xml.etree import ElementTree

from apimctl import sensitive
from apimctl.calltests.runner import CallResult

FORMATS = ("text", "json", "junit", "markdown")


def scrubbed(render: Callable[[Sequence[CallResult]], str]) -> Callable[[Sequence[CallResult]], str]:
    """``render`` given the results scrubbed (:func:`scrub_result`), its report scrubbed too."""

    @functools.wraps(render)
    def shown(results: Sequence[CallResult]) -> str:
        return sensitive.scrub(render([scrub_result(r) for r in results]))

    return shown


def scrub_result(result: CallResult) -> CallResult:
    """A copy of ``result`` with every text a report shows scrubbed."""
    return replace(result, file=sensitive.scrub(result.file), name=sensitive.scrub(result.name),
                   failures=[sensitive.scrub(f) for f in result.failures], decided_by=sensitive.scrub(result.decided_by),
                   steps=[{k: sensitive.scrub(str(v)) for k, v in step.items()} for step in result.steps])


@scrubbed
def headline(results: Sequence[CallResult]) -> str:
    """``Call checks: N passed, M failed``, then the names of the first failed calls."""
    failed = [r for r in results if not r.passed]
    text = f"Call checks: {len(results) - len(failed)} passed, {len(failed)} failed"
    return text + (": " + "; ".join(r.name for r in failed[:5]) + (" ..." if len(failed) > 5 else "") if failed else "")


def render(results: Sequence[CallResult], fmt: str) -> str:
    """The report in ``fmt`` (:data:`FORMATS`), scrubbed."""
    return {"text": text, "json": as_json, "junit": junit, "markdown": markdown}[fmt](results)


@scrubbed
def text(results: Sequence[CallResult]) -> str:
    """One ``PASS``/``FAIL`` line per call, its failures below it, then the headline."""
    lines = []
    for r in results:
        mark = "PASS" if r.passed else "FAIL"
        extra = f" x{r.calls}" if r.calls > 1 else ""
        status = f" -> {r.status}" if r.status is not None else ""
        lines.append(f"{mark} {r.file}:{r.line}: {r.name}{status}{extra}")
        lines += [f"     {failure}" for failure in r.failures]
    lines.append(headline(results))
    return "\n".join(lines) + "\n"


@scrubbed
def as_json(results: Sequence[CallResult]) -> str:
    """The results as a JSON document."""
    doc = {
        "passed": sum(r.passed for r in results), "failed": sum(not r.passed for r in results),
        "results": [{"file": r.file, "line": r.line, "name": r.name, "passed": r.passed, "status": r.status,
                     "decidedBy": r.decided_by or None, "calls": r.calls, "failures": r.failures,
                     "steps": r.steps} for r in results],
    }
    return json.dumps(doc, indent=2) + "\n"


@scrubbed
def junit(results: Sequence[CallResult]) -> str:
    """JUnit XML: a test suite per file, a test case per call."""
    suites = ElementTree.Element("testsuites", name="apimctl test", tests=str(len(results)),
                                 failures=str(sum(not r.passed for r in results)))
    by_file: dict[str, list[CallResult]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    for name, items in by_file.items():
        suite = ElementTree.SubElement(suites, "testsuite", name=name, tests=str(len(items)),
                                       failures=str(sum(not r.passed for r in items)),
                                       time=f"{sum(r.seconds for r in items):.3f}")
        for r in items:
            case = ElementTree.SubElement(suite, "testcase", classname=name, name=r.name, time=f"{r.seconds:.3f}",
                                          file=r.file, line=str(r.line))
            if not r.passed:
                failure = ElementTree.SubElement(case, "failure", message=r.failures[0] if r.failures else "failed")
                failure.text = "\n".join(r.failures)
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


@scrubbed
def markdown(results: Sequence[CallResult]) -> str:
    """A Markdown section: the headline, and a table of the failed calls."""
    lines = [f"### {headline(results)}", ""]
    failed = [r for r in results if not r.passed]
    if failed:
        lines += ["| Call | Where | What |", "|---|---|---|"]
        lines += [f"| {_cell(r.name)} | `{r.file}:{r.line}` | {_cell('; '.join(r.failures))} |" for r in failed]
        lines.append("")
    return "\n".join(lines) + "\n"
