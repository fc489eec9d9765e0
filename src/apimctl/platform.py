"""Facts of the platform's specification that both sides of apimctl rely on.

The reconciler (``kinds``, ``normalise``, ``apply``, ``export``) and the reference server
(``server.catalog``) never import each other's internals; constants that the specification
fixes for both live here instead of being written twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# The error message catalog (SUPPLEMENT §5), in its documented order: id -> (HTTP code,
# default status). Every error set holds every message; `code` follows from the id.
ERROR_CATALOG: Mapping[str, tuple[int, str]] = MappingProxyType({
    "ERR_400_BAD_REQUEST": (400, "Bad Request"),
    "ERR_403_NOT_AUTHORIZED": (403, "Forbidden"),
    "ERR_403_DEVELOPER_INACTIVE": (403, "Forbidden"),
    "ERR_403_DEVELOPER_OVER_QPS": (403, "Forbidden"),
    "ERR_403_DEVELOPER_OVER_RATE": (403, "Forbidden"),
    "ERR_403_DEVELOPER_UNKNOWN_REFERER": (403, "Forbidden"),
    "ERR_403_SERVICE_OVER_QPS": (403, "Forbidden"),
    "ERR_403_SERVICE_REQUIRES_SSL": (403, "Forbidden"),
    "ERR_414_REQUEST_URI_TOO_LONG": (414, "Request-URI Too Long"),
    "ERR_502_BAD_GATEWAY": (502, "Bad Gateway"),
    "ERR_503_SERVICE_UNAVAILABLE": (503, "Service Unavailable"),
    "ERR_504_GATEWAY_TIMEOUT": (504, "Gateway Timeout"),
    "ERR_400_UNSUPPORTED_PARAMETER": (400, "Bad Request"),
    "ERR_400_UNSUPPORTED_SIGNATURE_METHOD": (400, "Bad Request"),
    "ERR_400_MISSING_REQUIRED_CONSUMER_KEY": (400, "Bad Request"),
    "ERR_400_MISSING_REQUIRED_REQUEST_TOKEN": (400, "Bad Request"),
    "ERR_400_MISSING_REQUIRED_ACCESS_TOKEN": (400, "Bad Request"),
    "ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER": (400, "Bad Request"),
    "ERR_401_TIMESTAMP_IS_INVALID": (401, "Unauthorized"),
    "ERR_401_INVALID_SIGNATURE": (401, "Unauthorized"),
    "ERR_401_INVALID_OR_EXPIRED_TOKEN": (401, "Unauthorized"),
    "ERR_401_INVALID_CONSUMER_KEY": (401, "Unauthorized"),
    "ERR_401_INVALID_NONCE": (401, "Unauthorized"),
})
