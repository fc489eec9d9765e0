"""Which ``$ref`` an OpenAPI document may follow, for the validator and the import.

``openapi-spec-validator`` resolves references through ``jsonschema-path`` and
``referencing``; by default those read any ``file://`` path and fetch any URL. The handlers
made here (:func:`ref_handlers`) allow only:

- a file under the folder of the document (its real path: a symbolic link that leaves the
  folder is refused), read as the document is (:mod:`apimctl.openapi.reading`: a regular
  file, bounded size, bounded YAML);
- an ``http``/``https`` URL whose host the caller allows (``--allow-ref-host``), read with a
  timeout and the same size bound (a redirect only to an allowed host).

Anything else raises :class:`RefRefused`; the document module reports it at the ``$ref``
that asked for it, naming the reference and never what it points to. A reference inside the
document (``#/components/...``) never reaches these handlers.
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from apimctl.openapi.reading import (
    MAX_DOCUMENT_BYTES,
    STDIN,
    OpenApiError,
    decode,
    parse,
    read_bytes,
)

FETCH_TIMEOUT = 10.0  # seconds for one referenced URL


class RefRefused(Exception):
    """A ``$ref`` the policy does not follow; the message says why (never the target's content)."""


@dataclass(frozen=True)
class RefPolicy:
    """What references may reach: files under the document's folder (``folder``: its real
    path; ``None`` for a document read from stdin: no file at all) and URLs on ``hosts``."""

    folder: str | None
    hosts: frozenset[str] = frozenset()

    @classmethod
    def of(cls, file: str, hosts: tuple[str, ...] | frozenset[str] = ()) -> RefPolicy:
        folder = None if file == STDIN else os.path.realpath(os.path.dirname(os.path.abspath(file)))
        return cls(folder, frozenset(h.lower() for h in hosts))


def ref_handlers(policy: RefPolicy) -> Mapping[str, Callable[[str], Any]]:
    """``jsonschema-path`` handlers for every URI scheme, enforcing ``policy``."""
    return _EveryScheme(_Guard(policy))


class _EveryScheme(Mapping[str, Callable[[str], Any]]):
    """Answers for every scheme, so nothing falls back to the library's own ``urlopen``."""

    def __init__(self, handler: Callable[[str], Any]) -> None:
        self.handler = handler

    def __getitem__(self, scheme: str) -> Callable[[str], Any]:
        return self.handler

    def __contains__(self, scheme: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(("file", "http", "https"))

    def __len__(self) -> int:
        return 3


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to an allowed host."""

    def __init__(self, hosts: frozenset[str]) -> None:
        self.hosts = hosts

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> Any:
        parts = urlsplit(newurl)
        if parts.scheme not in ("http", "https") or (parts.hostname or "").lower() not in self.hosts:
            raise RefRefused(f"{req.full_url}: redirected to {newurl}, not on a host given with "
                             "--allow-ref-host")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


@dataclass(frozen=True)
class _Guard:
    policy: RefPolicy

    def __call__(self, uri: str) -> Any:
        parts = urlsplit(uri)
        if parts.scheme == "file" and not parts.netloc:
            return self.file(uri, unquote(parts.path))
        if parts.scheme in ("http", "https"):
            return self.url(uri, (parts.hostname or "").lower())
        raise RefRefused(f"{uri}: only files under the document's folder and URLs on an allowed "
                         "host (--allow-ref-host) are followed")

    def file(self, uri: str, path: str) -> Any:
        folder = self.policy.folder
        if folder is None:
            raise RefRefused(f"{uri}: a document read from stdin may refer only to itself")
        real = os.path.realpath(path)
        if os.path.commonpath([real, folder]) != folder:
            raise RefRefused(f"{uri}: outside the document's folder {folder} (through a symbolic "
                             "link or a path); only files under it are followed")
        try:
            text = decode(path, read_bytes(real))
            return parse(path, text)[0]
        except OpenApiError as exc:
            raise RefRefused("; ".join(str(p) for p in exc.problems)) from None

    def url(self, uri: str, host: str) -> Any:
        if host not in self.policy.hosts:
            raise RefRefused(f"{uri}: not fetched; the network is used only for hosts given with "
                             "--allow-ref-host")
        opener = urllib.request.build_opener(_Redirects(self.policy.hosts))
        try:
            with opener.open(uri, timeout=FETCH_TIMEOUT) as response:
                data = response.read(MAX_DOCUMENT_BYTES + 1)
        except OSError as exc:
            raise RefRefused(f"{uri}: cannot fetch it: {getattr(exc, 'reason', None) or exc}") from None
        if len(data) > MAX_DOCUMENT_BYTES:
            raise RefRefused(f"{uri}: larger than the {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB limit")
        try:
            return parse(uri, decode(uri, data))[0]
        except OpenApiError as exc:
            raise RefRefused("; ".join(str(p) for p in exc.problems)) from None
