"""Helpers shared by the plan renderers: secret redaction, value formatting, risks.

``text``, ``json`` and ``markdown`` all go through :class:`Redactor` before a value reaches
their output, so the rules for secrets live here once:

* a field is secret when its kind declares it so (``Kind.compare.secret`` in :mod:`apimctl.kinds`),
  when a change of it is marked ``sensitive``, when the plan holds a resolved value for it
  (``Plan.secret_values`` is keyed ``"<address>#<field path>"``), or when its name is one of
  :data:`SECRET_FIELD_NAMES`; secret fields render as ``(sensitive)``,
  including the ``${VAR}`` reference text a step's ``desired`` carries;
* any string that equals a resolved secret value, or contains one of at least
  :data:`MIN_SCRUB_LENGTH` characters, also renders as ``(sensitive)`` wherever it appears,
  and the finished text is scrubbed once more (defence in depth). Scrubbing looks for every
  encoding in which apimctl sends a value or a server may echo it (:func:`encodings`): raw,
  JSON-escaped (ASCII-only or not), URL- and form-encoded, hex and base64 (standard and
  URL-safe, padded or not), and each line of a multi-line secret;
* the values registered with :mod:`apimctl.sensitive` (the connection's credentials, the
  tokens of the exchange, environment values a manifest may not show) are secret values too.

:func:`field_lines` is the list of field-level lines of a step that the text and Markdown
renderers print; :func:`risks` lists what a reviewer should look at twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from apimctl import kinds, sensitive
from apimctl.kinds.capabilities import ToldInWords
from apimctl.plans.model import Action, Duplicate, Plan, Step
from apimctl.sensitive import encodings, hex_like

SYMBOLS: Final[dict[str, str]] = {"create": "+", "update": "~", "delete": "-"}

SECRET_FIELD_NAMES: Final = sensitive.SECRET_FIELD_NAMES
"""Field names that are secret wherever they appear, whatever the planner marked."""

MIN_SCRUB_LENGTH: Final = sensitive.MIN_SCRUB_LENGTH
"""Secret values at least this long are also scrubbed where they appear inside other text."""

MIN_LINE_LENGTH: Final = sensitive.MIN_LINE_LENGTH


class _Sensitive:
    """Stands in for a secret value; formats as ``(sensitive)``."""

    def __repr__(self) -> str:
        return "(sensitive)"


SENSITIVE: Final = _Sensitive()
SENSITIVE_TEXT: Final = "(sensitive)"


class Redactor:
    """Knows which fields of which step are secret and which strings must never be shown."""

    def __init__(self, plan: Plan) -> None:
        self._secret_paths: dict[str, set[str]] = {}
        for ref in plan.secret_values:
            addr, _, path = ref.partition("#")
            if path:
                self._secret_paths.setdefault(addr, set()).add(path)
        for step in plan.steps:
            for change in step.changes:
                if change.sensitive:
                    self._secret_paths.setdefault(step.address, set()).add(change.path)
        values = {v for v in plan.secret_values.values() if isinstance(v, str) and v}
        values |= sensitive.registered()  # credentials, tokens, environment values read
        forms = {form for v in values for form in encodings(v)}
        self._exact = frozenset(values | forms)
        self._scrub = sorted((v for v in self._exact if len(v) >= MIN_SCRUB_LENGTH), key=len, reverse=True)
        hexed = [re.escape(v) for v in self._scrub if hex_like(v)]
        self._any_case = re.compile("|".join(hexed), re.IGNORECASE) if hexed else None

    def is_secret(self, address: str, path: str) -> bool:
        """Whether the field at ``path`` (dotted) of the object at ``address`` is secret."""
        if path.rsplit(".", 1)[-1] in SECRET_FIELD_NAMES:
            return True
        kind = kinds.BY_NAME.get(address.partition(":")[0])
        declared = kind.compare.secret if kind is not None else frozenset()
        marked = self._secret_paths.get(address, set())
        return any(path == p or path.startswith(p + ".") for p in (*declared, *marked))

    def leaks(self, text: str) -> bool:
        """Whether ``text`` is, or contains, a resolved secret value (in any encoding)."""
        if text in self._exact or any(s in text for s in self._scrub):
            return True
        return self._any_case is not None and self._any_case.search(text) is not None

    def value(self, address: str, path: str, value: Any) -> Any:
        """``value`` with every secret part replaced by :data:`SENSITIVE`."""
        if value is None:
            return None
        if path and self.is_secret(address, path):
            return SENSITIVE
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(address, _join(path, str(k)), v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(address, path, v) for v in value]
        if isinstance(value, str) and self.leaks(value):
            return SENSITIVE
        if isinstance(value, int | float) and not isinstance(value, bool) and str(value) in self._exact:
            return SENSITIVE  # an unquoted ``${VAR}`` read as a number
        return value

    def text(self, text: str) -> str:
        """``text`` with any resolved secret value (in any encoding) replaced by ``(sensitive)``."""
        for secret in self._scrub:
            text = text.replace(secret, SENSITIVE_TEXT)
        if self._any_case is not None:  # hex in any case
            text = self._any_case.sub(SENSITIVE_TEXT, text)
        return text


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def format_value(value: Any) -> str:
    """A value as a reviewer reads it: JSON literals, ``(sensitive)`` for secrets."""
    if value is SENSITIVE:
        return SENSITIVE_TEXT
    return json.dumps(value, ensure_ascii=False, default=_json_default)


def _json_default(obj: Any) -> Any:
    if obj is SENSITIVE:
        return SENSITIVE_TEXT
    return str(obj)


def plain(value: Any) -> Any:
    """``value`` with :data:`SENSITIVE` markers turned into the string ``(sensitive)`` (for JSON)."""
    if value is SENSITIVE:
        return SENSITIVE_TEXT
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def flatten(obj: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaf fields of a nested object as ``(dotted path, value)``; lists are leaves."""
    for name, value in obj.items():
        path = _join(prefix, str(name))
        if isinstance(value, dict) and value:
            yield from flatten(value, path)
        else:
            yield path, value


@dataclass(frozen=True)
class FieldLine:
    """One field-level line of a step: ``+`` added, ``~`` changed, ``-`` removed. ``words``
    tells the change in words where that reads better than two values (an entitlement lost
    or gained, the elements a list gains and loses)."""

    symbol: str
    path: str
    before: Any
    after: Any
    sensitive: bool = False
    words: str | None = None
    named: bool = False  # the words name what changed themselves (no path needed)


def field_lines(step: Step, redactor: Redactor) -> list[FieldLine]:
    """What a step does field by field, already redacted; empty for deletes."""
    addr = step.address
    if step.action == "delete":
        return []
    if step.action == "create":
        if step.desired is not None:
            fields = list(flatten(step.desired))
        else:
            fields = [(c.path, c.after) for c in step.changes]
        return [
            FieldLine("+", redactor.text(path), None, redactor.value(addr, path, value),
                      redactor.is_secret(addr, path))
            for path, value in fields
        ]
    lines = []
    for change in step.changes:
        secret = change.sensitive or redactor.is_secret(addr, change.path)
        before = SENSITIVE if secret else redactor.value(addr, change.path, change.before)
        after = SENSITIVE if secret else redactor.value(addr, change.path, change.after)
        if secret:
            symbol = "~"
        elif change.before is None:
            symbol = "+"
        elif change.after is None:
            symbol = "-"
        else:
            symbol = "~"
        words = None if secret else change_words(step, change.path, before, after)
        lines.append(FieldLine(symbol, redactor.text(change.path), before, after, secret,
                               redactor.text(words) if words else None,
                               _tells(step, change.path)))
    return lines


def change_words(step: Step, path: str, before: Any, after: Any) -> str | None:
    """A change in words: a plan's entitlement (``Pro loses Ordering/Track order``), or the
    elements a list of plain values gains and loses; ``None`` where values read better."""
    if _tells(step, path):
        name = kinds.split_first(step.key)[1] or step.key
        told = kinds.capability(kinds.get(step.kind), ToldInWords)
        return told.change_words(name, path, before, after) if told is not None else None
    return list_words(before, after)


def _tells(step: Step, path: str) -> bool:
    """Whether the step's kind tells a change at ``path`` in words of its own."""
    kind = kinds.BY_NAME.get(step.kind)
    told = kinds.capability(kind, ToldInWords) if kind is not None else None
    return told is not None and told.tells(path)


def list_words(before: Any, after: Any) -> str | None:
    """``added "b"; removed "a"`` for two lists of plain values that differ in their elements
    (not only in order); ``None`` otherwise."""
    if not (isinstance(before, list) and isinstance(after, list) and before and after):
        return None
    if not all(isinstance(v, str | int | float | bool) for v in (*before, *after)):
        return None
    added, removed = _added_removed(before, after)
    if not added and not removed:
        return None
    parts = [f"added {', '.join(format_value(v) for v in added)}"] if added else []
    parts += [f"removed {', '.join(format_value(v) for v in removed)}"] if removed else []
    return "; ".join(parts)


def _added_removed(before: list[Any], after: list[Any]) -> tuple[list[Any], list[Any]]:
    return [v for v in after if v not in before], [v for v in before if v not in after]


@dataclass(frozen=True)
class Risk:
    """Something a reviewer should look at twice: a delete, or a change of a limit."""

    address: str
    action: Action
    kind: str
    key: str
    path: str | None = None
    before: Any = None
    after: Any = None

    @property
    def reason(self) -> str:
        return "deletes the object" if self.path is None else "changes a limit"


def is_risky_field(kind: str, path: str) -> bool:
    """Whether a change of ``path`` on an object of ``kind`` changes what consumers may call."""
    found = kinds.BY_NAME.get(kind)
    if found is None:
        return False
    top = path.split(".", 1)[0].split("[", 1)[0]
    return top in found.callers.risky or path in found.callers.risky or top.endswith(found.callers.risky_suffixes)


def risks(plan: Plan, redactor: Redactor) -> list[Risk]:
    """Deletes, then limit changes, in plan order."""
    deletes = [Risk(s.address, s.action, s.kind, s.key) for s in plan.steps if s.action == "delete"]
    limits = [
        Risk(s.address, s.action, s.kind, s.key, c.path,
             redactor.value(s.address, c.path, c.before), redactor.value(s.address, c.path, c.after))
        for s in plan.steps
        if s.action == "update"
        for c in s.changes
        if is_risky_field(s.kind, c.path)
    ]
    return deletes + limits


def safe_target(target: str) -> str:
    """The target address without credentials or query string (which may carry a token)."""
    try:
        parts = urlsplit(target)
        port = parts.port
    except ValueError:
        return "(unreadable address)"
    if not parts.scheme or not parts.netloc:
        return target
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def plural(count: int, noun: str) -> str:
    """``1 update``, ``2 updates``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def duplicate_line(dup: Duplicate) -> str:
    """One group of duplicates in words: where, the copies, the one kept and what happens to
    the others (``--repair-duplicates`` deletes them)."""
    extra = ", ".join(dup.extra) or f"{len(dup.ids) - 1} more listing(s) of {dup.keep}"
    fate = "deleted by this plan" if dup.repair else "left alone (--repair-duplicates deletes them)"
    return (f"{dup.where}: {len(dup.ids)} copies (ids {', '.join(dup.ids)}); keeps {dup.keep} "
            f"({dup.reason}); others {extra}: {fate}")
