"""Lists of top-level documents answered from the store's indexes.

:func:`apimctl.server.reads.read` hands a list of top-level documents (``/services``,
``/roles`` ...) here first. The answer is the one :func:`apimctl.server.query.select` gives on
the whole area, but the store does the work:

- without ``filter``, ``search`` or ``sort``, the page is read in creation order through the
  index ``docs_order`` (``LIMIT``/``OFFSET``): its cost depends neither on the size of the
  area nor on the offset;
- filters and searches on the extracted fields (:data:`apimctl.server.store.EXTRACTED`:
  ``name``, ``domain``, ``id``) become SQL on their columns, read from the index
  ``docs_fields`` alone; each other filter is "not known" (SQL ``NULL``), so SQLite's
  three-valued logic keeps exactly the documents that match or might match, and only those
  that might are decoded and checked by :func:`~apimctl.server.query.select` itself;
- a sort on extracted fields takes the values from the columns; a sort on other fields
  decodes, of the documents kept, only the top-level fields it names.

Then only the documents of the page are read, decoded, projected and encoded, one at a time.
Lists of documents mounted under another (``/members/{id}/applications``) and resources read
through a view take the general path (:func:`apimctl.server.reads._list`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from apimctl.server.fields import Resource
from apimctl.server.query import Filter, ListQuery, select
from apimctl.server.store import EXTRACTED, Txn

Hooks = dict[str, Callable[[dict[str, Any]], Any]]

_decode = msgspec.json.decode
_top_level = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ROWID = "\x00rowid"  # key of the rowid in the light objects handed to select (never a field)


def _term(res: Resource, flt: Filter, exact: bool) -> tuple[str, list[str]]:
    """SQL for one filter on the extracted columns (NULL where it is not known there)."""
    f = res.by_name.get(flt.path[0]) if len(flt.path) == 1 else None
    if f is None or f.name not in EXTRACTED or f.computed or f.nested or f.write_only \
            or any("\x00" in alt for alt in flt.alternatives):
        return "NULL", []
    column = f"CAST(x_{f.name} AS TEXT)"  # query._text of a string or an integer
    if exact:
        return f"{column} IN ({','.join('?' * len(flt.alternatives))})", list(flt.alternatives)
    return "(" + " OR ".join(f"instr({column}, ?) > 0" for _ in flt.alternatives) + ")", list(flt.alternatives)


def condition(res: Resource, q: ListQuery, exact: bool, or_filters: bool) -> tuple[str, list[str]]:
    """The SQL condition of ``q``'s filters and searches ("" when nothing is filtered),
    combined as :func:`~apimctl.server.query.select` combines them."""
    if not q.filters and not q.searches:
        return "", []
    filters = [_term(res, f, True if or_filters else exact) for f in q.filters]
    searches = [_term(res, s, False) for s in q.searches]
    args = [a for _, more in filters + searches for a in more]
    if or_filters:
        by_filter = " OR ".join(t for t, _ in filters) or "0"
        by_search = " AND ".join(t for t, _ in searches) or "0"
        return f"({by_filter}) OR ({by_search})", args
    return " AND ".join(t for t, _ in filters + searches), args


def page(txn: Txn, area: str, kind: str, res: Resource, q: ListQuery, *, exact: bool, or_filters: bool,
         hooks: Hooks) -> tuple[Iterator[bytes], int]:
    """The stored bodies of one page (undecoded) and the total after filtering."""
    if not q.filters and not q.searches and not q.sort:
        return txn.page(area, kind, q.offset, q.limit), txn.count(area, kind)
    where, args = condition(res, q, exact, or_filters)
    rows = txn.fields(area, kind, where, tuple(args))
    kept: list[dict[str, Any]] = []
    undecided = [row[0] for row in rows if row[1] is None]
    decided_in = _check(txn, undecided, res, q, exact, or_filters, hooks) if undecided else set()
    sort_names = list(dict.fromkeys(name for name, _ in q.sort))
    for row in rows:
        if row[1] is None and row[0] not in decided_in:
            continue
        light: dict[str, Any] = {_ROWID: row[0]}
        for name, value in zip(EXTRACTED, row[2:], strict=True):
            if name in sort_names and value is not None:
                light[name] = value
        kept.append(light)
    missing = [o for o in kept if any(n not in o for n in sort_names)]
    if missing:
        _fill(txn, missing, sort_names)
    chosen, total = select(kept, ListQuery(sort=q.sort, limit=q.limit, offset=q.offset), res)
    return txn.bodies([o[_ROWID] for o in chosen]), total


def _check(txn: Txn, rowids: list[int], res: Resource, q: ListQuery, exact: bool, or_filters: bool,
           hooks: Hooks) -> set[int]:
    """Which of these documents the filters keep, decided on the decoded documents."""
    only = ListQuery(filters=q.filters, searches=q.searches, limit=1, offset=0)
    return {rowid for rowid, raw in zip(rowids, txn.bodies(rowids), strict=True)
            if select([_decode(raw)], only, res, exact=exact, or_filters=or_filters, hooks=hooks)[1]}


def _fill(txn: Txn, objs: list[dict[str, Any]], names: list[str]) -> None:
    """Add the sort fields the columns do not know, decoding only those fields."""
    for obj, raw in zip(objs, txn.bodies([o[_ROWID] for o in objs]), strict=True):
        top = _top_level.decode(raw)
        for name in names:
            if name not in obj:
                value = top.get(name)
                obj[name] = None if value is None else _decode(value)
