"""Facts of the platform's specification that both sides of apimctl rely on.

The reconciler (``kinds``, ``normalise``, ``apply``, ``export``) and the reference server
(``server.catalog``, ``server.tables``, ``server.dialects``) never import each other's
internals; constants that the specification and its supplement fix for both live here
instead of being written twice: the error message catalog (§5), the default ``detailHeader``
of its messages in the ``mashery`` dialect (§10.5) and the enum vocabularies the dialects
spell differently (§10.2), and how a date-time of the platform is read. ``tests/unit/kinds/test_platform_facts.py`` checks that both
sides and the manifest schema agree with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

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

SPEC_NAME = "spec"
MASHERY_NAME = "mashery"

# A vocabulary the dialects spell differently (SUPPLEMENT §10.2): dialect name -> its values,
# in the same order, so that the n-th value of one dialect is the n-th of the other.
Vocabulary = Mapping[str, tuple[str, ...]]

GRANT_TYPES: Vocabulary = MappingProxyType({
    SPEC_NAME: ("authorization-code", "implicit", "password", "client-credentials"),
    MASHERY_NAME: ("authorization_code", "implicit", "password", "client_credentials"),
})
FORWARDED_HEADERS: Vocabulary = MappingProxyType({
    SPEC_NAME: ("svc-host", "svc-message-id", "svc-service-id"),
    MASHERY_NAME: ("mashery-host", "mashery-message-id", "mashery-service-id"),
})
RETURNED_HEADERS: Vocabulary = MappingProxyType({
    SPEC_NAME: ("svc-message-id", "svc-responder"),
    MASHERY_NAME: ("mashery-message-id", "mashery-responder"),
})

# A new endpoint's ``returnedHeaders`` in the ``mashery`` dialect (§10.5); ``spec``: none.
MASHERY_RETURNED_HEADERS: tuple[str, ...] = ("mashery-responder",)

# The default ``detailHeader`` of the catalog's messages in the ``mashery`` dialect (§10.5), by
# message id; the others (and every message in ``spec``) default to "".
MASHERY_MESSAGE_DETAILS: Mapping[str, str] = MappingProxyType({
    "ERR_403_NOT_AUTHORIZED": "Not Authorized",
    "ERR_403_DEVELOPER_INACTIVE": "Account Inactive",
    "ERR_403_DEVELOPER_OVER_QPS": "Account Over Queries Per Second Limit",
    "ERR_403_DEVELOPER_OVER_RATE": "Account Over Rate Limit",
    "ERR_403_DEVELOPER_UNKNOWN_REFERER": "Invalid Referer",
    "ERR_403_SERVICE_OVER_QPS": "Rate Limit Exceeded",
    "ERR_403_SERVICE_REQUIRES_SSL": "Service Requires SSL",
    "ERR_503_SERVICE_UNAVAILABLE": "Scheduled Maintenance",
    "ERR_400_UNSUPPORTED_PARAMETER": "Unsupported Parameter",
    "ERR_400_UNSUPPORTED_SIGNATURE_METHOD": "Unsupported Signature Method",
    "ERR_400_MISSING_REQUIRED_CONSUMER_KEY": "Missing Required Consumer Key",
    "ERR_400_MISSING_REQUIRED_REQUEST_TOKEN": "Missing Required Request Token",
    "ERR_400_MISSING_REQUIRED_ACCESS_TOKEN": "Missing Required Access Token",
    "ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER": "Duplicated OAuth Protocol Parameter",
    "ERR_401_TIMESTAMP_IS_INVALID": "Timestamp Is Invalid",
    "ERR_401_INVALID_SIGNATURE": "Invalid Signature",
    "ERR_401_INVALID_OR_EXPIRED_TOKEN": "Invalid Or Expired Token",
    "ERR_401_INVALID_CONSUMER_KEY": "Invalid Consumer Key",
    "ERR_401_INVALID_NONCE": "Invalid NONCE",
})


def parse_datetime(value: Any) -> datetime | None:
    """An ISO 8601 date-time in either rendering of the platform (``...Z``, ``...+0000``; no
    zone: UTC) as an aware datetime, ``None`` when it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text[-1] in "Zz":
        text = text[:-1] + "+00:00"
    if len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit():
        text = f"{text[:-5]}{text[-5:-2]}:{text[-2:]}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def epoch_seconds(value: Any) -> float | None:
    """Seconds since the epoch of a date-time (:func:`parse_datetime`), ``None`` when it is
    not one: how the traffic manager's maintenance windows and the call tests' instants are
    read."""
    moment = parse_datetime(value)
    return moment.timestamp() if moment is not None else None
