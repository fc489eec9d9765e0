"""Rendering of manifest problems for ``apimctl validate`` (and any command that reports them).

``text``: one ``file:line:col: path: message`` line per problem (warnings say so);
``json``: a versioned document for tools; ``github``: GitHub Actions workflow commands, so
problems show up as annotations on the pull request. :func:`summary` is the one-line verdict
printed on stderr. Renderers return strings and never print.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from apimctl import sensitive
from apimctl.errors import Problem

FORMATS = ("text", "json", "github")
JSON_FORMAT_VERSION = "1.0"


def render(problems: Sequence[Problem], fmt: str, *, files: int = 0, objects: int = 0) -> str:
    """All problems in ``fmt`` (``text``, ``json`` or ``github``); ends with a newline unless
    empty. Scrubbed of every value registered with :mod:`apimctl.sensitive` (a message may
    quote a value a manifest read from the environment, or its beginning, cut): each message
    before it is escaped for its format, and the whole text after."""
    problems = [replace(p, path=sensitive.scrub(p.path), message=sensitive.scrub(p.message)) for p in problems]
    if fmt == "json":
        return sensitive.scrub(render_json(problems, files=files, objects=objects))
    line = render_github if fmt == "github" else render_text
    return sensitive.scrub("".join(line(p) + "\n" for p in problems))


def render_text(problem: Problem) -> str:
    """``file:line:col: path: message``; a warning's message starts with ``warning:``."""
    if problem.severity == "error":
        return str(problem)
    return str(Problem(problem.file, problem.line, problem.col, problem.path, f"warning: {problem.message}"))


def render_github(problem: Problem) -> str:
    """``::error file=F,line=L,col=C,title=T::message`` (a workflow command)."""
    props = []
    if problem.file:
        props.append(f"file={_property(problem.file)}")
        if problem.line:
            props += [f"line={problem.line}", f"col={problem.col}"]
    props.append(f"title={_property('apimctl validate')}")
    message = f"{problem.path}: {problem.message}" if problem.path else problem.message
    level = "warning" if problem.severity == "warning" else "error"
    return f"::{level} {','.join(props)}::{_data(message)}"


def render_json(problems: Sequence[Problem], *, files: int = 0, objects: int = 0) -> str:
    """``{"format_version", "valid", "summary": {...}, "problems": [...]}``."""
    errors = sum(1 for p in problems if p.severity == "error")
    body = {
        "format_version": JSON_FORMAT_VERSION,
        "valid": errors == 0,
        "summary": {"errors": errors, "warnings": len(problems) - errors, "files": files, "objects": objects},
        "problems": [
            {"file": p.file, "line": p.line, "column": p.col, "path": p.path, "message": p.message,
             "severity": p.severity}
            for p in problems
        ],
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def summary(problems: Sequence[Problem], *, files: int, objects: int) -> str:
    """``2 errors, 1 warning in 3 files`` (``1 error; no manifest file was read`` when no file
    was) or ``valid: 3 files, 12 objects``."""
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    if errors:
        counts = _plural(errors, "error") + (f", {_plural(warnings, 'warning')}" if warnings else "")
        if not files:  # a path that does not exist, a directory without manifests
            return f"{counts}; no manifest file was read"
        return f"{counts} in {_plural(files, 'file')}"
    text = f"valid: {_plural(files, 'file')}, {_plural(objects, 'object')}"
    return text + (f", {_plural(warnings, 'warning')}" if warnings else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
