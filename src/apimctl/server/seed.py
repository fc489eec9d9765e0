"""Seed data of a new area: an organization tree and one email template set.

Called once per area by :mod:`apimctl.server.engine` (the first request of an area).
"""

from __future__ import annotations

from typing import Any

from apimctl.server.store import Txn
from apimctl.server.validation import WriteCtx, format_ts

_TEMPLATES = [
    ("developer-registration", "Welcome to the developer portal", "Hello {username}, your account is ready."),
    ("key-issued", "Your new API key", "A key was issued for {application}."),
    ("key-near-quota", "Your key is near its quota", "Key {apikey} used {percent}% of its quota."),
    ("key-over-quota", "Your key is over its quota", "Key {apikey} exceeded its quota."),
    ("admin-key-review", "A key is waiting for review", "Review the key request of {username}."),
]


def seed_area(txn: Txn, area: str) -> None:
    """Objects every area has: an organization tree and one email template set."""
    ts = format_ts(WriteCtx().now, "ms")
    root: dict[str, Any] = {"id": "00000000-0000-4000-8000-000000000001", "name": "Default Organization",
            "description": "", "parent": None, "isActive": True, "created": ts, "updated": ts,
            "suborganizations": []}
    partners: dict[str, Any] = {"id": "00000000-0000-4000-8000-000000000002", "name": "Partners",
                "description": "External partners", "parent": root["id"], "isActive": True,
                "created": ts, "updated": ts, "suborganizations": []}
    root["suborganizations"] = [partners["id"]]
    txn.put(area, "organization", root["id"], root)
    txn.put(area, "organization", partners["id"], partners)
    templates = [
        {"id": str(i + 1), "created": ts, "updated": ts, "from": "no-reply@example.com",
         "subject": subject, "body": body, "type": type_}
        for i, (type_, subject, body) in enumerate(_TEMPLATES)
    ]
    txn.put(area, "emailTemplateSet", "1",
            {"id": "1", "created": ts, "updated": ts, "name": "Default", "emailTemplates": templates})

