"""Shell completion of option values that click cannot know: object addresses and kinds.

click completes command names, options, choices (formats, dialects, layouts) and paths by
itself (``apimctl completion bash|zsh|fish`` prints its script). The values here come from
the manifests named on the command line so far (``apimctl plan apimctl --target serv<TAB>``),
or, with none yet, from ``apimctl/`` or the current directory: every ``*.yaml``/``*.yml``
read as plain YAML, without validation or ``${VAR}`` substitution, so that completion never
fails on a manifest that is still being written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import yaml
from click.shell_completion import CompletionItem

from apimctl import kinds

_DEFAULT_DIRS = ("apimctl", ".")
_SUFFIXES = (".yaml", ".yml")
_MAX_FILES = 200


def _manifest_files(paths: Sequence[str]) -> Iterator[Path]:
    given = [Path(p) for p in paths] or [Path(d) for d in _DEFAULT_DIRS if Path(d).is_dir()][:1]
    count = 0
    for path in given:
        files = sorted(path.iterdir()) if path.is_dir() else [path]
        for file in files:
            if file.suffix in _SUFFIXES and file.is_file() and count < _MAX_FILES:
                count += 1
                yield file


def _documents(paths: Sequence[str]) -> Iterator[dict[str, Any]]:
    for file in _manifest_files(paths):
        try:
            for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
                if isinstance(doc, dict):
                    yield _named(doc)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue


def _named(doc: dict[str, Any]) -> dict[str, Any]:
    """Top-level objects written as their name alone (``domains: [example.com]``) as objects."""
    out = dict(doc)
    for kind in kinds.TOP_LEVEL:
        items = doc.get(kind.manifest_key)
        if isinstance(items, list):
            out[kind.manifest_key] = [{kind.identity: i} if isinstance(i, str) else i for i in items]
    return out


def addresses(paths: Sequence[str]) -> list[str]:
    """``kind:key`` of every object the manifests at ``paths`` declare, in file order."""
    from apimctl.planning.desired import desired_objects  # here: only completion needs it

    found: dict[str, None] = {}
    for doc in _documents(paths):
        try:
            objects = desired_objects(doc)
        except (TypeError, ValueError, AttributeError, KeyError):
            continue
        for listed in objects.values():
            for obj in listed:
                if obj.name:
                    found[f"{obj.kind.name}:{obj.key}"] = None
    return list(found)


def _paths(ctx: click.Context) -> list[str]:
    """The PATHs given so far. While an option still waits for its value, click's resilient
    parsing stops there and leaves the words it did not take in ``ctx.args``."""
    given = [str(p) for p in ctx.params.get("paths") or ()]
    return given or [a for a in ctx.args if not a.startswith("-") and Path(a).exists()]


def complete_address(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """``--target``: the addresses of the declared objects starting with ``incomplete``, or
    the kind names (``service:``) when no object matches."""
    found = [a for a in addresses(_paths(ctx)) if a.startswith(incomplete)]
    if found:
        return [CompletionItem(a) for a in found]
    return [CompletionItem(f"{k.name}:") for k in kinds.KINDS if k.name.startswith(incomplete)]


def complete_field_address(ctx: click.Context, param: click.Parameter,
                           incomplete: str) -> list[CompletionItem]:
    """``--ignore`` and ``--rotate`` (KIND:NAME:PATH): the object part, then its fields."""
    for address in addresses(_paths(ctx)):
        if incomplete.startswith(address + ":"):
            kind = kinds.BY_NAME[address.partition(":")[0]]
            fields = sorted({f.partition(".")[0] for f in (*kind.fields, *kind.nested, *kind.compare.secret)}
                            - {"id", "created", "updated"})
            return [CompletionItem(f"{address}:{f}") for f in fields
                    if f"{address}:{f}".startswith(incomplete)]
    return complete_address(ctx, param, incomplete)


def complete_top_level_kinds(ctx: click.Context, param: click.Parameter,
                             incomplete: str) -> list[CompletionItem]:
    """``export --kinds``: the top-level kinds' manifest keys, after any already given
    (``services,pa<TAB>``)."""
    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    given = set(done.split(","))
    return [CompletionItem(prefix + k.manifest_key) for k in kinds.TOP_LEVEL
            if k.manifest_key.startswith(last) and k.manifest_key not in given]
