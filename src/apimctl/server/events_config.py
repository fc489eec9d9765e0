"""The ``--events-config`` file of the reference server: which areas call which receiver.

``apimctl serve`` reads the YAML with :func:`load_events_config`; the dispatcher
(:mod:`apimctl.server.events`) turns it into :class:`AreaEvents` per area with
:func:`parse_events_config` (spec/SUPPLEMENT.md section 8). Every problem names its place in
the file; problems raise :class:`~apimctl.server.errors.ServerConfigError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import yaml

from apimctl.server.errors import ServerConfigError

DEFAULT_TIMEOUT = 10.0

# The objects with event triggers, and the agent header of their calls.
OBJECTS: dict[str, str] = {"member": "User-Agent", "application": "Application-Agent", "key": "Key-Agent"}
# The events, and the HTTP method of their calls.
METHODS: dict[str, str] = {
    "pre-create": "POST",
    "post-create": "PUT",
    "pre-update": "PUT",
    "post-update": "PUT",
    "pre-delete": "DELETE",
    "post-delete": "DELETE",
}
CONTENT_TYPES = {"json": "application/json", "form": "application/x-www-form-urlencoded"}

_AREA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["url"],
    "additionalProperties": False,
    "properties": {
        "url": {"type": "string", "pattern": "^https?://[^/?#]+"},
        "encoding": {"enum": list(CONTENT_TYPES)},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "events": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {
                obj: {"type": ["array", "null"], "items": {"enum": list(METHODS)}}
                for obj in OBJECTS
            },
        },
    },
}
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["areas"],
    "additionalProperties": False,
    "properties": {"areas": {"type": ["object", "null"], "additionalProperties": _AREA_SCHEMA}},
}


@dataclass(frozen=True)
class AreaEvents:
    """The event-trigger settings of one area."""

    url: str
    encoding: str = "json"
    timeout: float = DEFAULT_TIMEOUT
    events: frozenset[tuple[str, str]] = frozenset()


def load_events_config(path: str) -> dict[str, Any]:
    """Read and check an ``--events-config`` file; every problem is reported with where it is."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        raw = yaml.safe_load(text)
        tree = yaml.compose(text)
    except OSError as exc:
        raise ServerConfigError(f"{path}: cannot read events config: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ServerConfigError(f"{path}: cannot read events config: not UTF-8 text ({exc.reason})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise ServerConfigError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    if raw is None:  # an empty file: no area has event triggers
        return {"areas": {}}
    parse_events_config(raw, source=path, tree=tree)
    return raw if isinstance(raw, dict) else {}


def parse_events_config(raw: Any, source: str = "events config", tree: yaml.Node | None = None
                        ) -> dict[str, AreaEvents]:
    """Validate the parsed YAML against ``CONFIG_SCHEMA`` and return the settings per area.

    With ``tree`` (the composed YAML of the file) every problem names its line and column.
    """
    if raw is None:
        return {}
    validator = jsonschema.Draft202012Validator(CONFIG_SCHEMA)
    errors = sorted(validator.iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        lines = [f"{_where(source, tree, e.absolute_path)}: {_dotted(e.absolute_path) or '(top)'}: {_message(e)}"
                 for e in errors]
        raise ServerConfigError("\n".join(lines))
    return {str(name): _area(spec) for name, spec in (raw.get("areas") or {}).items()}


def _where(source: str, tree: yaml.Node | None, path: Any) -> str:
    """``file:line:col`` of the YAML node at ``path`` (the file alone without a tree)."""
    node = tree
    for step in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(step)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            node = None
    if node is None:
        return source
    return f"{source}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _area(spec: Mapping[str, Any]) -> AreaEvents:
    enabled = frozenset(
        (obj, event) for obj, events in (spec.get("events") or {}).items() for event in events or ()
    )
    return AreaEvents(
        url=str(spec["url"]).rstrip("/"),
        encoding=str(spec.get("encoding", "json")),
        timeout=float(spec.get("timeout", DEFAULT_TIMEOUT)),
        events=enabled,
    )


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern":
        return f"{error.instance!r} is not an http:// or https:// URL"
    return str(error.message)


def _dotted(path: Any) -> str:
    return ".".join(str(p) for p in path)
