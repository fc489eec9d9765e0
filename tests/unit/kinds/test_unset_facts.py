"""The spellings of "not set" agree between the reconciler and the reference server.

SUPPLEMENT §10.10.3: real areas read an unset value as ``null``, ``""`` or ``[""]``. The
reconciler folds those spellings into the field's default (``Kind.compare.unset``, by kind and path);
the reference server writes them (its field tables and the ``mashery`` dialect's overlays in
``apimctl.server.dialects``: ``nullable``, ``unset``, ``null_reads``). Each side states the
facts on its own, so this test holds them together, for both dialects of the server:

- every spelling the server reads back for a field the reconciler compares is the field's
  default or one the reconciler folds (else a plan would show a change from one spelling of
  "unset" to another);
- every spelling the reconciler folds is the default, or one the server writes in some
  dialect, or one listed below as seen on real areas only.
"""

from __future__ import annotations

from typing import Any

import pytest

from apimctl import kinds, platform
from apimctl.server import catalog
from apimctl.server.fields import MISSING, Field

DIALECTS = (platform.SPEC_NAME, platform.MASHERY_NAME)

# the server's resources whose fields the reconciler compares: (resource, kind, path prefix)
RESOURCES: tuple[tuple[str, kinds.Kind, str], ...] = (
    ("Endpoint", kinds.ENDPOINT, ""),
    ("Method", kinds.ENDPOINT, "methods."),
    ("Service", kinds.SERVICE, ""),
    ("Package", kinds.PACKAGE, ""),
    ("Plan", kinds.PLAN, ""),
)

# spellings the server reads back that the reconciler handles elsewhere than ``Kind.compare.unset``
ELSEWHERE: dict[tuple[str, str], str] = {
    # a service's role permissions: ServiceOps.read gives null as no role ([])
    ("service", "roles"): "the kind's read",
}

# spellings the reconciler folds that the reference server never writes: seen on real areas
# only (§10.10.3 names them; the server writes the other spelling of the pair)
REAL_AREAS_ONLY: dict[tuple[str, str], tuple[Any, ...]] = {
    ("endpoint", "customRequestAuthenticationAdapter"): ("",),
}


def _server_spellings(field: Field) -> list[Any]:
    """What the server may read back for a field that was never set, or was set as unset."""
    out: list[Any] = [None] if field.nullable else []
    out += list(field.unset)
    if field.null_reads is not MISSING:
        out.append(field.null_reads)
    return out


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _compared(kind: kinds.Kind, path: str) -> bool:
    """Whether the reconciler compares the field (reads it and is not told to skip it)."""
    top = path.split(".")[0]
    unmanaged = set(kind.compare.unmanaged)
    read = any(f == path or f.startswith(path + ".") for f in kind.fields)
    return top not in kind.compare.computed and path not in unmanaged and (read or top in kind.defaults)


def _default(kind: kinds.Kind, path: str, spelling: Any) -> bool:
    """Whether ``spelling`` is the field's default (``null`` for a nullable nested object)."""
    return _same(spelling, kind.default_at(path)) or (spelling is None and path in kind.compare.nullable)


def _server_facts(dialect: str) -> list[tuple[kinds.Kind, str, Any]]:
    out = []
    for resource, kind, prefix in RESOURCES:
        for field in catalog.resource(resource, dialect).fields:
            path = prefix + field.name
            for spelling in _server_spellings(field):
                out.append((kind, path, spelling))
    return out


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_reconciler_folds_every_spelling_the_server_writes(dialect: str) -> None:
    missing = []
    for kind, path, spelling in _server_facts(dialect):
        if not _compared(kind, path) or (kind.name, path) in ELSEWHERE:
            continue
        folded = kind.compare.unset.get(path, ())
        if not _default(kind, path, spelling) and not any(_same(spelling, s) for s in folded):
            missing.append(f"{kind.name}.{path}: the server reads {spelling!r}, the reconciler "
                           f"folds {folded} (default {kind.default_at(path)!r})")
    assert not missing, "\n".join(missing)


def test_every_spelling_the_reconciler_folds_is_a_fact_of_the_platform() -> None:
    written: dict[tuple[str, str], list[Any]] = {}
    for dialect in DIALECTS:
        for kind, path, spelling in _server_facts(dialect):
            written.setdefault((kind.name, path), []).append(spelling)
    unknown = []
    for kind in kinds.KINDS:
        for path, spellings in kind.compare.unset.items():
            known = [*written.get((kind.name, path), ()), *REAL_AREAS_ONLY.get((kind.name, path), ())]
            for spelling in spellings:
                if not _default(kind, path, spelling) and not any(_same(spelling, k) for k in known):
                    unknown.append(f"{kind.name}.{path}: folds {spelling!r}, which no dialect of "
                                   "the server writes")
    assert not unknown, "\n".join(unknown)


def test_the_lists_name_real_fields() -> None:
    for (kind_name, path), spellings in REAL_AREAS_ONLY.items():
        kind = kinds.get(kind_name)
        assert all(any(_same(s, f) for f in kind.compare.unset[path]) for s in spellings)
    for kind_name, path in ELSEWHERE:
        assert _compared(kinds.get(kind_name), path)


def test_a_disagreement_is_seen() -> None:
    """The check itself: a spelling neither the default nor folded is not taken for one."""
    endpoint = kinds.ENDPOINT
    assert not _default(endpoint, "cors", "") and "" not in endpoint.compare.unset["cors"]
    assert _default(endpoint, "systemDomainAuthentication", None)
    assert not _default(endpoint, "systemDomainCredentialKey", None)
    assert _compared(endpoint, "systemDomainCredentialKey")
    assert not _compared(endpoint, "scheduledMaintenanceEvent")  # computed
    assert not _compared(endpoint, "inboundMsslRequired")  # unmanaged (§10.8)
