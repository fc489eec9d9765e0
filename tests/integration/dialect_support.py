"""What the integration suites need to run against either dialect of the reference server
(``spec`` and ``mashery``, spec/SUPPLEMENT.md §10) with the same manifests and the same
assertions.

Tests that build an area by hand through raw API calls, or read it back directly, go
through these helpers instead of assuming the ``spec`` shapes:

- :func:`spoken`: a value in the dialect's enum vocabulary (``svc-*`` / ``mashery-*``,
  hyphenated / underscored grant types, §10.2); :func:`foreign_words`: the other
  dialect's, which text written for the dialect never holds;
- :func:`one`: a single object, bare or as a one-element array (§1, §10.3); :func:`many`:
  the objects of a list read, whichever way a helper unwrapped it;
- :func:`role_writes` / :func:`role_change`: role permissions written item by item
  (``spec``) or as one collection (``mashery``, §10.7);
- :func:`message_default`: the default ``detailHeader`` of a catalog message (§10.5).

The translation tables are written out here rather than taken from ``apimctl``: the tests
check the reconciler's translation, they must not share it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apimctl.server.dialects import MASHERY as SERVER_MASHERY

SPEC, MASHERY = "spec", "mashery"

Call = tuple[str, str, Any]  # method, path, body

# §10.2: the specification's word -> the mashery word (the same order as the spec tables)
_MASHERY_WORDS: dict[str, str] = {
    "svc-host": "mashery-host",
    "svc-message-id": "mashery-message-id",
    "svc-service-id": "mashery-service-id",
    "svc-responder": "mashery-responder",
    "authorization-code": "authorization_code",
    "client-credentials": "client_credentials",
}

# §10.5: the mashery default detailHeader of a new error set's messages ("" elsewhere), as the
# reference server creates them (tests/server/test_dialect_mashery.py checks that table against
# the SUPPLEMENT's list); what these tests check is the reconciler's own table
MASHERY_DETAILS: dict[str, str] = {mid: str(m["detailHeader"]) for mid, m in SERVER_MASHERY.messages.items()
                                   if m.get("detailHeader")}


def _translate(value: Any, words: dict[str, str]) -> Any:
    if isinstance(value, str):
        return words.get(value, value)
    if isinstance(value, list):
        return [_translate(v, words) for v in value]
    if isinstance(value, tuple):
        return tuple(_translate(v, words) for v in value)
    if isinstance(value, dict):
        return {k: _translate(v, words) for k, v in value.items()}
    return value


def spoken(dialect: str, value: Any) -> Any:
    """``value`` (written in the specification's words) in ``dialect``'s enum vocabulary;
    strings, lists, tuples and mappings (values only) are translated, anything else kept."""
    return _translate(value, _MASHERY_WORDS) if dialect == MASHERY else value


def foreign_words(dialect: str) -> tuple[str, ...]:
    """The enum words of the other dialect: text written for ``dialect`` (an export, a
    request) never holds them."""
    return tuple(_MASHERY_WORDS) if dialect == MASHERY else tuple(_MASHERY_WORDS.values())


def one(body: Any) -> dict[str, Any]:
    """A single object as either dialect answers it: a one-element array (``spec``) or the
    bare object (``mashery``, and ``spec`` with ``--object-responses``)."""
    if isinstance(body, list):
        assert len(body) == 1, body
        body = body[0]
    assert isinstance(body, dict), body
    return body


def many(body: Any) -> list[dict[str, Any]]:
    """The objects of a list read, however it came back (a list, or a single object)."""
    items = body if isinstance(body, list) else [] if body is None else [body]
    assert all(isinstance(item, dict) for item in items), body
    return items


def role_writes(dialect: str, path: str, ids: Sequence[str], action: str) -> list[Call]:
    """The calls that give the object at ``path`` (``/services/{sid}/roles``,
    ``.../plans/{planId}/roles``) exactly the role permissions ``ids``, starting from none
    (``spec``: one POST per role) or from any set (``mashery``: the collection replaced)."""
    if dialect == MASHERY:
        if not ids:
            return [("DELETE", path, None)]
        return [("PUT", path, {"roles": [{"id": rid, "action": action} for rid in ids]})]
    return [("POST", path, {"id": rid, "action": action}) for rid in ids]


def role_change(dialect: str, path: str, ids: Sequence[str], drop: str, action: str) -> tuple[Call, Call]:
    """An out-of-band removal of role ``drop`` from the permissions ``ids`` at ``path``, and
    the call that puts it back, in the dialect's way of writing role permissions."""
    if dialect == MASHERY:
        kept = [rid for rid in ids if rid != drop]
        (change,) = role_writes(dialect, path, kept, action)
        (revert,) = role_writes(dialect, path, list(ids), action)
        return change, revert
    return ("DELETE", f"{path}/{drop}", None), ("POST", path, {"id": drop, "action": action})


def message_default(dialect: str, message_id: str) -> str:
    """The ``detailHeader`` a new error set's message has in ``dialect``."""
    return MASHERY_DETAILS.get(message_id, "") if dialect == MASHERY else ""


# --- a reference server in a thread of the test process ---------------------------------------


@dataclass
class ThreadServer:
    """``apimctl serve`` in a thread of this process (uvicorn on 127.0.0.1 and a free port):
    a real HTTP target for command-line runs, without a Python start-up per server. Each test
    takes an area of its own (:meth:`fresh_token`)."""

    url: str
    areas: int
    used: int = 0

    def fresh_token(self) -> str:
        self.used += 1
        assert self.used <= self.areas, "start the server with more areas"
        return f"area-token-{self.used}"


@contextmanager
def served_in_thread(db: Path, dialect: str, areas: int) -> Iterator[ThreadServer]:
    """A reference server of ``dialect`` on the database ``db``, for the ``with`` block."""
    from apimctl.server import ServerConfig, create_app

    from .inprocess import uvicorn_in_thread

    config = ServerConfig(db_path=str(db), tokens={f"area-token-{i}": f"area-{i}" for i in range(1, areas + 1)},
                          auto_approve_domains=True, dialect=dialect)
    with uvicorn_in_thread(create_app(config)) as port:
        yield ThreadServer(f"http://127.0.0.1:{port}/v3/rest", areas)
