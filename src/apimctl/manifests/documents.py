"""The values manifest files are read into: files, documents, top-level items, their position
tables; the bounds.

Built by :mod:`apimctl.manifests.yaml_events` (one per file), read by the merge, overlay, schema
and pipeline stages of :mod:`apimctl.manifests`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from apimctl import kinds
from apimctl.manifests.model import JsonPath, Position

LIST_KINDS = tuple(k.manifest_key for k in sorted(kinds.TOP_LEVEL, key=lambda k: k.export.manifest_rank))
TOP_LEVEL_KEYS = (*LIST_KINDS, "settings")
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 64
# Entries (list items and mapping keys) one file may hold. A 20 MB file of real manifests has
# under a million; the bound keeps a file of tiny entries (``[r,r,r,...]``) from taking
# gigabytes of memory and minutes of checking.
MAX_ENTRIES = 2_000_000
MANIFEST_SUFFIXES = (".yaml", ".yml")
# call-test files (``apimctl test``) are YAML too, and never manifests: a directory's scan
# leaves them out, and one named as a manifest is refused
CALL_TEST_SUFFIXES = (".test.yaml", ".test.yml")
_T = TypeVar("_T")


class NotUtf8(ValueError):
    """Bytes that are not UTF-8 text: where the first bad byte stands (1-based) and its value."""

    def __init__(self, line: int, column: int, byte: int) -> None:
        super().__init__(f"not UTF-8 text at {line}:{column} (byte 0x{byte:02x})")
        self.line, self.column, self.byte = line, column, byte


def utf8_text(data: bytes) -> str:
    """``data`` as UTF-8 text, a byte order mark dropped; :class:`NotUtf8` locates a bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotUtf8(line, column, data[exc.start]) from None


def is_manifest_name(name: str) -> bool:
    """Whether a directory entry named ``name`` is read as a manifest: ``*.yaml``/``*.yml``,
    not hidden, not a call-test file."""
    return name.endswith(MANIFEST_SUFFIXES) and not name.endswith(CALL_TEST_SUFFIXES) and not name.startswith(".")


class _Lookup:
    """Lookups of a position table by path: ``get`` with an optional default, ``[]`` and
    ``in``, all through ``_find``."""

    __slots__ = ()

    def _find(self, path: JsonPath) -> Position | None:
        raise NotImplementedError

    @overload
    def get(self, path: JsonPath, /) -> Position | None: ...

    @overload
    def get(self, path: JsonPath, default: Position, /) -> Position: ...

    @overload
    def get(self, path: JsonPath, default: _T, /) -> Position | _T: ...

    def get(self, path: JsonPath, default: Any = None) -> Any:
        found = self._find(path)
        return default if found is None else found

    def __getitem__(self, path: JsonPath) -> Position:
        found = self.get(path)
        if found is None:
            raise KeyError(path)
        return found

    def __contains__(self, path: object) -> bool:
        return isinstance(path, tuple) and self.get(path) is not None


class Positions(_Lookup, MutableMapping[JsonPath, Position]):
    """Where each node of an item was written, by path relative to the item.

    Positions are needed only to report a problem or locate an object, and a table of every
    node would cost more than the values themselves, so the reader records the item and the
    mappings of its lists (the objects ``plan`` locates) and ``load`` reads the file again for
    the rest, on the first lookup of a path not recorded. Entries set since (an overlay's)
    win over those of ``load``.
    """

    __slots__ = ("_load", "_table")

    def __init__(self, load: Callable[[], dict[JsonPath, Position]] | None = None) -> None:
        self._table: dict[JsonPath, Position] = {}
        self._load = load  # None: the table is complete

    def complete(self) -> dict[JsonPath, Position]:
        """Every position of the item (read again from the file, once)."""
        if self._load is not None:
            load, self._load = self._load, None
            table = load()
            table.update(self._table)
            self._table = table
        return self._table

    def _find(self, path: JsonPath) -> Position | None:
        found = self._table.get(path)
        if found is None and self._load is not None:
            found = self.complete().get(path)
        return found

    def __setitem__(self, path: JsonPath, where: Position) -> None:
        self._table[path] = where

    def __delitem__(self, path: JsonPath) -> None:
        del self.complete()[path]

    def __iter__(self) -> Iterator[JsonPath]:
        return iter(self.complete())

    def __len__(self) -> int:
        return len(self.complete())


@dataclass
class Item:
    """One object of a top-level list, with positions and references relative to itself."""

    kind: str
    file: str
    index: int  # index in its file's list of this kind (over all documents of the file)
    value: Any
    positions: Positions = field(default_factory=Positions)
    refs: dict[JsonPath, str] = field(default_factory=dict)
    # an unquoted ``${VAR}`` that took its YAML type (8080 -> integer): path -> substituted text,
    # so a field the schema types as string gets the text back (``version: ${VERSION}``)
    typed: dict[JsonPath, str] = field(default_factory=dict)
    # paths whose value an overlay wrote -> the path as written in that overlay file
    shown: dict[JsonPath, JsonPath] = field(default_factory=dict)

    def display(self, rel: JsonPath) -> JsonPath:
        """The full path of ``rel`` as the user wrote it in the file its position points into:
        the index in the item's own file, or the overlay file's indices for overlaid values."""
        if self.shown:
            placed = rel
            while placed and placed not in self.positions:
                placed = placed[:-1]
            over = self.shown.get(placed)
            if over is not None:
                return (*over, *rel[len(placed):])
        return (self.kind, self.index, *rel)


class Reread:
    """A file read again with every position, for the items whose tables a lookup completes
    (:class:`Positions`).

    ``source`` gives the text again (from disk: the text is not kept in memory meanwhile, a
    large part of it at 50,000 endpoints), or ``None`` when the file changed since it was read
    (then the positions not recorded stay unknown, and messages name the item's); ``read``
    reads a text with every position, by item (a module-level function: an item's positions
    pickle with it)."""

    def __init__(self, file: str, source: Callable[[], str | None], env: Mapping[str, str],
                 read: Callable[[str, str, Mapping[str, str]], dict[tuple[str, int], dict[JsonPath, Position]]],
                 ) -> None:
        self.file, self.source, self.env, self.read = file, source, env, read
        self.tables: dict[tuple[str, int], dict[JsonPath, Position]] | None = None

    def positions(self, kind: str, index: int) -> dict[JsonPath, Position]:
        """Every position of the ``index``-th item of ``kind`` in the file."""
        if self.tables is None:
            self.tables = {}
            text = self.source()
            if text is None:
                return {}
            self.tables = self.read(self.file, text, self.env)
        return self.tables.pop((kind, index), {})


def reread_positions(reread: Reread, kind: str, index: int) -> dict[JsonPath, Position]:
    """:meth:`Reread.positions` (a partial of this pickles)."""
    return reread.positions(kind, index)


class MergedPositions(_Lookup, Mapping[JsonPath, Position]):
    """Positions by path in the merged document (``services[3].endpoints[1]``): a top-level
    object's from its item's table, anything else (the top-level keys, ``settings``) from
    ``other``. A view: nothing is copied, an item's table completes itself when asked."""

    def __init__(self, items: Mapping[str, Sequence[Item]], other: dict[JsonPath, Position]) -> None:
        self.by_kind = items
        self.other = other

    def _find(self, path: JsonPath) -> Position | None:
        if len(path) >= 2:
            items, index = self.by_kind.get(str(path[0])), path[1]
            if items is not None and isinstance(index, int) and 0 <= index < len(items):
                return items[index].positions.get(path[2:])
        return self.other.get(path)

    def __iter__(self) -> Iterator[JsonPath]:
        yield from self.other
        for kind, items in self.by_kind.items():
            for index, item in enumerate(items):
                for rel in item.positions:
                    yield (kind, index, *rel)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class Document:
    """One YAML document of a manifest file."""

    file: str
    position: Position
    root: dict[str, Any]  # every top-level key as written, for the shape check
    positions: dict[JsonPath, Position] = field(default_factory=dict)  # outside items
    refs: dict[JsonPath, str] = field(default_factory=dict)  # outside items
    items: dict[str, list[Item]] = field(default_factory=dict)


@dataclass
class SourceFile:
    """A manifest file: the name shown to the user and its path on disk."""

    display: str
    path: str
