"""The journal of every apply, `apimctl runs`, `apimctl rollback` and `apply --resume`,
against the real reference server in both dialects.

An apply journals its run (the plan, each unit's start and end, the ids it created) with no
secret value in it; `rollback` of that run plans the inverse, refuses when something changed
the area since, and once applied leaves an export byte-identical to the one taken before the
run; a run stopped by the daily quota is resumed (with a token whose quota is left) to the
same area as an uninterrupted apply, without a duplicate. Bad input is refused with exit 1.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from apimctl import kinds
from apimctl.applying import journal
from apimctl.applying.lease import LEASE_NAME

from .apply_support import (
    AREA,
    SECRET_VALUES,
    TOKEN,
    TOKEN_B,
    Runs,
    Server,
    expected_objects,
    inventory,
    killed_run,
    server,
    write_manifest,
)

pytestmark = pytest.mark.slow  # every test runs a server


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, dialect_options: tuple[str, ...]) -> Iterator[Server]:
    """One server per dialect for the module; each test takes an area of its own."""
    with server(tmp_path_factory.mktemp("journal"), *dialect_options, areas=2) as running:
        yield running


@pytest.fixture(scope="module")
def spec_srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server of the ``spec`` dialect for the tests that need only one."""
    with server(tmp_path_factory.mktemp("journal-spec"), areas=4) as running:
        yield running


def killed_apply(srv: Server, token: str, folder: Path, path: Path, writes: int, *options: str) -> None:
    """`apply` killed with SIGKILL once the server has seen ``writes`` more writes."""
    killed_run(srv, token, ["apply", "--auto-approve", "--qps", "20", *options, "--journal", str(path), str(folder)],
               writes)


def export(runs: Runs, srv: Server, token: str) -> str:
    done = runs.run(srv, "export", token=token)
    assert done.returncode == 0, done.stderr
    return done.stdout


ALERTS_1 = """      - name: Alerts
        requestPathAlias: /s1/alerts
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.com]
"""


def changed_manifest(folder: Path, services: int = 3) -> Path:
    """The manifest of :func:`write_manifest` with one more service (which the plan Silver
    now uses instead of the last), another CORS max age, without the endpoint Svc1/Alerts
    and the maintenance event (deleted with --prune): creates, updates and deletes."""
    write_manifest(folder, services=services)
    main = folder / "main.yaml"
    text = main.read_text().replace("maxAge: 60", "maxAge: 90").replace(ALERTS_1, "")
    main.write_text(text[:text.index("scheduledMaintenanceEvents:")])
    return folder


def run_id_of(path: Path) -> str:
    return str(json.loads(path.read_text().splitlines()[0])["run_id"])


def test_journal_runs_and_rollback_of_a_complete_run(srv: Server, tmp_path: Path) -> None:
    token = srv.fresh_token()
    runs = Runs()
    first = runs.run(srv, "apply", "--auto-approve", "--journal", str(tmp_path / "runs" / "one.jsonl"),
                     str(write_manifest(tmp_path / "m", services=2)), token=token)
    assert first.returncode == 0, first.stderr
    before = export(runs, srv, token)
    path = tmp_path / "runs" / "two.jsonl"
    second = runs.run(srv, "apply", "--auto-approve", "--prune", "--journal", str(path),
                      str(changed_manifest(tmp_path / "m")), token=token)
    assert second.returncode == 0, second.stderr
    run_id = run_id_of(path)
    assert f"Run {run_id}: journal {path}" in second.stderr

    # the journal: every step done, the ids of what it created, and no secret value
    run = journal.load(path, run_id=run_id)
    assert run.complete and run.area == srv.url
    assert run.done == {s.address for s in run.plan.steps}
    assert set(run.created) == {"service:Svc2", "errorSet:Svc2/JSON errors",
                                "endpoint:Svc2/Forecast", "endpoint:Svc2/Alerts"}
    text = path.read_text()
    for value in SECRET_VALUES.values():
        assert value not in text
    listed = runs.run(srv, "runs", "--dir", str(path.parent), token=token)
    assert listed.returncode == 0
    assert f"{run_id}  {srv.url}  9/9 done, 0 failed, 0 not done  complete" in listed.stdout

    # someone changes an object the run wrote: refused, naming it, nothing written
    ep = srv.get("/services", {"fields": "id,name,endpoints.id,endpoints.name", "limit": "100"}, token)
    svc1 = next(s for s in ep if s["name"] == "Svc1")
    forecast = next(e for e in svc1["endpoints"] if e["name"] == "Forecast")
    srv.put(f"/services/{svc1['id']}/endpoints/{forecast['id']}", {"requestPathAlias": "/moved"}, token)
    writes = srv.writes()
    refused = runs.run(srv, "rollback", run_id, "--journal", str(path), "--out", str(tmp_path / "rb.json"),
                       token=token)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "endpoint:Svc1/Forecast: changed since the run" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "rb.json").exists()
    assert srv.writes() == writes
    srv.put(f"/services/{svc1['id']}/endpoints/{forecast['id']}", {"requestPathAlias": "/s1/forecast"}, token)

    # nothing else changed the area: the rollback restores the export byte for byte
    planned = runs.run(srv, "rollback", run_id, "--journal", str(path), "--out", str(tmp_path / "rb.json"),
                       token=token)
    assert planned.returncode == 0, planned.stderr
    assert 'delete service "Svc2"' in planned.stdout and "cors.maxAge: 90 -> 60" in planned.stdout
    assert 'create endpoint "Svc1/Alerts"' in planned.stdout
    assert 'create maintenanceEvent "Upgrade"' in planned.stdout
    assert "recreated with a new id" in planned.stderr
    applied = runs.run(srv, "apply", "--auto-approve", "--plan", str(tmp_path / "rb.json"), token=token)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert export(runs, srv, token) == before
    runs.assert_no_secrets(*path.parent.glob("*.jsonl"))


def test_resume_after_the_daily_quota_stops_a_run(tmp_path: Path, dialect_options: tuple[str, ...]) -> None:
    """A run stopped by the quota says how to continue; the resume (another token of the
    area, whose quota is left) plans only what the run left undone and converges with no
    duplicate: the same area as an uninterrupted apply."""
    folder = write_manifest(tmp_path / "m", services=10)  # 14 units: 14 writes
    reads = len(kinds.TOP_LEVEL) + 1  # planning an empty area, and the dialect probe
    path = tmp_path / "stopped.jsonl"
    # the run stops after about 10 writes; the resume (its reads, 4 writes and the
    # convergence check) fits in the other token's quota
    checker = "apply-token-c"  # a third token of the area, to look at it afterwards
    with server(tmp_path, *dialect_options, "--daily-quota", str(reads + 10), "--token",
                f"{checker}={AREA}") as srv:
        runs = Runs()
        stopped = runs.run(srv, "apply", "--auto-approve", "--no-lock", "--journal", str(path), str(folder))
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        run_id = run_id_of(path)
        assert f"apimctl apply --resume {run_id} --auto-approve --journal {path}" in stopped.stderr
        run = journal.load(path)
        assert run.complete and run.done and len(run.done) < len(run.plan.steps)
        listed = runs.run(srv, "runs", "--dir", str(tmp_path))
        assert "not done" in listed.stdout and run_id in listed.stdout
        resumed = runs.run(srv, "apply", "--auto-approve", "--no-lock", "--resume", run_id,
                           "--journal", str(path), token=TOKEN_B)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        found = inventory(srv, checker)
        assert {k: n for k, n in found.items() if n > 1} == {}
        assert set(found) == expected_objects(10)
        again = runs.run(srv, "plan", str(folder), token=checker)
        assert "No changes" in again.stdout, again.stdout
        runs.assert_no_secrets(path)


class Spender(threading.Thread):
    """Another user of the key: once the apply has written ``after`` times, spends the key's
    daily quota down to ``left`` calls (reading what is left off the quota headers)."""

    def __init__(self, srv: Server, after: int, left: int) -> None:
        super().__init__(daemon=True)
        self.srv, self.after, self.left, self.spent = srv, after, left, 0
        self.start_writes = srv.writes()

    def run(self) -> None:
        with httpx.Client(timeout=5) as http:
            while self.srv.writes() < self.start_writes + self.after:
                pass
            while True:
                reply = http.get(f"{self.srv.url}/roles", params={"fields": "id"},
                                 headers={"Authorization": f"Bearer {TOKEN}"})
                allotted = int(reply.headers.get("X-Packagekey-Quota-Allotted", "0"))
                current = int(reply.headers.get("X-Packagekey-Quota-Current", allotted))
                self.spent += 1
                if reply.status_code != 200 or allotted - current <= self.left:
                    return


def test_a_run_stopped_by_the_daily_quota_releases_its_lease(tmp_path: Path,
                                                             dialect_options: tuple[str, ...]) -> None:
    """The key's quota runs out in the middle of a run (another user of the key spends it): the
    run stops as on ERR_403_DEVELOPER_OVER_RATE, with the call that releases its lease kept
    (the quota headers tell what is left), prints the line that resumes it, and another apply
    (another key of the area) takes the lease at once."""
    folder = write_manifest(tmp_path / "m", services=10)  # 14 units
    path = tmp_path / "stopped.jsonl"
    # the apply's budget is about 30 calls: it fits, and so does the other apply's
    with server(tmp_path, *dialect_options, "--daily-quota", "45", "--quota-headers") as srv:
        runs = Runs()
        spender = Spender(srv, after=3, left=4)  # the lease and two units, then 4 calls left
        spender.start()
        stopped = runs.run(srv, "apply", "--auto-approve", "--qps", "8", "--parallelism", "1",
                           "--journal", str(path), str(folder))
        spender.join(10)
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        assert "ERR_403_DEVELOPER_OVER_RATE" in stopped.stdout and "releasing the apply lease" in stopped.stdout
        assert "could not release" not in stopped.stderr
        run_id = run_id_of(path)
        assert f"apimctl apply --resume {run_id} --auto-approve --journal {path}" in stopped.stderr
        assert [r for r in srv.get("/roles", {"fields": "id,name"}, TOKEN_B) if r["name"] == LEASE_NAME] == []
        other = runs.run(srv, "apply", "--auto-approve", "--lock-timeout", "0", str(folder), token=TOKEN_B)
        assert other.returncode == 0, other.stdout + other.stderr
        assert "took over" not in other.stderr and "stale" not in other.stderr
        assert {k: n for k, n in inventory(srv, TOKEN_B).items() if n > 1} == {}


def test_bad_journals_and_resumes_are_refused(spec_srv: Server, tmp_path: Path) -> None:
    srv, token = spec_srv, spec_srv.fresh_token()
    runs = Runs()
    folder = write_manifest(tmp_path / "m", services=1)
    path = tmp_path / "ok.jsonl"
    assert runs.run(srv, "apply", "--auto-approve", "--journal", str(path), str(folder),
                    token=token).returncode == 0
    run_id = run_id_of(path)
    writes = srv.writes()

    unknown = runs.run(srv, "rollback", "nosuchrun", "--journal", str(tmp_path / "none.jsonl"), token=token)
    assert unknown.returncode == 1 and "unknown run 'nosuchrun'" in unknown.stderr
    truncated = tmp_path / "cut.jsonl"
    truncated.write_text(path.read_text()[:-7])
    cut = runs.run(srv, "rollback", run_id, "--journal", str(truncated), token=token)
    assert cut.returncode == 1 and "truncated" in cut.stderr
    other = runs.run(srv, "rollback", run_id, "--journal", str(path), env={"APIMCTL_URL": srv.url + "/x"},
                     token=token)
    assert other.returncode == 1 and "of the area" in other.stderr
    # a run killed before its last unit ended, whose manifests changed since: the resume
    # is refused
    crashed = tmp_path / "crashed.jsonl"
    crashed.write_text("".join(path.read_text().splitlines(keepends=True)[:-2]))
    assert not journal.load(crashed).complete
    (folder / "main.yaml").write_text((folder / "main.yaml").read_text().replace("maxAge: 60", "maxAge: 5"))
    changed = runs.run(srv, "apply", "--auto-approve", "--resume", run_id, "--journal", str(crashed),
                       token=token)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "plan no longer matches" in changed.stderr and "update endpoint:Svc0/Forecast" in changed.stderr
    for done in (unknown, cut, other, changed):
        assert "Traceback" not in done.stderr
    assert srv.writes() == writes


def budget_of(text: str) -> tuple[int, int]:
    """The calls and the writes of the ``Budget:`` line of a plan."""
    line = next(x for x in text.splitlines() if x.startswith("Budget: "))
    match = re.match(r"Budget: (\d+) calls \(\d+ reads, 4 lease, (\d+) writes, \d+ checks\)", line)
    assert match, line
    return int(match.group(1)), int(match.group(2))


def test_the_budget_of_a_plan_and_the_daily_quota(spec_srv: Server, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`plan` states the calls applying it makes, as apply then makes them; an apply that
    cannot fit in what is left of the daily quota (--daily-quota, or a profile's daily_quota,
    less what today's journaled runs made) is refused before its first write, saying when it
    would fit."""
    folder = write_manifest(tmp_path / "m", services=2)
    monkeypatch.chdir(tmp_path)  # the profile and today's journals are found here
    srv, token = spec_srv, spec_srv.fresh_token()
    runs = Runs()
    start = srv.writes()
    planned = runs.run(srv, "plan", "--qps", "4", str(folder), token=token)
    assert planned.returncode == 0, planned.stderr
    total, writes = budget_of(planned.stdout)  # in the plan itself, under its totals
    assert f"about {total / 4:.0f} s at --qps 4." in planned.stdout
    document = json.loads(runs.run(srv, "plan", "--qps", "4", "--format", "json", str(folder), token=token).stdout)
    assert document["budget"]["calls"] == total and document["budget"]["writes"] == writes
    assert document["budget"]["qps"] == 4 and document["budget"]["seconds"] == round(total / 4, 1)

    (tmp_path / "apimctl.toml").write_text('[default]\nprofile = "small"\n\n[profiles.small]\ndaily_quota = 3\n')
    whole = runs.run(srv, "apply", "--auto-approve", str(folder), token=token)
    assert whole.returncode == 1, whole.stdout + whole.stderr
    assert "more than a whole day's quota of 3 calls" in whole.stderr
    assert srv.writes() == start  # nothing was written, not even the lease

    done = runs.run(srv, "apply", "--auto-approve", "--daily-quota", "1000", str(folder), token=token)
    assert done.returncode == 0, done.stderr
    assert srv.writes() == start + writes + 2  # as planned, and the lease: created, then deleted

    changed = changed_manifest(folder)
    again = runs.run(srv, "plan", str(changed), token=token)
    needed, _ = budget_of(again.stdout)
    later = runs.run(srv, "apply", "--auto-approve", "--daily-quota", str(needed + 5), str(changed),
                     token=token)
    assert later.returncode == 1, later.stdout + later.stderr
    assert "today's runs made" in later.stderr and "it would fit after the quota resets at" in later.stderr
    assert srv.writes() == start + writes + 2


def test_rollback_of_a_run_killed_midway(spec_srv: Server, tmp_path: Path) -> None:
    """A run killed with SIGKILL leaves a journal without its end; its rollback undoes what it
    wrote, the unit it was writing when killed included, back to the export taken before."""
    srv, token = spec_srv, spec_srv.fresh_token()
    runs = Runs()
    assert runs.run(srv, "apply", "--auto-approve", str(write_manifest(tmp_path / "m0", services=1)),
                    token=token).returncode == 0
    before = export(runs, srv, token)
    path = tmp_path / "killed.jsonl"
    killed_apply(srv, token, changed_manifest(tmp_path / "m", services=3), path, 2,
                 "--parallelism", "2", "--no-lock")
    run = journal.load(path)
    assert not run.complete and run.done, "killed after it wrote something"
    listed = runs.run(srv, "runs", "--dir", str(tmp_path), token=token)
    assert "INCOMPLETE" in listed.stdout
    planned = runs.run(srv, "rollback", run.run_id, "--journal", str(path), "--out", str(tmp_path / "rb.json"),
                       token=token)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "did not finish" in planned.stderr
    applied = runs.run(srv, "apply", "--auto-approve", "--plan", str(tmp_path / "rb.json"), token=token)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert export(runs, srv, token) == before


def test_resume_of_a_killed_run_takes_over_its_lease(spec_srv: Server, tmp_path: Path) -> None:
    """A run killed with SIGKILL leaves its lease behind; its resume takes it over (it is its
    own run's) and completes the plan without a duplicate."""
    srv, token = spec_srv, spec_srv.fresh_token()
    folder = write_manifest(tmp_path / "m", services=2)
    path = tmp_path / "killed.jsonl"
    killed_apply(srv, token, folder, path, 3, "--parallelism", "1")  # the lease and two units
    run = journal.load(path)
    assert not run.complete and len(run.done) < len(run.plan.steps)
    runs = Runs()
    resumed = runs.run(srv, "apply", "--auto-approve", "--resume", run.run_id, "--journal", str(path), token=token)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"took over the apply lease run {run.run_id} left" in resumed.stderr
    found = inventory(srv, token)
    assert {k: n for k, n in found.items() if n > 1} == {}
    assert set(found) == expected_objects(2)
