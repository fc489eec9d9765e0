"""The facts both sides rely on agree everywhere they are used (``apimctl.platform``).

For each dialect, the reconciler's table (``apimctl.kinds.dialects``), the reference
server's field tables and dialect table (``apimctl.server``) and the manifest schema (and
its copy in ``schemas/``) hold the same enum vocabularies, the same default
``returnedHeaders`` of a new endpoint and the same default ``detailHeader`` of each message
of the error catalog.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apimctl import kinds, platform
from apimctl.kinds import dialects as client
from apimctl.server import catalog
from apimctl.server import dialects as server
from apimctl.server.fields import Field

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = (ROOT / "src" / "apimctl" / "schemas" / "manifest.schema.json",
           ROOT / "schemas" / "manifest.schema.json")
DIALECTS = (platform.SPEC_NAME, platform.MASHERY_NAME)

# each vocabulary: where the reconciler keeps it (kind, path), the server (resource, field)
# and the schema ($defs entry, property)
PLACES: tuple[tuple[platform.Vocabulary, tuple[str, str], tuple[str, str], tuple[str, str]], ...] = (
    (platform.FORWARDED_HEADERS, ("endpoint", "forwardedHeaders"), ("Endpoint", "forwardedHeaders"),
     ("endpoint", "forwardedHeaders")),
    (platform.RETURNED_HEADERS, ("endpoint", "returnedHeaders"), ("Endpoint", "returnedHeaders"),
     ("endpoint", "returnedHeaders")),
    (platform.GRANT_TYPES, ("endpoint", "oauthGrantTypes"), ("Endpoint", "oauthGrantTypes"),
     ("endpoint", "oauthGrantTypes")),
    (platform.GRANT_TYPES, ("service", "securityProfile.oauth.grantTypes"), ("OAuth", "grantTypes"),
     ("oauth", "grantTypes")),
)


def _server_field(resource: str, name: str, dialect: str) -> Field:
    return next(f for f in catalog.resource(resource, dialect).fields if f.name == name)


def _schema_enum(schema: dict[str, Any], definition: str, prop: str) -> list[str]:
    return list(schema["$defs"][definition]["properties"][prop]["items"]["enum"])


def test_the_dialects_spell_each_vocabulary_with_as_many_values() -> None:
    for vocab, *_ in PLACES:
        assert set(vocab) == set(DIALECTS)
        assert len({len(values) for values in vocab.values()}) == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_reconciler_and_server_hold_the_same_vocabularies(dialect: str) -> None:
    for vocab, (kind, path), (resource, name), _ in PLACES:
        assert client.DIALECTS[dialect].vocabulary(kinds.get(kind), path) == vocab[dialect], (kind, path)
        assert _server_field(resource, name, dialect).values == vocab[dialect], (resource, name)
    # the reconciler translates nothing else
    listed = {(kind, path) for _, (kind, path), _, _ in PLACES}
    assert {(k.name, p) for k in kinds.KINDS for p in k.compare.vocabularies} == listed


@pytest.mark.parametrize("schema_path", SCHEMAS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_schema_accepts_both_spellings_and_nothing_else(schema_path: Path) -> None:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    for vocab, _, _, (definition, prop) in PLACES:
        enum = _schema_enum(schema, definition, prop)
        assert len(enum) == len(set(enum)), (definition, prop)
        both = [v for dialect in DIALECTS for v in vocab[dialect]]
        assert enum == list(dict.fromkeys(both)), (definition, prop)
    dialect_enum = schema["$defs"]["settings"]["properties"]["dialect"]["enum"]
    assert set(dialect_enum) == set(client.CHOICES) == {*DIALECTS, client.AUTO}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_new_endpoint_returns_the_same_headers_on_both_sides(dialect: str) -> None:
    expected = platform.MASHERY_RETURNED_HEADERS if dialect == platform.MASHERY_NAME else ()
    got = client.DIALECTS[dialect].defaults.get("endpoint", {}).get("returnedHeaders", ())
    assert tuple(got) == expected
    default = _server_field("Endpoint", "returnedHeaders", dialect).default
    assert tuple(default if isinstance(default, list) else ()) == expected


@pytest.mark.parametrize("dialect", DIALECTS)
def test_messages_default_to_the_same_detail_header_on_both_sides(dialect: str) -> None:
    details = platform.MASHERY_MESSAGE_DETAILS if dialect == platform.MASHERY_NAME else {}
    assert set(details) <= set(platform.ERROR_CATALOG)
    for message_id in platform.ERROR_CATALOG:
        want = details.get(message_id, "")
        assert client.DIALECTS[dialect].detail_header(message_id) == want, message_id
        assert server.dialect_of(dialect).message(message_id)["detailHeader"] == want, message_id
