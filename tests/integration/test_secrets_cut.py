"""A message that cuts a long value (``(got "…")``, ``(it is "…")``) shows no beginning of a
value read from the environment: the masked value of a field that is not secret, in every
format of ``validate`` and ``lint`` and in ``plan``'s error line, through the real entry
point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from apimctl.cli import cli
from apimctl.cli.common import run_guarded

MANIFEST = """\
services:
  - name: Echo
    endpoints:
      - name: Call
        requestPathAlias: /call
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        outboundTransportProtocol: "${DATABASE_URL}"
        requestProtocol: "x${LONG_SETTING}"
"""
LINTED = """\
domains: [example.com, example.net]
services:
  - name: Echo
    description: "x${LONG_SETTING}"
    endpoints:
      - {name: Call, requestPathAlias: /call, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], systemDomains: [backend.example.net]}
"""
RULESET = """\
rules:
  no-description:
    description: Descriptions stay empty
    severity: error
    given: $.services[*]
    then: {field: description, function: falsy}
"""
VALUES = {
    "DATABASE_URL": 'postgres://admin:Hu"nt3r\\2@db.internal.example.com:5432/production-database?ssl=true',
    "LONG_SETTING": "é" * 3 + "settings-that-are-long-enough-to-be-cut-by-any-message-0123456789",
}


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["apimctl", *args])
    capsys.readouterr()
    code = run_guarded(cli)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def beginnings(value: str) -> set[str]:
    """The value's first characters (at least 6), as they are and JSON-escaped (once, and twice:
    a message quoting it as JSON in a JSON report)."""
    once = (json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1])
    forms = (value, *once, *(json.dumps(form)[1:-1] for form in once))
    return {form[:n] for form in forms for n in range(6, len(form) + 1)}


def test_a_cut_validation_message_shows_no_beginning_of_a_masked_value(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("APIMCTL_URL", "APIMCTL_TOKEN", "APIMCTL_PROFILE", "CI"):
        monkeypatch.delenv(name, raising=False)
    for name, value in VALUES.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "m.yaml").write_text(MANIFEST)
    outputs = {fmt: run(monkeypatch, capsys, "validate", "m.yaml", "--format", fmt) for fmt in ("text", "json", "github")}
    outputs["plan"] = run(monkeypatch, capsys, "plan", "m.yaml")
    (tmp_path / "linted.yaml").write_text(LINTED)
    (tmp_path / "rules.yaml").write_text(RULESET)
    for fmt in ("text", "json", "sarif"):
        outputs[f"lint {fmt}"] = run(monkeypatch, capsys, "lint", "linted.yaml", "--ruleset", "rules.yaml",
                                     "--format", fmt)
    for where, (code, out) in outputs.items():
        assert code == 1 and ("(got " in out or "(it is " in out), (where, out)
        shown = [b for value in VALUES.values() for b in beginnings(value) if b in out]
        assert shown == [], where
        assert "(sensitive)" in out, where
