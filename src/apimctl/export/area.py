"""The core of ``apimctl export``: an area's live state in, an :class:`Export` out.

``apimctl export`` (:mod:`apimctl.cli.export`) calls :func:`export_area`, which reads the live
state through :func:`apimctl.state.live.read_live` and hands it to the pure
:func:`export_state`: resolve the kinds (:mod:`~apimctl.export.naming`), build the documents
(:mod:`~apimctl.export.objects`), fit them to the schema (:mod:`~apimctl.export.fit`) and lay
them out in files (:mod:`~apimctl.export.layout`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from apimctl.errors import ApimctlError
from apimctl.export.fit import fit_items
from apimctl.export.layout import LAYOUTS, Layout, layout_files
from apimctl.export.model import Export
from apimctl.export.naming import resolve_kinds
from apimctl.export.objects import build_documents
from apimctl.kinds.dialects import SPEC, Dialect, dialect_of
from apimctl.manifests.schema import manifest_schema
from apimctl.planning import target_dialect
from apimctl.speed import collector_paused
from apimctl.state.live import DATA_SOURCES, Lister, LiveState, read_live, refused_lines


async def export_area(client: Lister, *, kinds_: Sequence[str] | None = None,
                      with_ids: bool = False, layout: Layout = "single",
                      source: str = "", notice: Callable[[str], None] | None = None) -> Export:
    """Read the area through ``client`` and export it (see :func:`export_state`). A data
    source the area refuses to list is exported as none, said once to ``notice``."""
    resolve_kinds(kinds_)  # fail on a bad --kinds before any call
    # export compares nothing
    live = await read_live(client, normal_forms=False, raw=False, optional=DATA_SOURCES)
    for line in refused_lines(live):
        if notice is not None:
            notice(f"Warning: {line}")
    found = await target_dialect(client, None, live)
    return export_state(live, kinds_=kinds_, with_ids=with_ids, layout=layout, source=source,
                        dialect=dialect_of(found.name))


def export_state(live: LiveState, *, kinds_: Sequence[str] | None = None, with_ids: bool = False,
                 layout: Layout = "single", source: str = "", dialect: Dialect = SPEC) -> Export:
    """The export of ``live`` (pure: no I/O), in ``dialect`` (the target's: its defaults are
    left out, its vocabulary is what the area holds). Raises :class:`ApimctlError` for an empty area,
    which would give manifests that do not validate."""
    if layout not in LAYOUTS:
        raise ApimctlError(f"--layout: expected one of {', '.join(LAYOUTS)}, got {layout!r}")
    with collector_paused(promote=True):  # the documents are acyclic: nothing for the collector to find
        return _export(live, kinds_, with_ids, layout, source, dialect)


def export_documents(live: LiveState, *, kinds_: Sequence[str] | None = None, with_ids: bool = False,
                     dialect: Dialect = SPEC,
                     declared: bool = False) -> tuple[dict[str, list[Any]], list[str], list[str]]:
    """The exported objects of ``live`` per top-level manifest key, fitted to the schema; the
    variables they reference; the live fields dropped (what the files of :func:`export_state`
    hold, before they are laid out; ``declared``: ``live`` holds manifests' objects, see
    :func:`~apimctl.export.objects.build_documents`). Raises :class:`ApimctlError` for an
    empty area."""
    keys, _ = resolve_kinds(kinds_)
    docs, variables = build_documents(live, manifest_keys=keys, with_ids=with_ids, dialect=dialect,
                                      declared=declared)
    if not docs:
        raise ApimctlError("the area has no objects of the kinds asked for; nothing to export")
    schema = manifest_schema()
    dropped: list[str] = []
    for key, items in docs.items():
        fit_items(items, schema["properties"][key], schema, key, dropped)
    return docs, variables, dropped


def _export(live: LiveState, kinds_: Sequence[str] | None, with_ids: bool, layout: Layout,
            source: str, dialect: Dialect) -> Export:
    docs, variables, dropped = export_documents(live, kinds_=kinds_, with_ids=with_ids, dialect=dialect)
    return Export(files=layout_files(docs, layout, source), variables=sorted(set(variables)),
                  kinds=list(docs), counts={k: len(v) for k, v in docs.items()}, dropped=dropped)
