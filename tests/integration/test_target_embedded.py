"""Without --url the CLI opens the embedded reference server (``.apimctl/local.db``) in-process."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from apimctl.cli import target

from ..unit.cli.targetkit import options as _options

pytestmark = pytest.mark.anyio


def _server_ready() -> bool:
    try:
        server = importlib.import_module("apimctl.server")
    except Exception:  # not written yet, or mid-edit
        return False
    return hasattr(server, "create_app") and hasattr(server, "ServerConfig")


@pytest.mark.skipif(
    not _server_ready(), reason="apimctl.server (create_app, ServerConfig) is not available yet"
)
async def test_embedded_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    notes: list[str] = []
    async with target.open_client(
        **_options(url=None, token="ignored"), announce=notes.append
    ) as client:
        assert client.base_url == "http://embedded/v3/rest"
        assert client.limiter.qps is None  # no client-side limit unless --qps was given
        assert await client.list_all("/services") == []
        await client.post("/domains", {"domain": "example.com"})
        assert [d["domain"] for d in await client.list_all("/domains")] == ["example.com"]
    assert notes == [target.EMBEDDED_NOTICE]
    assert (
        notes[0]
        == "Using the embedded reference server (.apimctl/local.db); set --url or APIMCTL_URL to target an area."
    )
    assert (tmp_path / ".apimctl" / "local.db").exists()
    assert (tmp_path / ".apimctl" / ".gitignore").read_text().strip().endswith("*")

    # the state persists across runs; an explicit --qps applies
    async with target.open_client(
        **_options(url=None, qps=7.0, qps_given=True), announce=notes.append
    ) as client:
        assert client.limiter.qps == 7.0
        assert [d["domain"] for d in await client.list_all("/domains")] == ["example.com"]
