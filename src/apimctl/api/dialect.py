"""Which dialect the target speaks (spec/SUPPLEMENT.md §10): chosen, or detected.

``--dialect spec|mashery|auto`` (``APIMCTL_DIALECT``) or the manifests' ``settings.dialect``
choose it; ``auto`` (the default) detects it: the embedded server is ``spec``; a host under
``mashery.com`` is ``mashery``; otherwise the replies tell. Every reply the client receives
is looked at (:meth:`DialectChoice.observe`: an ``X-Mashery-*`` header, an error body with a
string ``errorCode``); when none has told yet, one probe (``GET /services/<no such id>``, a
404 in both dialects) does. :class:`Detected` says which dialect and why, for the plan.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from apimctl import kinds
from apimctl.errors import ApiError
from apimctl.kinds.dialects import (
    AUTO,
    CHOICES,
    MASHERY_HEADER_PREFIX,
    MASHERY_HOST_SUFFIX,
    MASHERY_NAME,
    SPEC_NAME,
    mashery_values,
)

PROBE_ID = "apimctl-dialect-probe"
PROBE_PATH = kinds.ROLES.probe.item_path(PROBE_ID)


@dataclass(frozen=True)
class Detected:
    """The dialect used, and why (``--dialect``, ``embedded server``, the reply that told)."""

    name: str
    reason: str


def mashery_sign(response: httpx.Response, where: str = "") -> str | None:
    """What in a reply shows the ``mashery`` dialect, or ``None``: an ``X-Mashery-*`` header
    (any answer may carry one, so which call it came on is not said), or a string error code
    ``on`` the call ``where`` names."""
    for name in response.headers:
        if name.lower().startswith(MASHERY_HEADER_PREFIX):
            return f"{'-'.join(p.capitalize() for p in name.split('-'))} header"
    if response.status_code >= 400 and "json" in response.headers.get("content-type", ""):
        try:
            body = response.json()
        except ValueError:
            return None
        if isinstance(body, dict) and isinstance(body.get("errorCode"), str) and body["errorCode"].startswith("ERR_"):
            return f"string error code on {where.split('?', 1)[0]}" if where else "string error code"
    return None


@dataclass
class DialectChoice:
    """What the user asked for and what the replies showed; one per client."""

    requested: str = AUTO
    source: str = ""  # where ``requested`` came from: "--dialect", "APIMCTL_DIALECT"
    embedded: bool = False
    host: str = ""
    sign: str = ""  # the first reply showing the mashery dialect: "... on GET /services"
    probed: bool = False

    def __post_init__(self) -> None:
        if self.requested not in CHOICES:
            raise ValueError(f"unknown dialect {self.requested!r}; choose one of {', '.join(CHOICES)}")

    def observe(self, where: str, response: httpx.Response) -> None:
        if self.sign:
            return
        self.sign = mashery_sign(response, where) or ""

    def decided(self, setting: str | None = None) -> Detected | None:
        """The dialect when it is known without (more) replies, else ``None``."""
        if self.requested != AUTO:
            return Detected(self.requested, self.source or "--dialect")
        if setting and setting != AUTO:
            return Detected(setting, "settings.dialect")
        if self.embedded:
            return Detected(SPEC_NAME, "embedded server")
        host = self.host.lower().rstrip(".")
        if host == MASHERY_HOST_SUFFIX or host.endswith("." + MASHERY_HOST_SUFFIX):
            return Detected(MASHERY_NAME, f"host under {MASHERY_HOST_SUFFIX}")
        if self.sign:
            return Detected(MASHERY_NAME, self.sign)
        return None


class Probed(Protocol):
    """What :func:`detect` asks of a client (:class:`apimctl.api.client.ApiClient`): its
    :class:`DialectChoice` and a GET for the probe."""

    @property
    def dialect(self) -> DialectChoice: ...

    async def get(self, path: str, params: Any = None) -> Any: ...


def setting_of(doc: Any) -> str | None:
    """``settings.dialect`` of a manifest document."""
    settings = doc.get("settings") if isinstance(doc, dict) else None
    value = settings.get("dialect") if isinstance(settings, dict) else None
    return str(value) if isinstance(value, str) else None


async def detect(client: Probed, setting: str | None = None, live_endpoints: Any = ()) -> Detected:
    """The target's dialect (see the module docstring). ``live_endpoints``: the endpoint docs
    already read: their values tell (a ``mashery`` area's endpoints return
    ``mashery-responder`` unless told not to), so only an area without endpoints is probed."""
    choice = client.dialect
    found = choice.decided(setting)
    if found is not None:
        return found
    endpoints = list(live_endpoints)
    if any(mashery_values(kinds.ROLES.tells_dialect, doc) for doc in endpoints):
        return Detected(MASHERY_NAME, "mashery-* values in live endpoints")
    if endpoints:  # every endpoint of a mashery area returns mashery-responder unless told not to
        return Detected(SPEC_NAME, "no mashery-* values in live endpoints")
    if not choice.probed:
        choice.probed = True
        with contextlib.suppress(ApiError):  # a 404 is expected; other failures show on the reads
            await client.get(PROBE_PATH, {"fields": "id"})  # every read names its fields (§10.10.8)
        found = choice.decided(setting)
        if found is not None:
            return found
    return Detected(SPEC_NAME, "no sign of the mashery dialect in the replies")
