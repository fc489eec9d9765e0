"""A real `apimctl serve` process keeps every committed write across a hard restart
(DESIGN "Reference server")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from spec_helpers import Api, endpoint_body, free_port, member_body, one

TOKEN = "persist-token"
AREA = "persist-area"


@contextmanager
def serve_process(db: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`python -m apimctl serve` on a free port of 127.0.0.1; yields the process and its base URL."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "apimctl",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--db",
        str(db),
        *extra,
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(proc, base)
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def wait_until_up(proc: subprocess.Popen[bytes], base: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise AssertionError(f"server exited with {proc.returncode}: {output}")
        try:
            httpx.get(base + "/v3/rest/services", timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("server did not start in time")


def test_writes_survive_a_killed_process(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    args = ("--token", f"{TOKEN}={AREA}", "--auto-approve-domains")
    with serve_process(db, *args) as (proc, base), httpx.Client(base_url=base, timeout=10) as http:
        api = Api(http, TOKEN)
        api.create("/domains", {"domain": "example.com"})
        api.create("/domains", {"domain": "example.net"})
        svc = api.create(
            "/services", {"name": "Weather", "endpoints": [endpoint_body()], "cache": {"cacheTtl": 9}}
        )
        package = api.create("/packages", {"name": "Partners", "plans": [{"name": "Gold"}]})
        member = api.create("/members", member_body("dev1"))
        api.update(f"/services/{svc['id']}", {"description": "last write before the kill"})
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    with serve_process(db, *args) as (_, base), httpx.Client(base_url=base, timeout=10) as http:
        api = Api(http, TOKEN)
        got = api.fetch(
            f"/services/{svc['id']}",
            {"fields": "id,name,description,revisionNumber,cache,endpoints.*"},
        )
        assert got["name"] == "Weather"
        assert got["description"] == "last write before the kill"
        assert got["revisionNumber"] == 2
        assert got["cache"] == {"cacheTtl": 9}
        assert [e["requestPathAlias"] for e in got["endpoints"]] == ["/forecast"]
        assert [p["name"] for p in api.list(f"/packages/{package['id']}/plans")] == ["Gold"]
        assert api.fetch(f"/members/{member['id']}")["username"] == "dev1"
        assert sorted(d["domain"] for d in api.list("/domains")) == ["example.com", "example.net"]
        # uniqueness survives too
        resp = api.post("/services", {"name": "Weather"})
        assert resp.status_code == 400
        resp = api.post("/members", member_body("dev1"))
        assert resp.status_code == 400


def test_graceful_stop_also_keeps_writes(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    args = ("--token", f"{TOKEN}={AREA}")
    with serve_process(db, *args) as (proc, base):
        with httpx.Client(base_url=base, timeout=10) as http:
            role = Api(http, TOKEN).create("/roles", {"name": "Partners"})
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    with serve_process(db, *args) as (_, base), httpx.Client(base_url=base, timeout=10) as http:
        assert Api(http, TOKEN).fetch(f"/roles/{role['id']}")["name"] == "Partners"


def test_serve_without_credentials_says_which_token_it_accepts(tmp_path: Path) -> None:
    import re

    db = tmp_path / "server.db"
    with serve_process(db) as (proc, _):
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    assert "token" in output.lower(), output
    match = re.search(r"Bearer ([\w.~+/-]+)", output) or re.search(r"--token (\w+)=", output)
    assert match, f"no development token named in: {output}"
    with serve_process(db) as (_, base):
        headers = {"Authorization": f"Bearer {match.group(1)}"}
        resp = httpx.get(base + "/v3/rest/services", headers=headers)
        assert resp.status_code == 200, resp.text


def test_object_responses_flag(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    args = ("--token", f"{TOKEN}={AREA}", "--object-responses")
    with serve_process(db, *args) as (_, base), httpx.Client(base_url=base, timeout=10) as http:
        resp = Api(http, TOKEN).post("/roles", {"name": "Bare"})
        assert isinstance(resp.json(), dict), resp.text
        assert one(resp)["name"] == "Bare"


def test_concurrent_writes_on_a_real_server(tmp_path: Path) -> None:
    """uvicorn runs requests concurrently; every request is still one transaction."""
    from concurrent.futures import ThreadPoolExecutor

    db = tmp_path / "server.db"
    args = ("--token", f"{TOKEN}={AREA}")
    with serve_process(db, *args) as (_, base), httpx.Client(base_url=base, timeout=30) as http:
        api = Api(http, TOKEN)
        with ThreadPoolExecutor(max_workers=8) as pool:
            created = list(pool.map(lambda i: api.post("/roles", {"name": f"role-{i}"}), range(30)))
            assert [r.status_code for r in created] == [200] * 30
            racing = list(pool.map(lambda _: api.post("/roles", {"name": "same"}), range(8)))
            assert sorted(r.status_code for r in racing) == [200] + [400] * 7
            assert all("duplicate" in r.text.lower() for r in racing if r.status_code == 400)
            sid = api.create("/services", {"name": "Busy"})["id"]
            updates = list(
                pool.map(
                    lambda i: api.put(f"/services/{sid}", {"description": f"d{i}"}), range(20)
                )
            )
            assert [r.status_code for r in updates] == [200] * 20
        assert api.get("/roles").headers["X-Total-Count"] == "31"
        got = api.fetch(f"/services/{sid}", {"fields": "revisionNumber"})
        assert got["revisionNumber"] == 21


def run_serve(*args: str) -> subprocess.CompletedProcess[str]:
    """`apimctl serve` expected to stop at once (a start-up error)."""
    cmd = [sys.executable, "-m", "apimctl", "serve", "--host", "127.0.0.1", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


def test_the_documented_invocation(tmp_path: Path) -> None:
    """`apimctl serve --host --port --db --token --auto-approve-domains --object-responses`, then
    the README's read of services with their endpoints."""
    args = ("--token", f"{TOKEN}={AREA}", "--auto-approve-domains", "--object-responses")
    with serve_process(tmp_path / "area.db", *args) as (_, base), httpx.Client(base_url=base, timeout=10) as http:
        api = Api(http, TOKEN)
        domain = api.post("/domains", {"domain": "example.com"}).json()
        assert domain["status"] == "active"
        service = api.post("/services", {"name": "Weather", "endpoints": [endpoint_body("Forecast", "/f", backend="b.example.com")]}).json()
        resp = http.get("/v3/rest/services", params={"fields": "id,name,endpoints"},
                        headers={"Authorization": f"Bearer {TOKEN}"})
        assert resp.status_code == 200 and resp.headers["X-Total-Count"] == "1"
        [got] = resp.json()
        assert got["id"] == service["id"] and [e["name"] for e in got["endpoints"]] == ["Forecast"]


def test_start_up_errors_are_clean(tmp_path: Path) -> None:
    with serve_process(tmp_path / "server.db") as (_, base):
        busy = run_serve("--port", base.rsplit(":", 1)[1], "--db", str(tmp_path / "other.db"))
    assert busy.returncode == 1 and "cannot listen on 127.0.0.1:" in busy.stderr, busy.stderr
    # the port is checked first: no banner, no database left behind
    assert "reference server on" not in busy.stderr and not (tmp_path / "other.db").exists()
    missing = run_serve("--port", "0", "--db", str(tmp_path / "missing" / "dir" / "x.db"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr, missing.stderr
    assert not (tmp_path / "missing").exists()
    not_a_file = run_serve("--port", "0", "--db", str(tmp_path))
    assert not_a_file.returncode == 1 and "cannot open the database" in not_a_file.stderr
    events = tmp_path / "events.yaml"
    events.write_text("areas:\n  a1:\n    url: http://127.0.0.1:9/hooks\n    encoding: xml\n")
    bad = run_serve("--port", "0", "--db", str(tmp_path / "x.db"), "--events-config", str(events))
    assert bad.returncode == 1 and f"{events}:4:15: areas.a1.encoding:" in bad.stderr, bad.stderr
    for result in (busy, missing, not_a_file, bad):
        assert "Traceback" not in result.stderr + result.stdout
