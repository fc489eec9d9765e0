"""Reading manifest files: file discovery, YAML with a position for every node, substitution.

Called by :mod:`apimctl.manifests.pipeline` for the base paths and for each ``--overlay``
directory. A symbolic link that leaves the folder holding it is refused unless the pipeline
allows it (:func:`apimctl.manifests.environment.outside_folder`). The YAML is read from libyaml's event stream (``CSafeLoader`` when available) and
built into plain Python values here, so that every key and list item gets its source
position, duplicate keys are caught, nesting depth, alias expansion and the number of entries
are bounded (a YAML "billion laughs" document is refused, deep nesting never reaches a C
recursion), and ``${VAR}`` references are substituted where the string was written.
Timestamps stay strings; files are UTF-8 (a UTF-16 file is named as such).

Each list under a top-level kind key (``services``, ``packages``, ...) is split into
:class:`Item` values with positions relative to the item, so merging files never rewrites
position tables. Those tables are completed on demand (:class:`~apimctl.manifests.documents.Positions`):
the reader records the items and the mappings in their lists, the rest is read again from the
file when a problem needs it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping, Sequence

import yaml

from apimctl.manifests.documents import (
    CALL_TEST_SUFFIXES,
    MAX_FILE_BYTES,
    Document,
    NotUtf8,
    SourceFile,
    is_manifest_name,
    utf8_text,
)
from apimctl.manifests.environment import outside_folder
from apimctl.manifests.model import Position, Problems
from apimctl.manifests.yaml_events import Abort, EventReader, Relocate


def discover(paths: Sequence[str], problems: Problems) -> list[SourceFile]:
    """Files named on the command line, and every ``*.yaml``/``*.yml`` directly in a directory.

    Subdirectories are not read, so per-environment overlays can live below the base. Call-test
    files (``*.test.yaml``) are never manifests: left out of a directory, refused when named.
    """
    found: list[SourceFile] = []
    seen: set[str] = set()
    for arg in paths:
        if _leaves_folder(arg, os.path.dirname(os.path.normpath(arg)) or ".", problems):
            continue
        if os.path.isdir(arg):
            candidates = _manifests_in(arg, problems)
            if not candidates:
                problems.error(Position(arg, 0, 0), "", _nothing_in(arg))
        elif os.path.isfile(arg) and arg.endswith(CALL_TEST_SUFFIXES):
            problems.error(Position(arg, 0, 0), "", "a call-test file, not a manifest: run it with apimctl test")
            candidates = []
        elif os.path.isfile(arg):
            candidates = [(SourceFile(arg, arg), os.path.realpath(arg))]
        elif os.path.exists(arg):
            problems.error(Position(arg, 0, 0), "", "not a regular file or directory")
            candidates = []
        else:
            problems.error(Position(arg, 0, 0), "", "no such file or directory")
            candidates = []
        for src, real in candidates:
            if real not in seen:
                seen.add(real)
                found.append(src)
    return found


def _nothing_in(folder: str) -> str:
    """Why a directory gave no manifest file."""
    try:
        with os.scandir(folder) as scan:
            call_tests = any(e.name.endswith(CALL_TEST_SUFFIXES) for e in scan)
    except OSError:
        call_tests = False
    if call_tests:
        return "no manifest files in this directory (its *.test.yaml files are call tests: apimctl test reads them)"
    return "no *.yaml or *.yml files in this directory"


def _manifests_in(folder: str, problems: Problems) -> list[tuple[SourceFile, str]]:
    """The manifest files directly in ``folder`` by name, each with its real path (the
    directory's real path and the name, unless the entry is a symbolic link)."""
    try:
        with os.scandir(folder) as scan:
            entries = sorted((e for e in scan if is_manifest_name(e.name) and _is_file(e)), key=lambda e: e.name)
    except OSError as exc:
        problems.error(Position(folder, 0, 0), "", f"cannot read directory: {exc.strerror}")
        return []
    real_folder = os.path.realpath(folder)
    out = []
    for entry in entries:
        path = os.path.join(folder, entry.name)
        if entry.is_symlink() and _leaves_folder(path, folder, problems):
            continue
        real = os.path.realpath(path) if entry.is_symlink() else os.path.join(real_folder, entry.name)
        out.append((SourceFile(os.path.normpath(path), path), real))
    return out


def _leaves_folder(path: str, folder: str, problems: Problems) -> bool:
    """Whether ``path`` is a symbolic link out of ``folder`` that is refused (said so)."""
    if not outside_folder(os.path.normpath(path), folder):
        return False
    problems.error(Position(os.path.normpath(path), 0, 0), "",
                   f"a symbolic link that leaves its folder (to {os.path.realpath(path)}): refused, "
                   "a manifest is read only from the repository (--allow-symlinks-outside reads it)")
    return True


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def read_file(src: SourceFile, env: Mapping[str, str], problems: Problems) -> list[Document] | None:
    """All documents of one file, or ``None`` when the file cannot be read as YAML."""
    text = _read_text(src, problems)
    if text is None:
        return None
    found = len(problems.items)
    try:
        return _read_yaml(src, text, env, problems, every_position=False)
    except Relocate:
        del problems.items[found:]  # the second reading finds them again
        return _read_yaml(src, text, env, problems, every_position=True)


def _read_yaml(src: SourceFile, text: str, env: Mapping[str, str], problems: Problems, *,
               every_position: bool) -> list[Document] | None:
    reader = EventReader(src.display, text, env, problems, every_position=every_position,
                         source=_again(src, len(text)))
    try:
        return reader.documents()
    except Abort:
        return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        detail = exc.problem or exc.context or "invalid YAML"
        where = Position(src.display, mark.line + 1, mark.column + 1) if mark else Position(src.display, 1, 1)
        opened = exc.context_mark  # where the unfinished construct began
        if exc.problem and exc.context and opened and (mark is None or opened.index != mark.index):
            detail += f" ({exc.context} at line {opened.line + 1}, column {opened.column + 1})"
        if mark and 0 <= mark.index < len(text) and text[mark.index] == "\t":
            detail += " (a tab: YAML is indented with spaces)"
        elif mark and _unquoted_reference_in_flow(text, mark.index):
            detail += " (inside [...] or {...}, quote a value that holds ${...})"
        problems.error(where, "", f"invalid YAML: {detail}")
        return None
    except yaml.YAMLError as exc:  # reader errors (control characters) carry an offset only
        offset = getattr(exc, "position", 0) or 0
        problems.error(_offset_position(src.display, text, offset), "", f"invalid YAML: {_reader_message(exc)}")
        return None
    finally:
        reader.dispose()


_PLAIN_REFERENCE = re.compile(r"[\[{,:]\s*\$\{")  # a ${ that starts a plain (unquoted) value


def _unquoted_reference_in_flow(text: str, index: int) -> bool:
    """Whether the lines up to the error hold a ``${`` after a ``[`` or ``{`` (YAML ends a plain
    value in a flow collection at ``{``, ``}`` or ``,``: ``{password: ${PW}}`` does not parse)."""
    start = text.rfind("\n", 0, max(0, text.rfind("\n", 0, index))) + 1
    window = text[start:index + 1]
    opener = max(window.find("{"), window.find("["))
    return opener >= 0 and _PLAIN_REFERENCE.search(window, opener) is not None


def _read_text(src: SourceFile, problems: Problems) -> str | None:
    where = Position(src.display, 0, 0)
    try:
        size = os.path.getsize(src.path)
        if size > MAX_FILE_BYTES:
            problems.error(where, "", f"file is {size / (1024 * 1024):.1f} MB, larger than the "
                           f"{MAX_FILE_BYTES // (1024 * 1024)} MB limit for one manifest file; split it")
            return None
        with open(src.path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        problems.error(where, "", f"cannot read file: {exc.strerror}")
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        problems.error(Position(src.display, 1, 1), "", "UTF-16 text (as some Windows editors and shells "
                       "write it); manifests must be UTF-8 encoded: save the file as UTF-8")
        return None
    try:
        return utf8_text(data)
    except NotUtf8 as exc:
        problems.error(Position(src.display, exc.line, exc.column), "",
                       f"not UTF-8 text (byte 0x{exc.byte:02x}); manifests must be UTF-8 encoded")
        return None


def _again(src: SourceFile, length: int) -> Callable[[], str | None]:
    """The file's text read again, for positions looked up after loading (the text is not
    kept meanwhile); ``None`` when it can no longer be read or its length changed since.
    A partial, so that documents read in the worker process pickle."""
    return functools.partial(_text_again, src, length)


def _text_again(src: SourceFile, length: int) -> str | None:
    found = _read_text(src, Problems())
    return found if found is not None and len(found) == length else None


def _offset_position(file: str, text: str, offset: int) -> Position:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return Position(file, line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _reader_message(exc: yaml.YAMLError) -> str:
    char = getattr(exc, "character", None)
    if isinstance(char, str):
        return f"control character #x{ord(char):04x} is not allowed (is this a binary file?)"
    if isinstance(char, int):
        return f"control character #x{char:04x} is not allowed (is this a binary file?)"
    return str(exc).splitlines()[0] if str(exc) else "unreadable input"
