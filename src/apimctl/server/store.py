"""SQLite document store of the reference server.

One JSON document per top-level object (a service with its whole tree, a package with its
plans, a role, a domain, a maintenance event, a member, an application, a package key ...)
keyed by ``(area, kind, id)``, an index table for uniqueness constraints, and the issued
access tokens. The request engine (:mod:`apimctl.server.engine`) opens exactly one
transaction per request: :meth:`Store.read` for reads, :meth:`Store.write` (``BEGIN
IMMEDIATE``) for writes. Each thread gets its own connection; WAL and ``busy_timeout`` let
concurrent requests wait for each other instead of failing.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import msgspec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    area TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (area, kind, id));
CREATE TABLE IF NOT EXISTS uniq (
    area TEXT NOT NULL, scope TEXT NOT NULL, value TEXT NOT NULL, owner TEXT NOT NULL,
    sticky INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (area, scope, value));
CREATE INDEX IF NOT EXISTS uniq_owner ON uniq (area, scope, owner);
CREATE TABLE IF NOT EXISTS tokens (
    token TEXT PRIMARY KEY, kind TEXT NOT NULL, area TEXT NOT NULL, user TEXT,
    expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS areas (area TEXT PRIMARY KEY);
"""

_PROBES = (
    "SELECT area, kind, id, body FROM docs LIMIT 0",
    "SELECT area, scope, value, owner, sticky FROM uniq LIMIT 0",
    "SELECT token, kind, area, user, expires FROM tokens LIMIT 0",
    "SELECT area FROM areas LIMIT 0",
)

_dumps = msgspec.json.encode
_loads = msgspec.json.decode


class Txn:
    """The operations of one transaction (documents, unique keys, tokens)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def get(self, area: str, kind: str, id_: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT body FROM docs WHERE area=? AND kind=? AND id=?", (area, kind, id_)
        ).fetchone()
        return None if row is None else _loads(row[0])  # type: ignore[no-any-return]

    def all(self, area: str, kind: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT body FROM docs WHERE area=? AND kind=? ORDER BY rowid", (area, kind)
        ).fetchall()
        return [_loads(r[0]) for r in rows]

    def page(self, area: str, kind: str, offset: int, limit: int) -> Iterator[bytes]:
        """The stored bodies of one page of documents, undecoded, in creation order."""
        cur = self.conn.execute(
            "SELECT body FROM docs WHERE area=? AND kind=? ORDER BY rowid LIMIT ? OFFSET ?",
            (area, kind, limit, offset),
        )
        for row in cur:
            yield row[0] if isinstance(row[0], bytes) else str(row[0]).encode()

    def count(self, area: str, kind: str) -> int:
        row = self.conn.execute("SELECT COUNT(*) FROM docs WHERE area=? AND kind=?", (area, kind)).fetchone()
        return int(row[0])

    def put(self, area: str, kind: str, id_: str, doc: dict[str, Any]) -> None:
        body = _dumps(doc)
        cur = self.conn.execute(
            "UPDATE docs SET body=? WHERE area=? AND kind=? AND id=?", (body, area, kind, id_)
        )
        if cur.rowcount == 0:
            self.conn.execute(
                "INSERT INTO docs (area, kind, id, body) VALUES (?, ?, ?, ?)", (area, kind, id_, body)
            )

    def delete(self, area: str, kind: str, id_: str) -> bool:
        cur = self.conn.execute("DELETE FROM docs WHERE area=? AND kind=? AND id=?", (area, kind, id_))
        return cur.rowcount > 0

    def find_kind(self, area: str, id_: str, kinds: tuple[str, ...]) -> str | None:
        """Which of ``kinds`` holds a document with this id, if any."""
        marks = ",".join("?" * len(kinds))
        row = self.conn.execute(
            f"SELECT kind FROM docs WHERE area=? AND id=? AND kind IN ({marks})", (area, id_, *kinds)
        ).fetchone()
        return None if row is None else str(row[0])

    def claim(self, area: str, scope: str, owner: str, values: list[str], sticky: bool = False) -> list[str]:
        """Make ``values`` the unique keys of ``owner`` in ``scope``; answer those taken by others.

        Non-sticky keys the owner held before and no longer lists are released; sticky keys
        (usernames) stay taken for ever.
        """
        taken: list[str] = []
        if not sticky:
            self.conn.execute("DELETE FROM uniq WHERE area=? AND scope=? AND owner=? AND sticky=0", (area, scope, owner))
        for value in values:
            row = self.conn.execute(
                "SELECT owner FROM uniq WHERE area=? AND scope=? AND value=?", (area, scope, value)
            ).fetchone()
            if row is None:
                self.conn.execute(
                    "INSERT INTO uniq (area, scope, value, owner, sticky) VALUES (?, ?, ?, ?, ?)",
                    (area, scope, value, owner, int(sticky)),
                )
            elif row[0] != owner:
                taken.append(value)
        return taken

    def owner(self, area: str, scope: str, value: str) -> str | None:
        """Who holds a unique key (the endpoint index maps endpoint ids to services)."""
        row = self.conn.execute(
            "SELECT owner FROM uniq WHERE area=? AND scope=? AND value=?", (area, scope, value)
        ).fetchone()
        return None if row is None else str(row[0])

    def release(self, area: str, scope: str, owner: str) -> None:
        self.conn.execute("DELETE FROM uniq WHERE area=? AND scope=? AND owner=? AND sticky=0", (area, scope, owner))

    # Tokens -------------------------------------------------------------------------
    def put_token(self, token: str, kind: str, area: str, user: str | None, expires: float) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO tokens (token, kind, area, user, expires) VALUES (?, ?, ?, ?, ?)",
            (token, kind, area, user, expires),
        )

    def get_token(self, token: str, kind: str) -> tuple[str, str | None, float] | None:
        row = self.conn.execute(
            "SELECT area, user, expires FROM tokens WHERE token=? AND kind=?", (token, kind)
        ).fetchone()
        return None if row is None else (str(row[0]), row[1], float(row[2]))

    def drop_token(self, token: str) -> None:
        self.conn.execute("DELETE FROM tokens WHERE token=?", (token,))

    # Areas --------------------------------------------------------------------------
    def area_known(self, area: str) -> bool:
        return self.conn.execute("SELECT 1 FROM areas WHERE area=?", (area,)).fetchone() is not None

    def add_area(self, area: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO areas (area) VALUES (?)", (area,))


class Store:
    """The database file; hands out one connection per thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        conn = self._conn()
        conn.executescript(_SCHEMA)
        for probe in _PROBES:  # a database of something else fails here, not on a request
            try:
                conn.execute(probe).fetchall()
            except sqlite3.OperationalError as exc:
                raise sqlite3.DatabaseError(f"not a database of the reference server ({exc})") from None

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def read(self) -> Iterator[Txn]:
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            yield Txn(conn)
        finally:
            conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[Txn]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield Txn(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def trial(self) -> Iterator[Txn]:
        """A write transaction that is always rolled back: checks a write without making it."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield Txn(conn)
        finally:
            conn.execute("ROLLBACK")

    def close(self) -> None:
        """Close every connection this store opened (tests, shutdown)."""
        with self._lock:
            for conn in self._all:
                with suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._local = threading.local()
