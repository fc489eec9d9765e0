"""The results of a call-test run as text, JSON, JUnit XML (for CI) and a Markdown section
(the pull-request comment of ``plan --tests``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from xml.etree import ElementTree

from apimctl.calltests.runner import CallResult

FORMATS = ("text", "json", "junit", "markdown")


def headline(results: Sequence[CallResult]) -> str:
    failed = [r for r in results if not r.passed]
    text = f"Call checks: {len(results) - len(failed)} passed, {len(failed)} failed"
    return text + (": " + "; ".join(r.name for r in failed[:5]) + (" ..." if len(failed) > 5 else "") if failed else "")


def render(results: Sequence[CallResult], fmt: str) -> str:
    return {"text": text, "json": as_json, "junit": junit, "markdown": markdown}[fmt](results)


def text(results: Sequence[CallResult]) -> str:
    lines = []
    for r in results:
        mark = "PASS" if r.passed else "FAIL"
        extra = f" x{r.calls}" if r.calls > 1 else ""
        status = f" -> {r.status}" if r.status is not None else ""
        lines.append(f"{mark} {r.file}:{r.line}: {r.name}{status}{extra}")
        lines += [f"     {failure}" for failure in r.failures]
    lines.append(headline(results))
    return "\n".join(lines) + "\n"


def as_json(results: Sequence[CallResult]) -> str:
    doc = {
        "passed": sum(r.passed for r in results), "failed": sum(not r.passed for r in results),
        "results": [{"file": r.file, "line": r.line, "name": r.name, "passed": r.passed, "status": r.status,
                     "decidedBy": r.decided_by or None, "calls": r.calls, "failures": r.failures,
                     "steps": r.steps} for r in results],
    }
    return json.dumps(doc, indent=2) + "\n"


def junit(results: Sequence[CallResult]) -> str:
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


def markdown(results: Sequence[CallResult]) -> str:
    lines = [f"### {headline(results)}", ""]
    failed = [r for r in results if not r.passed]
    if failed:
        lines += ["| Call | Where | What |", "|---|---|---|"]
        lines += [f"| {_cell(r.name)} | `{r.file}:{r.line}` | {_cell('; '.join(r.failures))} |" for r in failed]
        lines.append("")
    return "\n".join(lines) + "\n"
