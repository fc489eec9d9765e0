"""The core function of ``apimctl export``, without click: bad input refused before the client
is opened, the result a value, files written only when asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from apimctl.errors import ApimctlError
from apimctl.export.command import ExportRequest, export

from ..areakit import ROLES, FakeArea, role


def test_export_prints_nothing_and_returns_the_files() -> None:
    area = FakeArea({ROLES: [role("Partners", "r1")]})
    done = asyncio.run(export(ExportRequest(target="t"), area.connect))
    assert [f.name for f in done.export.files] == ["apimctl.yaml"]
    assert "Partners" in done.export.files[0].text and done.written == ()


def test_export_writes_the_directory_and_says_what_it_added(tmp_path: Path) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1")]})
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.yaml").write_text("roles: [Mine]\n")
    told: list[str] = []
    done = asyncio.run(export(ExportRequest(kinds=("roles",), out=str(tmp_path / "out")), area.connect,
                              notice=told.append))
    assert done.written == (str(tmp_path / "out" / "apimctl.yaml"),)
    assert done.foreign == (str(tmp_path / "out" / "mine.yaml"),) and done.removed == ()
    assert told == []
    asyncio.run(export(ExportRequest(kinds=("packages",)), area.connect, notice=told.append))
    assert told == ["Also exporting roles, services: the objects asked for refer to them."]
    with pytest.raises(ApimctlError, match="nothing to export"):
        asyncio.run(export(ExportRequest(kinds=("domains",)), area.connect))


@pytest.mark.parametrize(("request_", "message"), [
    (ExportRequest(kinds=("spaceships",)), "--kinds: unknown kind 'spaceships'"),
    (ExportRequest(out="afile/out"), "cannot write the export to afile/out: .*afile is not a directory"),
])
def test_export_refuses_before_the_client_is_opened(area: FakeArea, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    request_: ExportRequest, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ApimctlError, match=message):
        asyncio.run(export(request_, area.connect))
    assert area.opened == 0
