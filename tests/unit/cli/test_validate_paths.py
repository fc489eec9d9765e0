"""``apimctl validate`` refuses an endpoint's public path or domain that a URL cannot carry as
written (NUL, CR/LF and other control characters, spaces, ``?``, ``#``), at the field, with
exit code 1, without a traceback."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.cli import cli
from apimctl.manifests.schema import manifest_schema

from ..manifests.corpus_cases import DOMAINS

ALIAS = "services[0].endpoints[0].requestPathAlias"


def _manifest(alias: str, host: str = "api.example.com") -> str:
    """The service of the corpus with ``alias`` and ``host`` written as JSON strings (YAML
    double-quoted scalars: control characters escaped)."""
    return DOMAINS + (
        "services:\n  - name: Weather\n    endpoints:\n      - name: Forecast\n"
        f"        requestPathAlias: {json.dumps(alias)}\n        trafficManagerDomain: api.example.com\n"
        f"        publicDomains: [{json.dumps(host)}]\n        systemDomains: [backend.example.net]\n")


Workdir = Callable[[Mapping[str, str | bytes]], Path]


def _validate(workdir: Workdir, text: str) -> tuple[int, str]:
    workdir({"m.yaml": text})
    result = CliRunner().invoke(cli, ["validate", "m.yaml"], standalone_mode=False, catch_exceptions=False)
    return int(result.return_value or 0), result.stdout + result.stderr


def test_a_plain_alias_passes(workdir: Workdir) -> None:
    assert _validate(workdir, _manifest("/v2/forecast;v=1/@x"))[0] == 0


@pytest.mark.parametrize("alias", ["/v2/a\x00b", "/v2/a\r\nb", "/v2/a b", "/v2/a?x=1", "/v2/a#top", "/v2/\tx"])
def test_an_alias_a_url_cannot_carry_is_refused_at_the_field(workdir: Workdir, alias: str) -> None:
    code, output = _validate(workdir, _manifest(alias))
    assert code == 1, output
    assert f"m.yaml:6:9: {ALIAS}: must be a URL path (no spaces, control characters" in output


@pytest.mark.parametrize("host", ["api.example.com?x", "api.example.com#x", "api.example.com\x00"])
def test_a_public_domain_a_url_cannot_carry_is_refused_at_the_field(workdir: Workdir, host: str) -> None:
    code, output = _validate(workdir, _manifest("/v2/forecast", host))
    assert code == 1, output
    assert "services[0].endpoints[0].publicDomains[0]: must be a host name" in output


def _alias_pattern() -> str:
    endpoint = manifest_schema()["$defs"]["endpoint"]["properties"]["requestPathAlias"]
    return str(endpoint["pattern"])


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_the_alias_pattern_refuses_exactly_what_a_path_cannot_carry(alias: str) -> None:
    refused = any(c in "?#" or ord(c) <= 0x20 or ord(c) == 0x7F for c in alias)
    assert (re.fullmatch(_alias_pattern(), alias) is None) == refused
