"""The values a command must never show, registered in one place, and the scrubber.

Every source of a secret registers its values here before they can reach a line of output:
the connection's credentials (command line, ``APIMCTL_*`` variables, a profile's resolved
``${VAR}``; :mod:`apimctl.cli.target`), the tokens of the token exchange
(:mod:`apimctl.api.auth`), the secret values a plan resolves (:mod:`apimctl.planning.build`,
:mod:`apimctl.applying.command`) and the environment values a manifest reads into fields
that are not secret (:mod:`apimctl.manifests.environment`). :func:`scrub` replaces each of
them, in every encoding apimctl sends a value in or a server may echo it (:func:`encodings`),
by ``(sensitive)``; the API client's log and retry lines, the plan renderers
(:class:`apimctl.render.style.Redactor`) and the last error line all go through it.

The registry lives as long as the process (one command).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from collections.abc import Iterable
from typing import Final
from urllib.parse import quote, quote_plus

MASK: Final = "(sensitive)"
SECRET_FIELD_NAMES: Final[frozenset[str]] = frozenset(
    {"systemDomainCredentialSecret", "password", "passwdNew", "secret", "apiSecret"}
)
"""Field names that are secret wherever they appear (plan renderers, ``render``)."""
MIN_SCRUB_LENGTH: Final = 4
"""Values at least this long are also scrubbed where they appear inside other text."""
MIN_LINE_LENGTH: Final = 8
"""Lines of a multi-line secret at least this long are scrubbed on their own too (a server may
echo the secret with its line breaks changed)."""

_lock = threading.Lock()
_values: set[str] = set()
_credentials: set[str] = set()
_forms: frozenset[str] = frozenset()
_pattern: re.Pattern[str] | None = None


def register(*values: str | None) -> None:
    """Never show these values (empty ones and ``None`` are ignored)."""
    global _forms, _pattern
    new = {v for v in values if isinstance(v, str) and v and v not in _values}
    if not new:
        return
    with _lock:
        _values.update(new)
        forms = set(_forms) | {f for v in new for f in encodings(v)}
        _forms = frozenset(forms)
        _pattern = _compile(forms)


def register_credentials(*values: str | None) -> None:
    """The connection's own credentials: never shown, and never substituted into a manifest
    (:mod:`apimctl.manifests.environment` refuses a variable holding one)."""
    found = {v for v in values if isinstance(v, str) and v}
    with _lock:
        _credentials.update(found)
    register(*found)


def credentials() -> frozenset[str]:
    """The connection's credentials registered so far."""
    return frozenset(_credentials)


def registered() -> frozenset[str]:
    """The values registered so far."""
    return frozenset(_values)


def forms() -> frozenset[str]:
    """Every encoding of every registered value."""
    return _forms


def scrub(text: str) -> str:
    """``text`` with every registered value, in any encoding, replaced by ``(sensitive)``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def leaks(text: str) -> bool:
    """Whether ``text`` is, or holds, a registered value."""
    pattern = _pattern
    return text in _forms or (pattern is not None and pattern.search(text) is not None)


def masks(value: object) -> bool:
    """Whether ``value`` (a field's value) is, or holds, a registered value: a string, or a
    number written as an unquoted ``${VAR}``."""
    if isinstance(value, str):
        return leaks(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value) in _values
    return False


def forget() -> None:
    """Forget every value (tests that run several commands in one process)."""
    global _forms, _pattern
    with _lock:
        _values.clear()
        _credentials.clear()
        _forms = frozenset()
        _pattern = None


def _compile(forms: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern of every form long enough to be looked for inside text, longest first;
    hex forms in either case (a server may echo them either way)."""
    long = sorted((f for f in forms if len(f) >= MIN_SCRUB_LENGTH), key=len, reverse=True)
    if not long:
        return None
    parts = [f"(?i:{re.escape(f)})" if hex_like(f) else re.escape(f) for f in long]
    return re.compile("|".join(parts))


def encodings(secret: str) -> set[str]:
    """Every form in which ``secret`` may appear in text: itself, JSON-escaped (with and
    without ``ensure_ascii``), URL path and form encoded, hex (lower and upper case), base64
    (standard and URL-safe, with and without padding), and its lines (at least
    :data:`MIN_LINE_LENGTH` characters) when it has several."""
    data = secret.encode("utf-8", "surrogatepass")
    out = {secret}
    for ascii_only in (True, False):
        escaped = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        out |= {escaped, escaped.replace("/", "\\/")}  # some encoders escape "/" too
    out |= {quote(secret, safe=""), quote(secret), quote_plus(secret), quote_plus(secret, safe="")}
    out |= {q.lower() for q in list(out) if "%" in q}  # %2f as some servers write it
    hexed = binascii.hexlify(data).decode("ascii")
    out |= {hexed, hexed.upper()}
    for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data)):
        text = encoded.decode("ascii")
        out |= {text, text.rstrip("=")}
    lines = secret.splitlines()
    if len(lines) > 1:
        out |= {line for line in lines if len(line) >= MIN_LINE_LENGTH}
    return {form for form in out if form}


def hex_like(form: str) -> bool:
    """Hex text, which a server may echo in either case."""
    return len(form) >= 2 * MIN_SCRUB_LENGTH and all(c in "0123456789abcdefABCDEF" for c in form)
