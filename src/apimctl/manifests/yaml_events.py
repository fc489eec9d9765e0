"""YAML from libyaml's event stream, with a source position for every key and list item.

The reader of :mod:`apimctl.manifests.loader`: it builds plain Python values from events
(``CSafeLoader`` when available), catches duplicate keys, bounds nesting depth, alias
expansion and the number of entries (a "billion laughs" document is refused, deep nesting
never reaches a C recursion), keeps timestamps as strings and substitutes ``${VAR}``
references where the string was written (one event's value: :mod:`~apimctl.manifests.yaml_values`).

Positions inside top-level items are recorded in full only when asked (``every_position``):
otherwise the reader keeps the item's own and those of the mappings in its lists, and each
item's :class:`~apimctl.manifests.documents.Positions` reads the file again (``Reread``) when
a problem needs another. A duplicate key, whose message names the first one's line, makes
the reader start over with every position (:class:`Relocate`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, MutableMapping
from sys import intern
from typing import Any

import yaml

from apimctl.manifests.documents import (
    LIST_KINDS,
    MAX_DEPTH,
    MAX_ENTRIES,
    TOP_LEVEL_KEYS,
    Document,
    Item,
    Positions,
    Reread,
    reread_positions,
)
from apimctl.manifests.model import JsonPath, Position, Problems, format_path
from apimctl.manifests.variables import substitute
from apimctl.manifests.yaml_values import (
    ALIAS,
    BOOL,
    BOOLS,
    FLOAT,
    INT,
    MAP,
    MAP_END,
    MAP_START,
    RESOLVED,
    SCALAR,
    SEQ,
    SEQ_END,
    SEQ_START,
    SLOW,
    STR,
    Anchor,
    build,
    merge,
    offset_position,
    quick,
    replay,
    resolve,
)

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Abort(Exception):
    """The rest of the file cannot be read; the problem has been recorded."""


class Relocate(Exception):
    """A problem needs positions the reader did not record: read the file with every one."""


class EventReader:
    """Builds values from libyaml events (iteratively bounded: depth and alias expansion)."""

    def __init__(self, file: str, text: str, env: Mapping[str, str], problems: Problems, *,
                 every_position: bool = False, source: Callable[[], str | None] | None = None) -> None:
        """``source``: the text again, for positions looked up later (see :class:`Reread`);
        by default ``text`` is kept for that."""
        self.file = file
        self.env = env
        self.problems = problems
        self.loader = _Loader(text)
        # inside items: every position, or the items' own and their lists' mappings (``reread``
        # gives the rest); outside items (top-level keys, settings) always every one
        self.every_position = every_position
        self.every = True
        self.reread = None if every_position else Reread(
            file, source or functools.partial(str, text), env, _every_position)
        self.budget = max(100_000, len(text))  # nodes that aliases may add
        self.nodes = 0
        self.entries = 0  # list items and mapping keys read so far
        self.anchors: dict[str, Anchor] = {}
        self.prefix: JsonPath = ()
        self.counters: dict[str, int] = {}
        self.item: Item | None = None  # the top-level object being read

    def dispose(self) -> None:
        self.loader.dispose()

    def pos(self, mark: Any) -> Position:
        return Position(self.file, mark.line + 1, mark.column + 1)

    def error(self, where: Position, rel: JsonPath, message: str) -> None:
        self.problems.error(where, format_path(self.prefix + rel), message)

    def next(self) -> Any:
        return self.loader.get_event()

    # --- documents ------------------------------------------------------------------------

    def documents(self) -> list[Document]:
        docs: list[Document] = []
        self.next()  # StreamStart
        while not isinstance(self.loader.peek_event(), yaml.StreamEndEvent):
            start = self.next()  # DocumentStart
            self.anchors = {}
            doc = self.document(self.pos(start.start_mark))
            self.next()  # DocumentEnd
            if doc is not None:
                docs.append(doc)
        return docs

    def document(self, where: Position) -> Document | None:
        ev = self.next()
        if isinstance(ev, yaml.ScalarEvent) and ev.tag is None and ev.value == "" and ev.implicit[0]:
            return None  # an empty document
        if not isinstance(ev, yaml.MappingStartEvent):
            found = "a list" if isinstance(ev, yaml.SequenceStartEvent) else "a single value"
            self.error(self.pos(ev.start_mark), (), "a manifest document must be a mapping of top-level "
                       f"keys ({', '.join(TOP_LEVEL_KEYS)}), not {found}")
            self.skip(ev)
            return None
        doc = Document(self.file, self.pos(ev.start_mark), {})
        seen: dict[str, Position] = {}
        while not isinstance(self.loader.peek_event(), yaml.MappingEndEvent):
            key = self.key(seen, (), doc.positions)
            if key is None:
                continue
            nxt = self.loader.peek_event()
            if key in LIST_KINDS and isinstance(nxt, yaml.SequenceStartEvent) and nxt.tag in (None, "!", SEQ):
                doc.root[key] = self.items(key, doc)
            else:
                doc.root[key] = self.value(self.next(), (key,), doc.positions, doc.refs, 1)
        self.next()  # MappingEnd
        return doc

    def items(self, kind: str, doc: Document) -> list[Any]:
        self.next()  # SequenceStart
        values: list[Any] = []
        items = doc.items.setdefault(kind, [])
        while not isinstance(self.loader.peek_event(), yaml.SequenceEndEvent):
            ev = self.next()
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.too_many(ev, (kind, self.counters.get(kind, 0)))
            index = self.counters.get(kind, 0)
            self.counters[kind] = index + 1
            item = Item(kind, self.file, index, None, self.positions(kind, index))
            item.positions[()] = self.pos(ev.start_mark)
            self.prefix, self.item, self.every = (kind, index), item, self.every_position
            item.value = self.value(ev, (), item.positions, item.refs, 2)
            self.prefix, self.item, self.every = (), None, True
            items.append(item)
            values.append(item.value)
        self.next()  # SequenceEnd
        return values

    def positions(self, kind: str, index: int) -> Positions:
        reread = self.reread
        if reread is None:
            return Positions()
        return Positions(functools.partial(reread_positions, reread, kind, index))  # pickles

    # --- nodes -----------------------------------------------------------------------------
    # The loops below run once per YAML node of every file: they compare event types with
    # ``is``, read the common scalars with :func:`quick` and build a node's path only when
    # it is needed (a container, a position, a problem, a reference).

    def value(self, ev: Any, rel: JsonPath, positions: MutableMapping[JsonPath, Position],
              refs: dict[JsonPath, str], depth: int) -> Any:
        kind = type(ev)
        if kind is ALIAS:
            return self.alias(ev, rel, positions, refs)
        if depth > MAX_DEPTH:
            self.error(self.pos(ev.start_mark), rel, f"nested more than {MAX_DEPTH} levels deep")
            self.skip(ev)
            return None
        if ev.anchor:
            return self.anchored(ev, rel, positions, refs, depth)
        if kind is SCALAR:
            return self.scalar(ev, rel, refs)
        if kind is SEQ_START:
            return self.sequence(ev, rel, positions, refs, depth)
        return self.mapping(ev, rel, positions, refs, depth)

    def anchored(self, ev: Any, rel: JsonPath, positions: MutableMapping[JsonPath, Position],
                 refs: dict[JsonPath, str], depth: int) -> Any:
        """Build an anchored node on its own tables, so an alias can replay them."""
        anchor, saved_prefix = ev.anchor, self.prefix
        sub_pos: dict[JsonPath, Position] = {}
        sub_refs: dict[JsonPath, str] = {}
        self.prefix = self.prefix + rel
        ev.anchor = None
        try:
            value = self.value(ev, (), sub_pos, sub_refs, depth)
        finally:
            self.prefix = saved_prefix
        self.anchors[anchor] = Anchor(value, sub_pos, sub_refs, len(sub_pos) + 1)
        replay(self.anchors[anchor], rel, positions, refs)
        return value

    def alias(self, ev: Any, rel: JsonPath, positions: MutableMapping[JsonPath, Position],
              refs: dict[JsonPath, str]) -> Any:
        found = self.anchors.get(ev.anchor)
        if found is None:
            self.error(self.pos(ev.start_mark), rel, f"undefined YAML alias *{ev.anchor}")
            return None
        self.nodes += found.nodes
        if self.nodes > self.budget:
            self.error(self.pos(ev.start_mark), rel, f"YAML aliases expand to more than {self.budget} "
                       "nodes; refusing to expand them")
            raise Abort
        replay(found, rel, positions, refs)
        return copy.deepcopy(found.value)

    def skip(self, ev: Any) -> None:
        """Consume the events of a node that is not built."""
        depth = 1 if type(ev) in (SEQ_START, MAP_START) else 0
        while depth:
            kind = type(self.next())
            if kind is SEQ_START or kind is MAP_START:
                depth += 1
            elif kind is SEQ_END or kind is MAP_END:
                depth -= 1

    def sequence(self, ev: Any, rel: JsonPath, positions: MutableMapping[JsonPath, Position],
                 refs: dict[JsonPath, str], depth: int) -> list[Any]:
        if ev.tag is not None and ev.tag != "!" and ev.tag != SEQ:
            self.error(self.pos(ev.start_mark), rel, f"unsupported YAML tag {ev.tag}")
        get, file, every = self.loader.get_event, self.file, self.every
        out: list[Any] = []
        while True:
            item = get()
            kind = type(item)
            if kind is SEQ_END:
                return out
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.too_many(item, (*rel, len(out)))
            if kind is SCALAR and not item.anchor:
                value = quick(item)
                if value is not SLOW and not every:
                    out.append(value)
                    continue
                path = (*rel, len(out))
                if every:
                    mark = item.start_mark
                    positions[path] = Position(file, mark.line + 1, mark.column + 1)
                out.append(value if value is not SLOW else self.scalar(item, path, refs))
                continue
            path = (*rel, len(out))
            if every or kind is MAP_START:  # a mapping in a list: an object plan may locate
                mark = item.start_mark
                positions[path] = Position(file, mark.line + 1, mark.column + 1)
            out.append(self.value(item, path, positions, refs, depth + 1))

    def mapping(self, ev: Any, rel: JsonPath, positions: MutableMapping[JsonPath, Position],
                refs: dict[JsonPath, str], depth: int) -> dict[str, Any]:
        if ev.tag is not None and ev.tag != "!" and ev.tag != MAP:
            self.error(self.pos(ev.start_mark), rel, f"unsupported YAML tag {ev.tag}")
        get, file, every = self.loader.get_event, self.file, self.every
        out: dict[str, Any] = {}
        merges: list[tuple[Any, dict[JsonPath, Position], dict[JsonPath, str]]] = []
        while True:
            kev = get()
            kind = type(kev)
            if kind is MAP_END:
                break
            if kind is not SCALAR:
                self.bad_key(kev, rel)
                continue
            key = intern(kev.value)  # one copy of each key
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                self.too_many(kev, (*rel, key))
            if key == "<<" and kev.tag is None and kev.implicit[0]:
                sub_pos: dict[JsonPath, Position] = {}
                sub_refs: dict[JsonPath, str] = {}
                saved_prefix, self.prefix = self.prefix, self.prefix + rel  # merged keys land at rel
                try:
                    merged = self.value(get(), (), sub_pos, sub_refs, depth + 1)
                finally:
                    self.prefix = saved_prefix
                merges.append((merged, sub_pos, sub_refs))
                continue
            if key in out:
                if not every:
                    raise Relocate  # the message names the first one's line
                mark = kev.start_mark
                first = positions[(*rel, key)]
                self.error(Position(file, mark.line + 1, mark.column + 1), (*rel, key),
                           f"duplicate key '{key}' (first written at line {first.line})")
                self.skip(get())
                continue
            if every:
                mark = kev.start_mark
                positions[(*rel, key)] = Position(file, mark.line + 1, mark.column + 1)
            vev = get()
            if type(vev) is SCALAR and not vev.anchor:
                value = quick(vev)
                out[key] = value if value is not SLOW else self.scalar(vev, (*rel, key), refs)
            else:
                out[key] = self.value(vev, (*rel, key), positions, refs, depth + 1)
        for merged, sub_pos, sub_refs in merges:
            if not merge(out, merged, sub_pos, sub_refs, rel, positions, refs):
                self.error(self.pos(kev.start_mark), rel, "a merge key (<<) needs a mapping or a list of mappings")
        return out

    def too_many(self, ev: Any, rel: JsonPath) -> None:
        self.error(self.pos(ev.start_mark), rel, f"more than {MAX_ENTRIES:,} list items and mapping keys "
                   "in one file; split it into several files")
        raise Abort

    def bad_key(self, ev: Any, rel: JsonPath) -> None:
        self.error(self.pos(ev.start_mark), rel, "mapping keys must be plain text, not a list, mapping or alias")
        self.skip(ev)
        self.skip(self.next())

    def key(self, seen: dict[str, Position], rel: JsonPath, positions: dict[JsonPath, Position]) -> str | None:
        """Read one top-level key; ``None`` (value skipped) when it is unusable or a duplicate."""
        ev = self.next()
        if type(ev) is not SCALAR:
            self.bad_key(ev, rel)
            return None
        where = self.pos(ev.start_mark)
        key = ev.value
        if key in seen:
            first = seen[key]
            self.error(where, (*rel, key), f"duplicate key '{key}' (first written at line {first.line})")
            self.skip(self.next())
            return None
        seen[key] = where
        positions[(*rel, key)] = where
        return str(key)

    def scalar(self, ev: Any, rel: JsonPath, refs: dict[JsonPath, str]) -> Any:
        tag, value = ev.tag, ev.value
        if tag is None or tag == "!":
            tag = (RESOLVED.get(value) or resolve(value)) if ev.implicit[0] else STR
        if tag == STR:
            return self.substituted(ev, rel, refs) if "$" in value else value
        if tag == INT and value.isdigit() and (value[0] != "0" or value == "0"):
            return int(value)
        if tag == BOOL:
            return BOOLS[value.lower()]
        return self.construct(tag, ev, rel)

    def construct(self, tag: str, ev: Any, rel: JsonPath) -> Any:
        value, problem = build(tag, ev.value)
        if problem is not None:
            self.error(self.pos(ev.start_mark), rel, problem)
        return value

    def substituted(self, ev: Any, rel: JsonPath, refs: dict[JsonPath, str]) -> Any:
        result = substitute(ev.value, self.env)
        if result.uses_variables:
            refs[rel] = ev.value
        for offset, message in result.problems:
            self.error(offset_position(self.pos(ev.start_mark), ev, offset), rel, message)
        for offset, message in result.warnings:
            self.problems.warning(offset_position(self.pos(ev.start_mark), ev, offset), format_path(self.prefix + rel), message)
        if result.whole and not ev.style and not result.problems:  # plain style: None or ''
            # an unquoted ``${PORT}`` takes the type its value has in YAML (8080 -> integer)
            tag = resolve(result.text)  # an empty value stays "", it does not become null
            if tag in (INT, FLOAT, BOOL):
                if self.item is not None:
                    self.item.typed[(*self.prefix, *rel)[2:]] = result.text
                return self.construct(tag, yaml.ScalarEvent(None, tag, (True, False), result.text,
                                                            ev.start_mark, ev.end_mark), rel)
        return result.text


def _every_position(file: str, text: str, env: Mapping[str, str]
                    ) -> dict[tuple[str, int], dict[JsonPath, Position]]:
    """Every position of each item of a file read again (:class:`Reread`), by the item's kind
    and index."""
    tables: dict[tuple[str, int], dict[JsonPath, Position]] = {}
    reader = EventReader(file, text, env, Problems(), every_position=True)
    try:
        for doc in reader.documents():
            for items in doc.items.values():
                tables.update({(it.kind, it.index): it.positions.complete() for it in items})
    except (Abort, yaml.YAMLError):  # read once already: never expected
        pass
    finally:
        reader.dispose()
    return tables
