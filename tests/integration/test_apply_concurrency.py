"""Two `apimctl apply` runs at once against one area: the lease on the area (the role
``apimctl-apply-lease``) lets one write at a time, so nothing is ever created twice. The second
run is refused at once naming the holder, or, with ``--lock-timeout``, waits and then finds
nothing left to do. A lease left by a killed run is broken with ``apimctl unlock`` or taken
over once expired; ``--no-lock`` takes none.

Real `python -m apimctl` processes against a reference server on 127.0.0.1: one per dialect
(``apimctl serve`` and ``apimctl serve --dialect mashery``, the ``dialect`` fixture), each test
in areas of its own. The repeated trials of a race run at once, each pair in its own area.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from apimctl.kinds.role import LEASE_NAME

from .apply_support import (
    Runs,
    Server,
    apimctl_env,
    apply_summary,
    expected_objects,
    inventory,
    server,
    write_manifest,
)

TRIALS = 5
REFUSED = "another apply holds this area's lease"
Outcome = tuple[int, str, str]  # exit code, stdout, stderr


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, dialect_options: tuple[str, ...]) -> Iterator[Server]:
    """One server for the module per dialect; every trial and test works in an area of its own."""
    # an area per race of the four race tests, and one per other test
    with server(tmp_path_factory.mktemp("concurrency"), *dialect_options, areas=4 * TRIALS + 5) as srv:
        yield srv


@pytest.fixture
def area(shared: Server) -> tuple[Server, str]:
    return shared, shared.fresh_token()


def other_manifest(folder: Path) -> Path:
    """A manifest of other objects that shares the domain with :func:`write_manifest`."""
    write_manifest(folder, services=1)
    text = (folder / "main.yaml").read_text()
    for old, new in (("Svc", "Oth"), ("/s", "/o"), ("Partners", "Allies"), ("Upgrade", "Patch")):
        text = text.replace(old, new)
    (folder / "main.yaml").write_text(text)
    return folder


def other_objects() -> set[str]:
    swap = {"Svc": "Oth", "Partners": "Allies", "Upgrade": "Patch"}
    out = set()
    for name in expected_objects(1):
        for old, new in swap.items():
            name = name.replace(old, new)
        out.add(name)
    return out


def duplicates(found: Counter[str]) -> dict[str, int]:
    return {k: n for k, n in found.items() if n > 1}


def start(srv: Server, token: str, folder: Path, *extra: str) -> subprocess.Popen[str]:
    # --qps 10: each apply takes a few seconds, so the two overlap
    return subprocess.Popen(
        [sys.executable, "-m", "apimctl", "apply", "--auto-approve", "--qps", "10", *extra, str(folder)],
        env=apimctl_env(srv, token), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)


def finish(proc: subprocess.Popen[str]) -> Outcome:
    stdout, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr, stderr
    return proc.returncode, stdout, stderr


def trials(srv: Server, first: Path, second: Path, *extra: str) -> list[tuple[str, list[Outcome]]]:
    """``TRIALS`` races of two applies (``first`` and ``second``) at once on one area; the
    races run side by side, each in a fresh area. Per race: its area's token, the outcomes."""
    races = []
    try:
        for _ in range(TRIALS):
            token = srv.fresh_token()
            races.append((token, [start(srv, token, first, *extra), start(srv, token, second, *extra)]))
        return [(token, [finish(proc) for proc in procs]) for token, procs in races]
    finally:  # a failed race leaves none of the others running
        for _, procs in races:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


def lease_roles(srv: Server, token: str) -> list[dict[str, object]]:
    return [r for r in srv.get("/roles", {"limit": "1000"}, token) if r["name"] == LEASE_NAME]


def assert_refused(stderr: str) -> None:
    assert REFUSED in stderr and "apimctl unlock" in stderr, stderr
    assert re.search(r"\S+@\S+, run \w+, started \d{4}-\d\d-\d\dT", stderr), stderr  # user@host, run, start


@pytest.mark.slow
def test_two_applies_of_the_same_manifests_never_duplicate(shared: Server, tmp_path: Path) -> None:
    srv = shared
    folder = write_manifest(tmp_path / "m", services=1)
    refused = 0
    for token, runs in trials(srv, folder, folder):
        codes = sorted(code for code, _, _ in runs)
        assert codes in ([0, 0], [0, 1]), runs
        for code, _, stderr in runs:
            if code == 1:
                assert_refused(stderr)
                refused += 1
        found = inventory(srv, token)
        assert not duplicates(found), found
        assert set(found) == expected_objects(1)
        assert lease_roles(srv, token) == []  # released
    assert refused >= 1  # the runs did overlap


@pytest.mark.slow
def test_two_applies_of_different_manifests_never_duplicate(shared: Server, tmp_path: Path) -> None:
    srv = shared
    ours, theirs = write_manifest(tmp_path / "a", services=1), other_manifest(tmp_path / "b")
    for token, ((code_a, _, err_a), (code_b, _, err_b)) in trials(srv, ours, theirs):
        assert sorted([code_a, code_b]) in ([0, 0], [0, 1]), (err_a, err_b)
        found = inventory(srv, token)
        assert not duplicates(found), found
        want = (expected_objects(1) if code_a == 0 else set()) | (other_objects() if code_b == 0 else set())
        assert set(found) == want
        for code, err in ((code_a, err_a), (code_b, err_b)):
            if code == 1:
                assert_refused(err)


@pytest.mark.slow
@pytest.mark.parametrize("same", [True, False], ids=["same", "different"])
def test_with_a_lock_timeout_the_second_apply_waits_and_both_succeed(shared: Server, tmp_path: Path,
                                                                    same: bool) -> None:
    srv = shared
    ours = write_manifest(tmp_path / "a", services=1)
    theirs = ours if same else other_manifest(tmp_path / "b")
    for token, runs in trials(srv, ours, theirs, "--lock-timeout", "60"):
        assert [code for code, _, _ in runs] == [0, 0], runs
        found = inventory(srv, token)
        assert not duplicates(found), found
        assert set(found) == expected_objects(1) | (set() if same else other_objects())
        assert lease_roles(srv, token) == []


def test_a_waiting_apply_says_so_and_finds_nothing_left_to_do(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m", services=1)
    posts = role_posts(srv)
    hold_lease(srv, tok, expires=time.time() + 600)
    proc = start(srv, tok, folder, "--lock-timeout", "60", "--format", "json")
    deadline = time.monotonic() + 60
    while role_posts(srv) < posts + 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # until it planned and asked for the lease (refused: ours is held)
    # meanwhile "the other apply" does the work and releases its lease
    assert Runs().run(srv, "apply", "--auto-approve", "--no-lock", str(folder), token=tok).returncode == 0
    for role in lease_roles(srv, tok):
        httpx.delete(f"{srv.url}/roles/{role['id']}", headers={"Authorization": f"Bearer {tok}"})
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "waiting up to 60s for the apply lease held by ci@runner-7" in stderr
    assert apply_summary(stdout)["summary"]["done"] == 0  # planned again under the lease: nothing left
    assert not duplicates(inventory(srv, tok))


def role_posts(srv: Server) -> int:
    """POSTs on ``/roles`` the server has seen (every area's)."""
    return sum(c["count"] for c in srv.calls()["calls"] if c["method"] == "POST" and c["path"].endswith("/roles"))


def hold_lease(srv: Server, token: str, *, expires: float, run_id: str = "deadbeef0001") -> str:
    """A lease role as another run would have written it; its description."""
    holder = {"user": "ci", "host": "runner-7", "started": "2026-01-01T00:00:00Z", "run_id": run_id,
              "expires": expires}
    text = "apimctl apply lease " + json.dumps(holder, sort_keys=True)
    reply = httpx.post(f"{srv.url}/roles", json={"name": LEASE_NAME, "description": text}, timeout=5,
                       headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.text
    return text


def test_no_lock_ignores_the_lease_and_writes_only_the_plan(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m", services=1)
    hold_lease(srv, tok, expires=time.time() + 600)
    runs = Runs()
    refused = runs.run(srv, "apply", "--auto-approve", str(folder), token=tok)
    assert refused.returncode == 1
    assert_refused(refused.stderr)
    assert "ci@runner-7, run deadbeef0001" in refused.stderr
    assert "apimctl unlock deadbeef0001" in refused.stderr
    writes = srv.writes()
    done = runs.run(srv, "apply", "--auto-approve", "--no-lock", "--format", "json", str(folder), token=tok)
    assert done.returncode == 0, done.stderr
    assert srv.writes() - writes == apply_summary(done.stdout)["calls"]["writes"]  # no lease calls
    assert len(lease_roles(srv, tok)) == 1  # the other run's lease is untouched


def test_an_expired_lease_is_taken_over(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m", services=1)
    hold_lease(srv, tok, expires=time.time() - 5)
    proc = Runs().run(srv, "apply", "--auto-approve", str(folder), token=tok)
    assert proc.returncode == 0, proc.stderr
    assert "taking over a stale apply lease (ci@runner-7, run deadbeef0001" in proc.stderr
    assert lease_roles(srv, tok) == [] and not duplicates(inventory(srv, tok))


def test_unlock_breaks_the_lease_of_a_killed_apply(area: tuple[Server, str], tmp_path: Path) -> None:
    srv, tok = area
    folder = write_manifest(tmp_path / "m", services=3)
    writes = srv.writes()
    proc = start(srv, tok, folder, "--qps", "2", "--parallelism", "1")  # slow: killed half-way
    deadline = time.monotonic() + 60
    while srv.writes() < writes + 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the lease and two writes of the plan
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert len(lease_roles(srv, tok)) == 1  # left behind
    runs = Runs()
    refused = runs.run(srv, "apply", "--auto-approve", str(folder), token=tok)
    assert refused.returncode == 1
    assert_refused(refused.stderr)
    run_id = re.search(r"apimctl unlock (\w+)", refused.stderr).group(1)  # type: ignore[union-attr]
    no_tty = runs.run(srv, "unlock", token=tok)
    assert no_tty.returncode == 1 and "--force" in no_tty.stderr
    wrong = runs.run(srv, "unlock", "nope", token=tok)
    assert wrong.returncode == 1 and run_id in wrong.stderr and len(lease_roles(srv, tok)) == 1
    broken = runs.run(srv, "unlock", run_id, token=tok)
    assert broken.returncode == 0, broken.stderr
    assert f"run {run_id}" in broken.stdout and "Broke the apply lease held by" in broken.stdout
    assert lease_roles(srv, tok) == []
    again = runs.run(srv, "unlock", "--force", token=tok)
    assert again.returncode == 0 and "No apply lease is held" in again.stdout
    final = runs.run(srv, "apply", "--auto-approve", str(folder), token=tok)
    assert final.returncode == 0, final.stdout + final.stderr
    found = inventory(srv, tok)
    assert not duplicates(found) and set(found) == expected_objects(3)
    assert runs.run(srv, "plan", "--detailed-exitcode", str(folder), token=tok).returncode == 0


def test_unlock_force_breaks_whatever_lease_is_held(area: tuple[Server, str]) -> None:
    srv, tok = area
    hold_lease(srv, tok, expires=time.time() + 600)
    proc = Runs().run(srv, "unlock", "--force", token=tok)
    assert proc.returncode == 0 and "ci@runner-7, run deadbeef0001" in proc.stdout
    assert lease_roles(srv, tok) == []


def test_the_gitops_apply_workflow_is_serialised_per_area() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2] / "examples" / "gitops" / ".github" / "workflows"
    text = (root / "apimctl-apply.yml").read_text()
    doc = yaml.safe_load(text)
    assert doc["concurrency"]["group"].startswith("apimctl-apply-${{")
    assert doc["concurrency"]["cancel-in-progress"] is False
    steps = [f"{s.get('run', '')} {s.get('with', {}).get('args', '')}" for s in doc["jobs"]["apply"]["steps"]]
    assert any("--lock-timeout" in step for step in steps)
