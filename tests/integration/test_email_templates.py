"""Email template sets, a read-only kind (a data source), through the command line against the
reference server in both dialects: exported (with the plans that name them, or when asked
for), checked by validate, resolved by name to the set's id when a plan is applied. A plan's
set is compared only as its manifest names it (by name, or by id as before); a manifest that
names none leaves it alone.

The reference server seeds every area with the set ``Default`` (``apimctl.server.seed``) and
offers no API that creates one. A plan names its set by ``emailTemplateSet``; the API's field
is ``emailTemplateSetId`` (an integer in the ``spec`` dialect, a string in ``mashery``,
SUPPLEMENT §10.10 4)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from apimctl.server import ServerConfig, create_app

from .inprocess import entry_point, uvicorn_in_thread

TOKEN = "tok-email"
SEEDED = "Default"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[str]:
    db = tmp_path_factory.mktemp(f"email-{dialect}") / "s.db"
    app = create_app(ServerConfig(db_path=str(db), tokens={TOKEN: "area-1"}, dialect=dialect))
    with uvicorn_in_thread(app, timeout_graceful_shutdown=1) as port:
        yield f"http://127.0.0.1:{port}/v3/rest"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        api: str) -> Callable[..., tuple[int, str, str]]:
    monkeypatch.setenv("APIMCTL_URL", api)
    monkeypatch.setenv("APIMCTL_TOKEN", TOKEN)
    return entry_point(monkeypatch, capsys)


def _manifest(folder: Path, plan: dict[str, Any], declared: list[str] | None = None) -> str:
    doc: dict[str, Any] = {"packages": [{"name": "Mail", "plans": [{"name": "Gold", **plan}]}]}
    if declared is not None:
        doc["emailTemplateSets"] = declared
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "apimctl.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(folder)


def _live_plan(api: str) -> dict[str, Any]:
    reply = httpx.get(f"{api}/packages", headers={"Authorization": f"Bearer {TOKEN}"},
                      params={"fields": "id,name,plans.id,plans.name,plans.emailTemplateSetId"})
    package = next(p for p in reply.json() if p["name"] == "Mail")
    return dict(package["plans"][0])


def _set_id(api: str) -> str:
    reply = httpx.get(f"{api}/emailTemplateSets", headers={"Authorization": f"Bearer {TOKEN}"},
                      params={"fields": "id,name"})
    return str(next(s["id"] for s in reply.json() if s["name"] == SEEDED))


def test_export_lists_the_sets_when_asked_for(run: Callable[..., tuple[int, str, str]]) -> None:
    code, out, err = run("export", "--kinds", "emailTemplateSets")
    assert code == 0, err
    assert yaml.safe_load(out) == {"emailTemplateSets": [SEEDED]}


def test_validate_catches_an_unknown_set_name(run: Callable[..., tuple[int, str, str]],
                                              tmp_path: Path) -> None:
    folder = _manifest(tmp_path / "m", {"emailTemplateSet": "Defualt"}, declared=[SEEDED])
    code, out, err = run("validate", folder)
    assert code == 1
    assert "emailTemplateSet: unknown email template set 'Defualt'" in out + err
    assert "did you mean 'Default'" in out + err
    both = _manifest(tmp_path / "both", {"emailTemplateSet": SEEDED, "emailTemplateSetId": 1})
    code, out, err = run("validate", both)
    assert code == 1 and "write one of them" in out + err
    assert run("validate", _manifest(tmp_path / "ok", {"emailTemplateSet": SEEDED}, [SEEDED]))[0] == 0


def test_a_plan_names_its_set_and_the_apply_writes_its_id(
        run: Callable[..., tuple[int, str, str]], api: str, dialect: str, tmp_path: Path) -> None:
    named = _manifest(tmp_path / "named", {"emailTemplateSet": SEEDED})
    code, out, err = run("plan", named, "--no-color")
    assert code == 0, err
    assert "emailTemplateSet" in out and SEEDED in out
    code, out, err = run("apply", named, "--auto-approve", "--no-lock")
    assert code == 0, out + err
    set_id = _set_id(api)
    written = _live_plan(api)["emailTemplateSetId"]
    assert written == (int(set_id) if dialect == "spec" else set_id)  # the dialect's type

    code, out, err = run("plan", named, "--detailed-exitcode")
    assert code == 0, out + err  # the live id reads back as the name: no change

    code, out, err = run("export", "--kinds", "packages")
    exported = yaml.safe_load(out)
    assert exported["emailTemplateSets"] == [SEEDED]  # the set the exported plan names
    assert exported["packages"][0]["plans"][0]["emailTemplateSet"] == SEEDED

    # a plan that names no set leaves the area's alone; a null one is the area's default set
    assert run("plan", _manifest(tmp_path / "none", {}), "--detailed-exitcode")[0] == 0
    code, out, err = run("apply", _manifest(tmp_path / "null", {"emailTemplateSet": None}),
                         "--auto-approve", "--no-lock")
    assert code == 0, out + err
    assert _live_plan(api)["emailTemplateSetId"] is None
    if dialect == "spec":  # an id as manifests wrote it before (the schema's integer)
        by_id = _manifest(tmp_path / "id", {"emailTemplateSetId": written})
        code, out, err = run("apply", by_id, "--auto-approve", "--no-lock")
        assert code == 0, out + err
        assert _live_plan(api)["emailTemplateSetId"] == written
        assert run("plan", by_id, "--detailed-exitcode")[0] == 0
        assert run("plan", named, "--detailed-exitcode")[0] == 0  # the same set, by name


def test_apply_refuses_an_unknown_set(run: Callable[..., tuple[int, str, str]],
                                       tmp_path: Path) -> None:
    folder = _manifest(tmp_path / "nope", {"emailTemplateSet": "Nope"})
    code, out, err = run("apply", folder, "--auto-approve", "--no-lock")
    assert code == 1
    assert "emailTemplateSet:Nope does not exist in the area" in out + err
