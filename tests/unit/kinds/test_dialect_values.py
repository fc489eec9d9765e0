"""Telling a live document spelled the ``mashery`` way (SUPPLEMENT §10.2), which dialect
detection reads."""

from __future__ import annotations

from apimctl import kinds
from apimctl.kinds.dialects import mashery_values


def test_a_mashery_spelling_in_a_list_or_a_value_is_told() -> None:
    assert mashery_values(kinds.ENDPOINT, {"forwardedHeaders": ["svc-host", "mashery-host"]})
    assert mashery_values(kinds.ENDPOINT, {"returnedHeaders": ["mashery-responder"]})
    assert mashery_values(kinds.ENDPOINT, {"oauthGrantTypes": "client_credentials"})


def test_spec_spellings_and_other_values_are_not() -> None:
    assert not mashery_values(kinds.ENDPOINT, {"forwardedHeaders": ["svc-host"], "name": "mashery-host"})
    assert not mashery_values(kinds.ENDPOINT, {"forwardedHeaders": [], "returnedHeaders": None})
    # items that are not texts (a malformed reply) are not spellings, and raise nothing
    assert not mashery_values(kinds.ENDPOINT, {"forwardedHeaders": [{"mashery-host": 1}, 3, None]})
    assert not mashery_values(kinds.ROLE, {"name": "mashery-host"})  # a kind without vocabularies
