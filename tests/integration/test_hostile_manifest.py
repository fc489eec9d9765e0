"""A pull request's manifest cannot exfiltrate the pipeline's secrets.

A manifest that writes an environment variable into fields that are not secret
(``description: "pw=${AUTH_PW}"``, ``requestPathAlias: /s1/${AUTH_PW}``) gets a plan whose
text, JSON and Markdown (the pull-request comment) show ``(sensitive)`` instead, while apply
still sends the real value; a variable declared public from outside (``--public-env``) is
shown; the connection's own credentials are refused at ``file:line:col``; ``render`` and
``validate --format github`` print no such value. Against the reference server in both
dialects (in a thread of the test process, an area per test); the offline commands run once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from apimctl import sensitive

from .apply_support import Completed, run_in_process
from .dialect_support import ThreadServer, served_in_thread
from .test_secrets_echo import forms

AUTH_PW = "exfil-4f7a9c2e-pw"
REGION = "eu-west-9z"
HOSTILE = """\
services:
  - name: Hostile
    description: "pw=${AUTH_PW}"
    version: "${REGION}"
    endpoints:
      - name: E1
        requestPathAlias: /s1/${AUTH_PW}
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
domains: [example.com, example.net]
"""
ENV = {"AUTH_PW": AUTH_PW, "REGION": REGION}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[ThreadServer]:
    with served_in_thread(tmp_path_factory.mktemp("hostile") / "area.db", dialect, areas=2) as srv:
        yield srv


class Runs:
    """``apimctl`` runs in this process against ``srv`` with ``token`` (and ``ENV``)."""

    def __init__(self, srv: ThreadServer, token: str) -> None:
        self.srv, self.token = srv, token

    def run(self, *args: str) -> Completed:
        return run_in_process(list(args), {"APIMCTL_URL": self.srv.url, "APIMCTL_TOKEN": self.token,
                                           "APIMCTL_QPS": "0", "NO_COLOR": "1", **ENV})


def write(folder: Path, text: str = HOSTILE) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "m.yaml").write_text(text)
    return str(folder / "m.yaml")


def test_plan_masks_what_apply_sends(shared: ThreadServer, tmp_path: Path) -> None:
    token = shared.fresh_token()
    runs = Runs(shared, token)
    path = write(tmp_path / "m")
    public = runs.run("plan", "--format", "json", "--public-env", "REG*", path)
    assert REGION in public.stdout and "(sensitive)" in public.stdout  # declared public: shown
    sensitive.forget()  # the runs share this process; each command registers what it read
    outputs = []
    for fmt in ("text", "json", "markdown"):
        done = runs.run("plan", "--format", fmt, path)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout + done.stderr)
    assert all("(sensitive)" in text for text in outputs), outputs
    saved = runs.run("plan", "--out", str(tmp_path / "plan.json"), path)  # what apply would send
    assert saved.returncode == 1 and not (tmp_path / "plan.json").exists(), saved.stderr
    assert "not saving" in saved.stderr and "(AUTH_PW, REGION)" in saved.stderr
    applied = runs.run("apply", "--auto-approve", "--format", "json", path)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    outputs += [public.stdout + public.stderr, applied.stdout + applied.stderr]
    everything = "\n".join(outputs)
    assert [f for f in forms(AUTH_PW) if f in everything] == []
    assert REGION not in "\n".join(outputs[:3] + outputs[4:])
    live = httpx.get(shared.url + "/services", params={"fields": "name,description,version,endpoints.requestPathAlias"},
                     headers={"Authorization": f"Bearer {token}"}).json()
    service = next(s for s in live if s["name"] == "Hostile")
    assert (service["description"], service["version"]) == (f"pw={AUTH_PW}", REGION)  # nothing masked was sent
    assert service["endpoints"][0]["requestPathAlias"] == f"/s1/{AUTH_PW}"


def test_the_connection_credentials_are_refused(shared: ThreadServer, tmp_path: Path) -> None:
    token = shared.fresh_token()
    path = write(tmp_path / "m", HOSTILE.replace("${AUTH_PW}", "${APIMCTL_TOKEN}", 1))
    done = Runs(shared, token).run("plan", "--format", "markdown", path)
    assert done.returncode == 1
    assert f"{path}:3:" in done.stderr and "connection's own credentials" in done.stderr, done.stderr
    assert token not in done.stdout + done.stderr


def test_render_and_validate_show_no_value_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from .test_secrets_echo import run

    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    write(tmp_path)
    code, text = run(tmp_path, monkeypatch, capsys, "render", "--format", "json", "m.yaml")
    assert code == 0, text
    rendered = json.loads(text[text.index("{"):])
    assert rendered["services"][0]["description"] == "(sensitive)"
    # an unknown role is named in the error: the value read is masked there too
    write(tmp_path, HOSTILE.replace('    description: "pw=${AUTH_PW}"\n', '    roles: ["${AUTH_PW}"]\n'))
    for fmt in ("text", "github", "json"):
        code, out = run(tmp_path, monkeypatch, capsys, "validate", "--format", fmt, "m.yaml")
        assert code == 1 and "unknown role '(sensitive)'" in out, out
        text += out
    sensitive.forget()  # a new command (in this process)
    code, out = run(tmp_path, monkeypatch, capsys, "validate", "--public-env", "AUTH_PW", "m.yaml")
    assert f"unknown role '{AUTH_PW}'" in out  # declared public by the pipeline: shown
    assert [f for f in forms(AUTH_PW) if f in text] == []
