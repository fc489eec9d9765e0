"""SQLite document store of the reference server.

One JSON document per top-level object (a service with its whole tree, a package with its
plans, a role, a domain, a maintenance event, a member, an application, a package key ...)
keyed by ``(area, kind, id)``, an index table for uniqueness constraints, and the issued
access tokens. Lists come in creation order (``rowid``): the index ``docs_order`` on
``(area, kind)`` (which SQLite keeps in rowid order within each key) serves that order, so a
page costs the same at any offset and in an area of any size. The top-level fields of
:data:`EXTRACTED` are copied out of each document into columns of their own (``x_<field>``,
see :func:`extracted`), covered by the index ``docs_fields``, so that filters and sorts on
them are answered without decoding the documents (:mod:`apimctl.server.listing`). A database
of an older version gets the columns (filled from its documents) and the indexes when it is
opened. The request engine (:mod:`apimctl.server.engine`) opens exactly one
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

# top-level fields with a column of their own (``x_<field>``)
EXTRACTED = ("name", "domain", "id")
_COLUMNS = ", ".join(f"x_{f}" for f in EXTRACTED)
_INDEXES = f"""
CREATE INDEX IF NOT EXISTS docs_order ON docs (area, kind);
CREATE INDEX IF NOT EXISTS docs_fields ON docs (area, kind, {_COLUMNS});
"""
_INT64 = range(-(2**63), 2**63)

# one page in creation order (the index docs_order: no sort of the area)
PAGE_SQL = "SELECT body FROM docs WHERE area=? AND kind=? ORDER BY rowid LIMIT ? OFFSET ?"


def fields_sql(where: str = "") -> str:
    """``(rowid, decided, *x_ columns)`` of the documents of a kind that ``where`` may keep
    (:meth:`Txn.fields`); read from the index docs_fields alone."""
    cond = f"({where})" if where else "1"
    return (f"SELECT rowid, {cond}, {_COLUMNS} FROM docs INDEXED BY docs_fields "
            f"WHERE area=? AND kind=? AND coalesce({cond}, 1)")

_PROBES = (
    "SELECT area, kind, id, body FROM docs LIMIT 0",
    "SELECT area, scope, value, owner, sticky FROM uniq LIMIT 0",
    "SELECT token, kind, area, user, expires FROM tokens LIMIT 0",
    "SELECT area FROM areas LIMIT 0",
)

_dumps = msgspec.json.encode
_loads = msgspec.json.decode
_top_level = msgspec.json.Decoder(dict[str, msgspec.Raw])  # top-level fields, values undecoded


def extracted(doc: dict[str, Any]) -> tuple[str | int | None, ...]:
    """The values of the :data:`EXTRACTED` fields of a document, as stored in its columns.

    A string or a (64-bit) integer is kept as it is (the columns have no type affinity, so
    SQLite answers the same Python value); anything else (missing, null, booleans, numbers
    with a fraction, lists, objects) is NULL: "not known here", which the readers settle
    by decoding the document.
    """
    out: list[str | int | None] = []
    for name in EXTRACTED:
        value = doc.get(name)
        keep = isinstance(value, str) or (type(value) is int and value in _INT64)
        out.append(value if keep else None)
    return tuple(out)


def _current(conn: sqlite3.Connection) -> bool:
    """Whether the database has the extracted columns and the indexes of this version."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(docs)")}
    indexes = {str(row[1]) for row in conn.execute("PRAGMA index_list(docs)")}
    return {f"x_{f}" for f in EXTRACTED} <= columns and {"docs_order", "docs_fields"} <= indexes


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the extracted columns (filled from the documents) and the indexes, if missing."""
    if _current(conn):
        return  # no write transaction when there is nothing to do
    conn.execute("BEGIN IMMEDIATE")
    try:
        columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(docs)")}
        missing = [f"x_{f}" for f in EXTRACTED if f"x_{f}" not in columns]
        for column in missing:
            conn.execute(f"ALTER TABLE docs ADD COLUMN {column}")  # no type: no affinity
        if missing:
            last = -1
            while True:  # in batches by rowid: never the whole database in memory
                rows = conn.execute("SELECT rowid, body FROM docs WHERE rowid > ? ORDER BY rowid LIMIT 100",
                                    (last,)).fetchall()
                if not rows:
                    break
                for rowid, body in rows:
                    top = {k: _loads(v) for k, v in _top_level.decode(body).items() if k in EXTRACTED}
                    conn.execute(f"UPDATE docs SET ({_COLUMNS}) = ({','.join('?' * len(EXTRACTED))}) "
                                 "WHERE rowid=?", (*extracted(top), rowid))
                last = rows[-1][0]
                del rows
        for statement in _INDEXES.split(";"):
            if statement.strip():
                conn.execute(statement)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


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
        cur = self.conn.execute(PAGE_SQL, (area, kind, limit, offset))
        for row in cur:
            yield row[0] if isinstance(row[0], bytes) else str(row[0]).encode()

    def fields(self, area: str, kind: str, where: str = "", args: tuple[Any, ...] = ()
               ) -> list[tuple[Any, ...]]:
        """``(rowid, decided, *extracted values)`` of the documents of a kind, in creation order,
        read from the index ``docs_fields`` alone (no document is read).

        ``where`` is an SQL condition on the ``x_`` columns in three-valued logic: rows where it
        is false are left out; ``decided`` is 1 where it is true and None where it is NULL
        (not known from the columns: the caller decides by decoding the document).
        """
        rows = self.conn.execute(fields_sql(where), (*args, area, kind, *args)).fetchall()
        rows.sort(key=lambda row: row[0])
        return rows

    def bodies(self, rowids: list[int]) -> Iterator[bytes]:
        """The stored bodies of these documents (by rowid), undecoded, in this order."""
        for rowid in rowids:
            row = self.conn.execute("SELECT body FROM docs WHERE rowid=?", (rowid,)).fetchone()
            if row is not None:
                yield row[0] if isinstance(row[0], bytes) else str(row[0]).encode()

    def count(self, area: str, kind: str) -> int:
        row = self.conn.execute("SELECT COUNT(*) FROM docs WHERE area=? AND kind=?", (area, kind)).fetchone()
        return int(row[0])

    def put(self, area: str, kind: str, id_: str, doc: dict[str, Any]) -> None:
        body = _dumps(doc)
        values = extracted(doc)
        marks = ",".join("?" * len(values))
        cur = self.conn.execute(
            f"UPDATE docs SET body=?, ({_COLUMNS}) = ({marks}) WHERE area=? AND kind=? AND id=?",
            (body, *values, area, kind, id_),
        )
        if cur.rowcount == 0:
            self.conn.execute(
                f"INSERT INTO docs (area, kind, id, body, {_COLUMNS}) VALUES (?, ?, ?, ?, {marks})",
                (area, kind, id_, body, *values),
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
        _migrate(conn)

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
