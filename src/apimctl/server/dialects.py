"""Dialects of the management API: the one table of how ``spec`` and ``mashery`` differ.

The ``spec`` dialect is the specification with SUPPLEMENT sections 1-9; ``mashery``
(SUPPLEMENT §10) is how real deployments are publicly seen to behave. Everything that
differs is a value of :class:`Dialect`, and nothing else in the server asks which dialect
it serves: it looks the value up (``DIALECTS[config.dialect].<value>``).

- :mod:`~apimctl.server.tables` stays the specification; :attr:`Dialect.overlays` (changes
  to rows: enum values, types, nullability, defaults, Exp-ness), :attr:`Dialect.extra_fields`
  and :attr:`Dialect.extra_resources` are applied by :mod:`~apimctl.server.catalog`, which
  builds one catalog per dialect at start-up.
- :attr:`Dialect.node_ops` and :attr:`Dialect.extra_singles` change the resource tree
  (:mod:`~apimctl.server.tree` builds one tree per dialect).
- The HTTP layer takes headers and error bodies from :meth:`Dialect.error_body` and
  :meth:`Dialect.error_headers`, the headers of every answer and the JSON content type from
  :attr:`Dialect.answer_headers` and :attr:`Dialect.json_content_type`, the throttling
  replies from :attr:`Dialect.throttle_markup`; the rules take error-message defaults from
  :meth:`Dialect.message` and the route rule from :attr:`Dialect.route_message`, the read
  parameters the comma-joined filters and :attr:`Dialect.nested_wildcards`.
- What real areas hold (SUPPLEMENT §10.10) is in the same table, each fact with the point of
  §10.10 it comes from: unset values are overlays of the field tables (``nullable``,
  ``default``, ``unset``: the written spellings of "not set", ``null_reads``: what a stored
  ``null`` reads as).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from apimctl.platform import (
    ERROR_CATALOG,
    FORWARDED_HEADERS,
    GRANT_TYPES,
    MASHERY_MESSAGE_DETAILS,
    MASHERY_NAME,
    MASHERY_RETURNED_HEADERS,
    RETURNED_HEADERS,
)
from apimctl.server.fields import (
    ANY,
    BOOLEAN,
    DATETIME,
    ENUM,
    ONE,
    STRING,
    Field,
    Resource,
    exp,
    imp,
)

Overlay = Mapping[str, Mapping[str, Mapping[str, Any]]]  # resource -> field -> Field changes


def _frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


# error code of a status where no catalog message says more (string error codes)
STATUS_CODES: Mapping[int, str] = MappingProxyType({
    400: "ERR_400_BAD_REQUEST",
    401: "ERR_401_INVALID_OR_EXPIRED_TOKEN",
    403: "ERR_403_NOT_AUTHORIZED",
    404: "ERR_404_NOT_FOUND",
    405: "ERR_405_METHOD_NOT_ALLOWED",
    413: "ERR_413_REQUEST_ENTITY_TOO_LARGE",
    414: "ERR_414_REQUEST_URI_TOO_LONG",
    500: "ERR_500_INTERNAL_SERVER_ERROR",
    502: "ERR_502_BAD_GATEWAY",
    503: "ERR_503_SERVICE_UNAVAILABLE",
    504: "ERR_504_GATEWAY_TIMEOUT",
})


@dataclass(frozen=True)
class Dialect:
    """How one dialect answers. The defaults are the ``spec`` dialect."""

    name: str
    # headers (SUPPLEMENT §6, §10.1)
    error_code_header: str = "X-Svc-Error-Code"
    detail_header: str | None = None  # header carrying the message's detail text
    retry_after: bool = True  # throttling replies carry Retry-After
    fixed_retry_after: int | None = None  # ... always this many seconds (else the wait computed)
    # headers on every answer of the management API and the token endpoint (§10.10.5)
    answer_headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    json_content_type: str = "application/json"  # the Content-Type of JSON answers (§10.10.5)
    # throttling replies (over QPS, over quota): a body of this markup, ``{message}`` the
    # refusal's text, with this Content-Type, instead of the JSON error body (§10.10.6)
    throttle_markup: str | None = None
    throttle_content_type: str = "text/xml"
    auth_error_codes: bool = False  # 401/403 auth failures and token errors carry the headers
    host_header: str = "X-Svc-Host"  # the endpoint header carrying the original host
    # bodies (§1, §6, §10.3)
    bare_objects: bool = False  # single objects bare, whatever --object-responses says
    string_error_codes: bool = False  # {"errorCode": "<string>", "errorMessage", "errors"}
    validation_error_code: str | None = None  # errorCode of a validation failure (§10.10.5)
    comma_filters: bool = False  # several filters comma-joined in one ``filter`` parameter
    # field tables (§10.2, 10.4, 10.5, 10.6, 10.7, 10.8)
    overlays: Overlay = field(default_factory=lambda: MappingProxyType({}))
    extra_fields: Mapping[str, tuple[Field, ...]] = field(default_factory=lambda: MappingProxyType({}))
    extra_resources: tuple[Resource, ...] = ()
    # error-message defaults (§10.5): id -> {"detailHeader": ..., "code": ...}
    messages: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    auto_entitle: bool = False  # entitling a service entitles all its endpoints and methods
    # resource tree (§10.6, 10.7, 10.9): path of segments -> operations; extra singletons
    node_ops: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))
    extra_singles: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=lambda: MappingProxyType({}))
    domain_kinds: bool = False  # GET /domains/public and /domains/system
    # codes of token-endpoint errors by status (with auth_error_codes)
    token_codes: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))
    bad_client_status: int = 401  # status of a token request with a wrong API key or secret (§7, §10.10.7)
    # endpoint routes (§4, §10.10.1): None, (path, public domain) is unique; else routes are
    # (HTTP method, public domain, path) and a repeated one is refused with this message
    route_message: str | None = None
    # ``X.*`` below the top level of ``fields`` returns every field of X (§1); False: it is an
    # unknown name, ignored (§10.10.8). ``ServerConfig.nested_wildcards`` overrides it.
    nested_wildcards: bool = True

    def message(self, message_id: str) -> dict[str, Any]:
        """The default of an error message of the catalog (SUPPLEMENT §5, §10.5)."""
        code, status = ERROR_CATALOG[message_id]
        out: dict[str, Any] = {"id": message_id, "code": code, "status": status, "detailHeader": "",
                               "responseBody": ""}
        out.update(self.messages.get(message_id, {}))
        return out

    def code_of(self, status: int) -> str:
        return STATUS_CODES.get(status, f"ERR_{status}")

    def error_body(self, status: int, message: str, items: list[dict[str, str]] | None = None,
                   code: str | None = None) -> Any:
        """The JSON body of an error. ``items``: validation items (a 400 of validation)."""
        if self.string_error_codes:
            if code is None and items is not None and self.validation_error_code:
                code = self.validation_error_code
            return {"errorCode": code or self.code_of(status), "errorMessage": message, "errors": list(items or [])}
        if items is not None:
            return items or [{"property": "", "message": message}]
        return {"errorCode": status, "errorMessage": message}

    def detail(self, code: str) -> str:
        """The detail text of an error code: the message's default detailHeader, else its status."""
        if code in ERROR_CATALOG:
            return str(self.message(code)["detailHeader"] or ERROR_CATALOG[code][1])
        return code

    def error_headers(self, code: str) -> dict[str, str]:
        """The headers naming an error code (throttling, auth failures)."""
        headers = {self.error_code_header: code}
        if self.detail_header:
            headers[self.detail_header] = self.detail(code)
        return headers

    def auth_headers(self, status: int, token: bool = False) -> dict[str, str]:
        """Headers of an auth failure (401/403) or a token error (``token``), where the
        dialect has them."""
        if not self.auth_error_codes:
            return {}
        code = self.token_codes.get(status) if token else None
        return self.error_headers(code or self.code_of(status))


SPEC = Dialect("spec")

_MESSAGES = {mid: _frozen({"detailHeader": text}) for mid, text in MASHERY_MESSAGE_DETAILS.items()}
# the published default set shows this message with code 504
_MESSAGES["ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER"] = _frozen(
    {"detailHeader": MASHERY_MESSAGE_DETAILS["ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER"], "code": 504})

_ROLE_OPS = frozenset({"list", "fetch", "replace", "clear"})

# unset values as real areas read them (§10.10.3): the field reads null until a value is set
_UNSET_NULL = _frozen({"nullable": True, "default": None})
# ... and the written spellings of "not set" are stored as null (a secret is unset whether
# it is written null or "")
_CREDENTIAL = _frozen({**_UNSET_NULL, "unset": ("",)})

MASHERY = Dialect(
    "mashery",
    error_code_header="X-Mashery-Error-Code",
    detail_header="X-Error-Detail-Header",
    # §10.10.6 (which wins over §10.1's "no Retry-After"): over QPS carries Retry-After: 1
    retry_after=True,
    fixed_retry_after=1,
    answer_headers=_frozen({"X-Mashery-Responder": "apimctl-reference"}),  # §10.10.5
    json_content_type="application/json;charset=UTF-8",  # §10.10.5
    throttle_markup="<h1>{message}</h1>",  # §10.10.6, Content-Type text/xml
    auth_error_codes=True,
    host_header="X-Mashery-Host",
    bare_objects=True,
    string_error_codes=True,
    validation_error_code="400",  # §10.10.5: the HTTP status as a string
    comma_filters=True,
    overlays=_frozen({
        "Endpoint": _frozen({
            "forwardedHeaders": _frozen({"values": FORWARDED_HEADERS[MASHERY_NAME]}),
            "returnedHeaders": _frozen({"values": RETURNED_HEADERS[MASHERY_NAME],
                                        "default": list(MASHERY_RETURNED_HEADERS)}),
            "oauthGrantTypes": _frozen({"values": GRANT_TYPES[MASHERY_NAME]}),
            # §10.3, §10.10.3: null (or "") when no back-end credentials are set
            "systemDomainCredentialKey": _CREDENTIAL,
            "systemDomainCredentialSecret": _CREDENTIAL,
            # §10.10.3: cors reads null when CORS was never set (the object once written;
            # DELETE of .../cors makes it unset again)
            "cors": _frozen({**_UNSET_NULL, "autobuild": False}),
            # §10.10.3: null (or [""]) when never set; [] and [""] written mean "none"
            "headersToExcludeFromIncomingCall": _frozen({**_UNSET_NULL, "unset": ([], [""])}),
            # §10.10.3: "" when the endpoint is in no maintenance event ("" written means none)
            "scheduledMaintenanceEvent": _frozen({"null_reads": "", "unset": ("",)}),
        }),
        # §10.10.3: sample responses read null when unset
        "Method": _frozen({"sampleJsonResponse": _UNSET_NULL, "sampleXmlResponse": _UNSET_NULL}),
        "OAuth": _frozen({"grantTypes": _frozen({"values": GRANT_TYPES[MASHERY_NAME]})}),
        # a plan's ceilings may be null (no limit, as 0): public clients type them nullable
        # (the Go client of the v3 API, aliakseiyanchuk/mashery-v3-go-client, masherytypes),
        # as they do a service's overall QPS limit
        "Plan": _frozen({"emailTemplateSetId": _frozen({"type": STRING}),
                         **{name: _frozen({"nullable": True})
                            for name in ("qpsLimitCeiling", "rateLimitCeiling")}}),
        "PlanService": _frozen({"endpoints": _frozen({"fetch": "Exp", "replace": True})}),
        "PlanEndpoint": _frozen({"methods": _frozen({"fetch": "Exp"})}),
        # §10.7, §10.10.3: a service without roles reads roles null; securityProfile reads
        # {oauth: null} in both dialects (§3)
        "Service": _frozen({"roles": _UNSET_NULL, "qpsLimitOverall": _frozen({"nullable": True})}),
        "ServiceRole": _frozen({"action": _frozen({"create": "Req"})}),
        "PlanRole": _frozen({"action": _frozen({"create": "Req"})}),
        # §10.10.3: a package's integer settings may be written and read as null (the
        # defaults of §3 stay for a package created without them)
        "Package": _frozen({name: _frozen({"nullable": True})
                            for name in ("nearQuotaThreshold", "keyLength", "sharedSecretLength")}),
    }),
    extra_fields=_frozen({
        "Endpoint": (
            exp("inboundMsslRequired", BOOLEAN),
            exp("userControlledErrorLocation"),
            exp("userControlledErrorLocationKey"),
            exp("rateLimitHeadersEnabled", BOOLEAN),
        ),
        "OAuth": (
            imp("masheryTokenApiEnabled", BOOLEAN),
            imp("enableRefreshTokenTtl", BOOLEAN),
            imp("forceOauthRedirectUrl", BOOLEAN),
            imp("macAlgorithm", ENUM, values=("hmac-sha-1", "hmac-sha-256"), nullable=True, default=None),
        ),
        "Service": (exp("organization", ANY, nullable=True, default=None),),
        "Package": (exp("organization", ANY, nullable=True, default=None),),
        "PackageKey": (imp("expires", DATETIME, nullable=True, default=None),),
        "Plan": (exp("adminEmailTemplateSetId", STRING, nullable=True, default=None),),
        "PlanMethod": (exp("responseFilter", ONE, nested="PlanResponseFilter", nullable=True, default=None),),
    }),
    extra_resources=(
        # a plan method's response filter: one of the method's response filters, by id
        Resource("PlanResponseFilter", (
            imp("id", create="Req", update="ReqCtx"),
            imp("name", create="Ign", update="Ign"),
        ), id_style="ref", ts_style=None),
    ),
    messages=_frozen(_MESSAGES),
    auto_entitle=True,
    node_ops=_frozen({
        "services/roles": _ROLE_OPS,
        "packages/plans/roles": _ROLE_OPS,
        "packages/plans/services": frozenset({"list", "create", "fetch", "update", "delete"}),
    }),
    extra_singles=_frozen({
        "packages/plans/services/endpoints/methods": (("responseFilter", "PlanResponseFilter"),),
    }),
    domain_kinds=True,
    # §10.10.7: a wrong API key or secret answers 403 ERR_403_DEVELOPER_INACTIVE; a refused
    # grant (an expired refresh token) 400 ERR_400_BAD_REQUEST
    token_codes=MappingProxyType({401: "ERR_401_INVALID_CONSUMER_KEY", 403: "ERR_403_DEVELOPER_INACTIVE",
                                  400: "ERR_400_BAD_REQUEST"}),
    bad_client_status=403,
    # §10.10.1: routes are (HTTP method, public domain, path)
    route_message="Found an endpoint with method '{method}', domain '{domain}' and path '{path}' "
                  "that belongs to someone else",
    # §10.10.8: no public client or dump uses a nested wildcard; the reconciler never needs one
    nested_wildcards=False,
)

DIALECTS: Mapping[str, Dialect] = MappingProxyType({d.name: d for d in (SPEC, MASHERY)})
NAMES: tuple[str, ...] = tuple(DIALECTS)


def dialect_of(name: str) -> Dialect:
    """The dialect called ``name`` (``ValueError`` if unknown)."""
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; choose one of {', '.join(NAMES)}") from None
