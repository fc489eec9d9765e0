"""Reading call records, streamed: one record at a time, never the whole log.

A log is a file, a folder (its files in name order, recursively) or ``-`` (standard input);
a gzip file is read through :func:`gzip.open` (told by its first two bytes, whatever its
name). Each line is one JSON value: a record of the platform's call-log shape (SUPPLEMENT
§12), a stream message ``{"data": [record, ...]}``, an entry of the emulator's traffic log
(``GET /operator/traffic``: ``method``, ``host``, ``path``, ``status``), or a JSON list of
any of these (the emulator's log as one document). A value that is none of these, or a
record with a missing or malformed field, is yielded as a :class:`BadRecord` naming the file
and line, never raised.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qsl, urlsplit

from apimctl.platform import epoch_seconds

ABSENT = ("", "-")


@dataclass(frozen=True)
class Record:
    """One recorded call, as much as deciding it needs."""

    where: str  # file:line
    time: float  # seconds since the epoch
    method: str
    host: str
    path: str  # percent-encoded, as recorded
    query: tuple[tuple[str, str], ...]
    key: str  # "" when the call had none
    token: str  # an OAuth bearer token ("" when none)
    https: bool
    status: int  # what the caller got
    error: str  # the traffic manager's error code ("" when the call passed)


@dataclass(frozen=True)
class BadRecord:
    where: str
    reason: str


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if value is None or (isinstance(value, str) and value in ABSENT):
        return ""
    return str(value)


def _time(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and value:
        return epoch_seconds(value.strip())
    return None


def from_calllog(record: dict[str, Any], where: str) -> Record | BadRecord:
    """A record of the platform's call-log shape (every value a string)."""
    missing = [f for f in ("request_time", "http_method", "uri", "http_status_code") if not _text(record, f)]
    if missing:
        return BadRecord(where, f"missing {', '.join(missing)}")
    when = _time(record["request_time"])
    if when is None:
        return BadRecord(where, f"request_time {str(record['request_time'])[:40]!r} is not an ISO 8601 time")
    status = _text(record, "http_status_code")
    if not status.isdigit() or not 100 <= int(status) <= 999:
        return BadRecord(where, f"http_status_code {status[:20]!r} is not a status code")
    uri = _text(record, "uri")
    parts = urlsplit(uri)
    if parts.scheme or parts.netloc:  # an absolute URI: its host when no request_host_name
        host = _text(record, "request_host_name") or parts.netloc
    else:
        host = _text(record, "request_host_name")
    if not parts.path.startswith("/"):
        return BadRecord(where, f"uri {uri[:60]!r} has no path")
    error = _text(record, "traffic_manager_error_code")
    token = _text(record, "oauth_access_token")
    return Record(where, when, _text(record, "http_method").upper(), host, parts.path,
                  tuple(parse_qsl(parts.query, keep_blank_values=True)), _text(record, "api_key"), token,
                  _text(record, "ssl_enabled") in ("1", "true", "True"), int(status), error)


def from_traffic(entry: dict[str, Any], where: str) -> Record | BadRecord:
    """An entry of the emulator's traffic log (its key masked: replayed as a keyless call
    unless the entry carries ``apiKey``)."""
    if not isinstance(entry.get("status"), int) or not isinstance(entry.get("path"), str):
        return BadRecord(where, "an emulator log entry needs a numeric status and a path")
    when = _time(entry.get("time"))
    if when is None or not isinstance(entry.get("method"), str) or not isinstance(entry.get("host"), str):
        return BadRecord(where, "an emulator log entry needs time, method and host")
    parts = urlsplit(entry["path"])
    return Record(where, when, entry["method"].upper(), entry["host"], parts.path,
                  tuple(parse_qsl(parts.query, keep_blank_values=True)), str(entry.get("apiKey") or ""), "",
                  entry.get("scheme") == "https", entry["status"], "")


def _records(value: Any, where: str, *, nested: bool = False) -> Iterator[Record | BadRecord]:
    if isinstance(value, list) and not nested:
        for item in value:
            yield from _records(item, where, nested=True)
    elif not isinstance(value, dict):
        yield BadRecord(where, f"a JSON {type(value).__name__}, not a call record")
    elif isinstance(value.get("data"), list) and not nested:
        yield from _records(value["data"], where)
    elif "http_method" in value or "request_time" in value:
        yield from_calllog(value, where)
    elif "decidedBy" in value or "status" in value:
        yield from_traffic(value, where)
    else:
        yield BadRecord(where, "neither a call record nor a traffic log entry")


def _lines(stream: IO[bytes], name: str) -> Iterator[Record | BadRecord]:
    for number, raw in enumerate(stream, start=1):
        line = raw.strip()
        if not line:
            continue
        where = f"{name}:{number}"
        try:
            value = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            yield BadRecord(where, f"not JSON ({str(exc).split(':')[0]})")
            continue
        except RecursionError:
            yield BadRecord(where, "JSON nested too deeply")
            continue
        yield from _records(value, where)


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else path.open("rb")  # type: ignore[return-value]


def _file(path: Path) -> Iterator[Record | BadRecord]:
    try:
        with _open(path) as stream:
            yield from _lines(stream, str(path))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        yield BadRecord(str(path), f"cannot be read ({type(exc).__name__}: {exc})")


def read(source: str) -> Iterator[Record | BadRecord]:
    """The records of ``source`` (a file, a folder or ``-``), in order."""
    if source == "-":
        yield from _lines(sys.stdin.buffer, "<stdin>")
        return
    path = Path(source)
    if path.is_dir():
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                yield from _file(Path(root) / name)
    elif path.exists():
        yield from _file(path)
    else:
        yield BadRecord(source, "no such file or folder")
