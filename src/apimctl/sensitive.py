"""The values a command must never show, registered in one place, and the scrubber.

Every source of a secret registers its values here before they can reach a line of output:
the connection's credentials (command line, ``APIMCTL_*`` variables, a profile's resolved
``${VAR}``; :mod:`apimctl.cli.target`), the tokens of the token exchange
(:mod:`apimctl.api.auth`), the secret values a plan resolves (:mod:`apimctl.planning.build`,
:mod:`apimctl.applying.command`) and the environment values a manifest reads into fields
that are not secret (:mod:`apimctl.manifests.environment`). :func:`scrub` replaces each of
them, in every encoding apimctl sends a value in or a server may echo it (:func:`encodings`),
by ``(sensitive)``; the API client's log and retry lines, the plan renderers
(:class:`apimctl.render.style.Redactor`), the call-test reports and the last error line all go
through it. Beyond the forms it computes, it decodes what looks like base64 or percent-encoded
text and masks it when the decoded text holds a registered value (``Basic`` credentials are
base64 of ``user:secret``, whatever the user), and it masks the first characters of a value
that a message cut short (``abcdef…``). :func:`cut` scrubs a text before it cuts it.

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
from urllib.parse import quote, quote_plus, unquote, unquote_plus

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

MIN_PREFIX_LENGTH: Final = MIN_SCRUB_LENGTH
"""The first characters of a form (at least this many) are scrubbed where a text was cut: right
before a cut mark (:data:`CUT_MARKS`). A text cut without a mark is not recognised: cut with
:func:`cut`."""
MIN_CUT_FORM_LENGTH: Final = 2 * MIN_SCRUB_LENGTH
"""Only forms at least this long are looked for by their first characters: the beginning of a
shorter one is too much like ordinary text."""
CUT_MARKS: Final = ("…", "...", "\\u2026")  # the last one: "…" in JSON written with ensure_ascii

_lock = threading.Lock()
_values: set[str] = set()
_credentials: set[str] = set()
_forms: frozenset[str] = frozenset()
_pattern: re.Pattern[str] | None = None
_heads: dict[str, tuple[str, ...]] = {}  # the first MIN_PREFIX_LENGTH characters -> the forms so beginning
_longest = 0  # the length of the longest form

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
"""Text that may be base64 (standard or URL-safe): at least 8 characters, 6 bytes."""
_PERCENT_RUN = re.compile(r"""[^\s"'<>()]+""")
"""A run of text up to the nearest space, quote or bracket (looked at when it holds a percent
escape)."""
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_URL_PARTS = re.compile(r"([?&=;])")
_CUT = re.compile("|".join(re.escape(mark) for mark in CUT_MARKS))


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
        _index_heads(forms)


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
    """``text`` with every registered value, in any encoding, replaced by ``(sensitive)``: the
    forms of :func:`encodings`; base64 and percent-encoded runs whose decoded text holds a
    registered value (the whole run); the first characters of a form where the text is cut
    (:func:`cut_prefixes`)."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    text = _BASE64_RUN.sub(_base64_run, text)  # first: all of "Basic base64(user:secret)"
    text = _PERCENT_RUN.sub(_percent_run, text)
    text = pattern.sub(MASK, text)
    return cut_prefixes(text)


def cut(text: str, limit: int, mark: str = "…") -> str:
    """``text`` scrubbed, then cut to at most ``limit`` characters ending with ``mark``: a
    registered value is masked whole before it can be cut, and a form that would only begin
    before the cut is masked too."""
    shown = scrub(text)
    if len(shown) <= limit:
        return shown
    return scrub(shown[: max(limit - len(mark), 0)] + mark)


def cut_prefixes(text: str) -> str:
    """``text`` with the first characters (at least :data:`MIN_PREFIX_LENGTH`) of a registered
    form masked where they end a cut text: right before a cut mark (``…``, ``...``)."""
    if not _heads or not text:
        return text
    ends = sorted({m.start() for m in _CUT.finditer(text)}, reverse=True)
    for end in ends:  # from the right: the positions to the left stay where they were
        shown = _prefix_before(text, end)
        if shown:
            text = text[: end - shown] + MASK + text[end:]
    return text


def _prefix_before(text: str, end: int) -> int:
    """How many characters before ``end`` are the beginning of a registered form (the longest
    such beginning; 0 when none is :data:`MIN_PREFIX_LENGTH` long)."""
    heads = _heads
    for length in range(min(_longest, end), MIN_PREFIX_LENGTH - 1, -1):
        start = end - length
        candidates = heads.get(text[start:start + MIN_PREFIX_LENGTH])
        if candidates and any(form.startswith(text[start:end]) for form in candidates):
            return length
    return 0


def _base64_run(match: re.Match[str]) -> str:
    """A run that decodes as base64 (either alphabet) to text holding a registered value, masked
    whole (``user:secret`` of ``Basic`` credentials, whatever the user). Only UTF-8 text is
    looked at: what ordinary words decode to rarely is."""
    run = match.group(0)
    body = run.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    for alphabet in (b"+/", b"-_"):
        try:
            decoded = base64.b64decode(padded, altchars=alphabet, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
            continue
        if _holds_value(decoded):
            return MASK
    return run


def scrub_url(text: str) -> str:
    """A URL, or its path or query, as it was sent: :func:`scrub`, then the parts that still
    hold a registered value once percent-decoded masked, whichever characters the sender left
    as they were (a quote, a backslash)."""
    return _mask_parts(scrub(text))


def _percent_run(match: re.Match[str]) -> str:
    """A run holding a percent escape, with its parts holding a registered value masked."""
    run = match.group(0)
    return _mask_parts(run) if "%" in run and _PERCENT_ESCAPE.search(run) else run


def _mask_parts(run: str) -> str:
    """A percent-encoded run (a URL, a query) with the parts holding a registered value masked:
    split at ``?``, ``&``, ``=`` and ``;`` (a value may hold them as they are), from the left,
    the shortest stretch of parts that does each time."""
    if not _percent_holds(run):
        return run
    parts, out = _URL_PARTS.split(run), []
    while parts:
        end = next((j for j in range(1, len(parts) + 1) if _percent_holds("".join(parts[:j]))), 0)
        if not end:
            break
        start = max(i for i in range(end) if _percent_holds("".join(parts[i:end])))
        out += [*parts[:start], MASK]
        parts = parts[end:]
    return "".join(out + parts)


def _percent_holds(text: str) -> bool:
    """Whether ``text`` decoded (``%XX``, and ``+`` as a space or not; inside JSON text too,
    where a backslash is written twice) holds a registered value."""
    variants = {text, text.replace("\\\\", "\\")}
    return any(_holds_value(decode(v)) for v in variants for decode in (unquote, unquote_plus))


def _holds_value(text: str) -> bool:
    """Whether a decoded text holds a registered value (in any of its forms)."""
    pattern = _pattern
    return pattern is not None and pattern.search(text) is not None


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
    global _forms, _pattern, _heads, _longest
    with _lock:
        _values.clear()
        _credentials.clear()
        _forms = frozenset()
        _pattern = None
        _heads = {}
        _longest = 0


def _index_heads(forms: Iterable[str]) -> None:
    """The forms by their first :data:`MIN_PREFIX_LENGTH` characters (:func:`cut_prefixes`)."""
    global _heads, _longest
    heads: dict[str, list[str]] = {}
    for form in forms:
        if len(form) >= MIN_CUT_FORM_LENGTH:
            heads.setdefault(form[:MIN_PREFIX_LENGTH], []).append(form)
    _heads = {head: tuple(found) for head, found in heads.items()}
    _longest = max((len(f) for f in forms), default=0)


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
    without ``ensure_ascii``), URL path and form encoded (and decoded, when it holds a
    percent escape), hex (lower and upper case), base64
    (standard and URL-safe, with and without padding), and its lines (at least
    :data:`MIN_LINE_LENGTH` characters) when it has several."""
    data = secret.encode("utf-8", "surrogatepass")
    out = {secret}
    for ascii_only in (True, False):
        escaped = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        out |= {escaped, escaped.replace("/", "\\/")}  # some encoders escape "/" too
    out |= {quote(secret, safe=""), quote(secret), quote_plus(secret), quote_plus(secret, safe="")}
    out |= {q.lower() for q in list(out) if "%" in q}  # %2f as some servers write it
    if "%" in secret:  # %41 in a value is sent as it is, and read as "A"
        out |= {unquote(secret), unquote_plus(secret)}
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
