"""The imported service in the form ``apimctl export`` writes: so that the manifest an import
makes, applied and exported back as OpenAPI (``apimctl export --openapi``), imports to the
same text.

An area keeps no order and no explicit default: it lists endpoints and methods by name and an
export leaves out every value equal to the platform's default (an endpoint's ``errorSet``
naming its service's first set, an error set's default ``type``, ...). :func:`exported_form`
therefore writes the service the way the exporter writes it once applied
(:func:`apimctl.export.build_documents`, in the ``spec`` dialect): children by name, fields in
the exporter's order, defaults left out. Values the exporter would not copy are kept as the
document gave them: secrets (an export writes a variable reference instead) and texts holding
``${`` (the manifest's own escaping, ``$${``, or a variable reference).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from apimctl import kinds
from apimctl.export import build_documents
from apimctl.kinds import Kind
from apimctl.state.live import LiveObject, LiveState

_MARK = "${"
Tokens = dict[str, str]


def exported_form(service: Mapping[str, Any]) -> dict[str, Any]:
    """``service`` (a manifest entry) as the export of the area it was applied to writes it."""
    tokens: Tokens = {}
    counter = itertools.count()
    plain = _tokenised(copy.deepcopy(dict(service)), tokens, counter)
    live = LiveState()
    ids = itertools.count(1)
    _add(live, kinds.SERVICE, plain, None, ids)
    docs, _ = build_documents(live, manifest_keys=[kinds.SERVICE.manifest_key])
    entry = dict(docs[kinds.SERVICE.manifest_key][0])
    for child in kinds.children_of(kinds.SERVICE):  # an area always has a set: none is written
        if entry.get(child.manifest_key) == []:
            del entry[child.manifest_key]
    restored: dict[str, Any] = _restored(entry, tokens)
    _keep_secrets(restored, service)
    return restored


def _add(live: LiveState, kind: Kind, doc: Mapping[str, Any], parent: LiveObject | None,
         ids: Iterator[int]) -> None:
    """``doc`` and its children as objects of the live state, in the order written."""
    children = kinds.children_of(kind)
    own = {k: v for k, v in doc.items() if k not in {c.manifest_key for c in children}}
    name = str(doc.get(kind.identity, ""))
    parent_key = parent.key if parent is not None else None
    obj = LiveObject(kind.name, kind.key_of(name, parent_key), f"{kind.name}-{next(ids)}", own,
                     parent_key, parent.id if parent is not None else None)
    live.add(obj)
    for child in children:
        for item in doc.get(child.manifest_key) or []:
            if isinstance(item, Mapping):
                _add(live, child, item, obj, ids)


def _keep_secrets(entry: dict[str, Any], service: Mapping[str, Any]) -> None:
    """Put back the secrets the imported endpoints hold (the export writes references)."""
    given = {str(e.get("name")): e for e in service.get(kinds.ENDPOINT.manifest_key) or []}
    for endpoint in entry.get(kinds.ENDPOINT.manifest_key) or []:
        source = given.get(str(endpoint.get("name")), {})
        for path in sorted(kinds.ENDPOINT.compare.secret):
            *parents, last = path.split(".")
            have, want = endpoint, source
            for part in parents:
                have, want = have.get(part), want.get(part)
                if not isinstance(have, dict) or not isinstance(want, Mapping):
                    break
            else:
                if last in want:
                    have[last] = want[last]
                else:
                    have.pop(last, None)


def _tokenised(value: Any, tokens: Tokens, counter: Iterator[int]) -> Any:
    """``value`` with each text holding ``${`` replaced by a token the exporter copies as is."""
    if isinstance(value, str) and _MARK in value:
        token = f"apimctl-text-{next(counter)}"
        tokens[token] = value
        return token
    if isinstance(value, dict):
        return {k: _tokenised(v, tokens, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_tokenised(v, tokens, counter) for v in value]
    return value


def _restored(value: Any, tokens: Tokens) -> Any:
    if isinstance(value, str):
        return tokens.get(value, value)
    if isinstance(value, dict):
        return {k: _restored(v, tokens) for k, v in value.items()}
    if isinstance(value, list):
        return [_restored(v, tokens) for v in value]
    return value
