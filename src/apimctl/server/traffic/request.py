"""Before the steps: the call must be one the traffic manager can route and forward as it came.

The path is normalised once (:func:`normalise_path`), and the call is routed, entitled and
forwarded on that one value (:attr:`Call.path <apimctl.server.traffic.model.Call.path>`):
percent-encoded octets of unreserved characters (letters, digits, ``-._~``) are decoded,
every other octet stays encoded with upper-case hex digits (``%2F``, ``%3F``, ``%23`` and
``%25`` are never decoded, so no level of encoding is lost and nothing moves into the
query or the fragment), characters a path cannot hold literally are encoded, and dot
segments are resolved (RFC 3986, 5.2.4 and 6.2.2). A path that cannot be normalised is
refused with 400 before any step: one that does not start with ``/``, broken
percent-encoding, an encoded or literal control character (``%00``, CR, LF, ...), or dot
segments that climb above the root. So are header values with anything but visible ASCII,
space and tab.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from urllib.parse import quote, unquote

from apimctl.server.traffic.model import Answer, Call, Final

UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
# what a path segment may hold as it is besides unreserved characters (RFC 3986 pchar), and "/"
LITERAL = UNRESERVED | frozenset("!$&'()*+,;=:@/")
_HEX = frozenset(string.hexdigits)
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
_PLAIN = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")


class BadPath(ValueError):
    """A path the traffic manager cannot normalise (the reason says why)."""


def _octets(raw: str) -> list[str]:
    """The path with its percent-encoding normalised (unreserved octets decoded)."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        char = raw[i]
        if char == "%":
            digits = raw[i + 1:i + 3]
            if len(digits) != 2 or not set(digits) <= _HEX:
                raise BadPath(f"broken percent-encoding {raw[i:i + 3]!r}")
            octet = int(digits, 16)
            if octet < 0x20 or octet == 0x7F:
                raise BadPath(f"an encoded control character (%{digits.upper()})")
            out.append(chr(octet) if chr(octet) in UNRESERVED else "%" + digits.upper())
            i += 3
            continue
        if char in LITERAL:
            out.append(char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            raise BadPath(f"a control character ({char!r})")
        else:  # a character a path cannot hold literally (space, '"', '#', non-ASCII, ...)
            out.append(quote(char, safe=""))
        i += 1
    return out


def _segments(path: str) -> str:
    """``path`` with its dot segments resolved; one climbing above the root is refused."""
    parts = path.split("/")[1:]
    kept: list[str] = []
    for index, segment in enumerate(parts):
        last = index == len(parts) - 1
        if segment in (".", ".."):
            if segment == "..":
                if not kept:
                    raise BadPath("'..' climbs above the root")
                kept.pop()
            if last:
                kept.append("")  # "/a/b/.." is "/a/"
        else:
            kept.append(segment)
    return "/" + "/".join(kept)


def normalise_path(raw: str) -> str:
    """The path the call is routed on and forwarded with; ``raw``: the request target's path
    as sent (percent-encoded). Raises :class:`BadPath`."""
    if _PLAIN.fullmatch(raw) and "/." not in raw:  # the common case: nothing to normalise
        return raw
    if not raw.startswith("/"):
        raise BadPath("the path must start with '/'")
    return _segments("".join(_octets(raw)))


@lru_cache(maxsize=1024)
def alias_path(alias: str) -> str:
    """An endpoint's ``requestPathAlias`` (literal text) as a normalised path prefix:
    ``""`` for the root, else ``/`` and its segments percent-encoded."""
    inner = alias.strip("/")
    return "/" + quote(inner, safe="/!$&'()*+,;=:@") if inner else ""


def segment_text(segment: str) -> str:
    """A segment of a normalised path as text (a key or a method name is compared decoded)."""
    return unquote(segment)


def bad_request(reason: str) -> Final:
    return Final("request", f"refused: {reason}: 400 Bad Request",
                 Answer(400, [("Content-Type", "text/html")], b"<h1>Bad Request</h1>"))


def check_call(call: Call) -> str:
    """The call's normalised path; :class:`Final` (400) for a call the traffic manager
    cannot route and forward as it came."""
    for name, value in call.headers:
        if not _HEADER_VALUE.fullmatch(value):
            raise bad_request(f"the value of header {escaped(name)} holds a character other than visible "
                              "ASCII, space and tab")
    try:
        return normalise_path(call.path)
    except BadPath as problem:
        raise bad_request(f"the path cannot be normalised: {problem}") from None


_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escaped(text: str) -> str:
    """``text`` safe for one line of a log: control characters (CR, LF, ESC, ...) escaped."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
