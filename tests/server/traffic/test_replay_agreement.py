"""Replay's decision for the area as it is equals what ``serve --traffic-port`` answered, call
by call, in both dialects: the calls are sent over real sockets, written down in the
platform's call-log shape, and replayed against the area read through the management API."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl.api.client import ApiClient
from apimctl.replay.config import read_documents
from apimctl.replay.decide import Side, keyed
from apimctl.replay.records import Record, read
from apimctl.server.dialects import dialect_of
from apimctl.server.traffic.area import area_of

from .served import FIRST, HOST, OPERATOR, Served, _one, endpoint, serve

# (method, path with query, key, https, extra headers)
CALLS: list[tuple[str, str, str, bool]] = [
    ("GET", "/v2/forecast", "all", False),
    ("GET", "/v2/forecast", "basic", False),  # not entitled
    ("GET", "/v2/forecast", "", False),  # no key
    ("GET", "/v2/forecast", "unknown-key-0123456789", False),
    ("GET", "/other/x?a=1", "basic", True),
    ("GET", "/p", "", False),  # allowMissingApiKey
    ("GET", "/nowhere", "all", False),  # 596
    ("POST", "/other", "all", False),  # 405
    ("GET", "/pk/{key}/more", "basic", False),  # key in the path
    ("GET", "/jsonp?callback=cb", "basic", False),  # error set with jsonp
    ("GET", "/v2/forecast/../other", "all", False),  # normalised path
]


@pytest.fixture(scope="module", params=("spec", "mashery"))
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(Path(tmp_path_factory.mktemp("replay")), request.param) as running:
        yield running


def _record(method: str, path: str, key: str, https: bool, status: int, when: float) -> dict[str, Any]:
    return {"request_time": datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "request_host_name": HOST, "http_method": method, "uri": path, "api_key": key or "",
            "ssl_enabled": "1" if https else "0", "http_status_code": str(status),
            "traffic_manager_error_code": "-", "oauth_access_token": "-"}


def _send(served: Served, method: str, path: str, key: str, https: bool) -> int:
    """The call over the traffic listener, its key where the endpoint reads it."""
    headers = {"Host": HOST, "X-Forwarded-Proto": "https" if https else "http"}
    if "{key}" not in path and key and not path.startswith("/nowhere"):
        path += ("&" if "?" in path else "?") + f"api_key={key}"
    url = f"http://127.0.0.1:{served.traffic_port}{path.replace('{key}', key)}"
    return httpx.request(method, url, headers=headers, timeout=10).status_code


async def _docs(served: Served) -> dict[str, list[dict[str, Any]]]:
    async with ApiClient(f"{served.api}/v3/rest", token=FIRST, qps=None) as client:
        return await read_documents(client)


def test_replay_decides_as_the_emulator_answered(served: Served, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    answered: list[int] = []
    with log.open("w") as out:
        for method, path, name, https in CALLS:
            key = served.keys.get(name, name)
            when = time.time()
            status = _send(served, method, path, key, https)
            answered.append(status)
            shown = path.replace("{key}", key)
            # the platform blanks key values in the query; the key is its own field
            out.write(json.dumps(_record(method, shown, key, https, status, when)) + "\n")
    docs = asyncio.run(_docs(served))
    side = Side([area_of("first", docs)], dialect_of(served.dialect))
    records = [r for r in read(str(log)) if isinstance(r, Record)]
    assert len(records) == len(CALLS)
    decided = [side.decide(keyed(side.areas, r), r.status).status for r in records]
    assert decided == answered
    # the calls the emulator refused are refused by replay too (not just recorded statuses echoed)
    assert {403, 596, 405} <= set(decided)
    # the emulator's own log, exported in the call-log shape, replays to the same answers
    exported = httpx.get(f"{served.api}/operator/traffic", params={"format": "calllog"},
                         headers={"Authorization": f"Bearer {OPERATOR}"})
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("application/x-ndjson")
    (tmp_path / "exported.jsonl").write_text(exported.text)
    again = Side([area_of("first", docs)], dialect_of(served.dialect))
    recorded = [r for r in read(str(tmp_path / "exported.jsonl")) if isinstance(r, Record)][-len(CALLS):]
    assert [r.status for r in recorded] == answered
    assert [again.decide(keyed(again.areas, r), r.status).status for r in recorded] == answered
    assert all(json.loads(line)["api_key"] in ("", *served.keys.values(), "unknown-key-0123456789")
               for line in exported.text.splitlines())
    # the key found is blanked in the query, as the platform logs it
    lines = [json.loads(line) for line in exported.text.splitlines()]
    assert all(line["api_key"] not in line["uri"] for line in lines if line["api_key"] and "/pk/" not in line["uri"])
    assert any("api_key=&" in line["uri"] or line["uri"].endswith("api_key=") for line in lines)


MANIFEST = """
services:
  - name: Weather
packages:
  - name: P
    plans:
      - name: All
        services: [{name: Weather, endpoints: [Forecast, Other, Open, Path Key, Jsonp]}]
      - name: Basic
        services: [{name: Weather, endpoints: [Open, Path Key]}]
"""


def test_plan_replay_blames_the_plan_change(served: Served, tmp_path: Path) -> None:
    if served.dialect != "spec":
        pytest.skip("the CLI's handling is one for both dialects (the agreement test covers both)")
    from click.testing import CliRunner

    from apimctl.cli import cli

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "packages.yaml").write_text(MANIFEST)
    log = tmp_path / "calls.jsonl"
    now = time.time()
    lines = [_record("GET", "/other/x", served.keys["basic"], False, 200, now + i) for i in range(3)]
    lines.append(_record("GET", "/other/x", served.keys["all"], False, 200, now))  # unchanged
    lines.append(_record("GET", "/other/x", "unknown-key-0123456789", False, 403, now))
    lines.append(_record("GET", "/gone", served.keys["all"], False, 596, now))
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    result = CliRunner().invoke(cli, ["plan", str(tmp_path / "m"), "--url", served.api, "--token", FIRST,
                                       "--replay", str(log), "--no-color"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "plan:P/Basic: 3 call(s), 1 key(s), 1 application(s): 200 → 403 ERR_403_NOT_AUTHORIZED" in out
    assert "(decided by entitlement)" in out
    assert "1 call(s) with a key the area does not know" in out
    assert "1 call(s) no endpoint matched" in out
    assert f"{log}:7: not JSON" in out
    assert served.keys["basic"] not in out and "…6789" in out
    # the same in the plan JSON (schema-checked) and as a warning of the Markdown comment
    import jsonschema

    shown = CliRunner().invoke(cli, ["plan", str(tmp_path / "m"), "--url", served.api, "--token", FIRST,
                                     "--replay", str(log), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    jsonschema.validate(doc, json.loads((Path(__file__).parents[3] / "schemas" / "plan.schema.json").read_text()))
    assert doc["replay"]["groups"] == [{
        "change": "plan:P/Basic", "before": "200", "after": "403 ERR_403_NOT_AUTHORIZED", "step": "entitlement",
        "calls": 3, "keys": 1, "applications": 1, "examples": ["GET /other/x (key …6789)"]}]
    assert (doc["replay"]["unknownKeys"], doc["replay"]["unmatched"], doc["replay"]["badRecords"]) == (1, 1, 1)
    comment = CliRunner().invoke(cli, ["plan", str(tmp_path / "m"), "--url", served.api, "--token", FIRST,
                                       "--replay", str(log), "--format", "markdown"])
    assert "> [!WARNING]\n> Replayed 6 recorded calls: 3 would get another answer." in comment.stdout
    assert "`plan:P/Basic`: 3 calls, 1 key, 1 application: `200` → `403 ERR_403_NOT_AUTHORIZED`" in comment.stdout
    assert served.keys["basic"] not in comment.stdout + shown.stdout


def _plan_replay(served: Served, folder: Path, log: Path, *options: str) -> Any:
    from click.testing import CliRunner

    from apimctl.cli import cli

    result = CliRunner().invoke(cli, ["plan", str(folder), "--url", served.api, "--token", FIRST, "--replay", str(log),
                                      "--format", "json", *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_plan_replay_sees_the_plan_as_shown(served: Served, tmp_path: Path) -> None:
    """The planned side is the area as the plan shown would leave it: --prune's deletes count,
    a change outside --target is not made, an --ignore'd field keeps its live value."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "packages.yaml").write_text(MANIFEST)
    extra = _one(served.manage("POST", "/services", json={"name": "Extra"}))
    _one(served.manage("POST", f"/services/{extra['id']}/endpoints", json=endpoint(
        "Free", "/free", "127.0.0.1:9", allowMissingApiKey=True)))
    try:
        log = tmp_path / "calls.jsonl"
        now = time.time()
        lines = [_record("GET", "/other/x", served.keys["basic"], False, 200, now + i) for i in range(3)]
        lines.append(_record("GET", "/free/y", "", False, 200, now))
        log.write_text("".join(json.dumps(line) + "\n" for line in lines))
        pruned = _plan_replay(served, tmp_path / "m", log, "--prune")
        assert any(s["address"] == "service:Extra" and s["action"] == "delete" for s in pruned["steps"])
        gone = [g for g in pruned["replay"]["groups"] if g["change"] == "service:Extra"]
        assert [(g["after"], g["calls"], g["step"]) for g in gone] == [("596", 1, "route")]
        assert gone[0]["before"] != "596"
        assert pruned["replay"]["changed"] == 4
        # drift --prune reads the same delete backwards; apply --prune refuses on it before writing
        from click.testing import CliRunner

        from apimctl.cli import cli

        connect = ["--url", served.api, "--token", FIRST, "--replay", str(log), "--prune"]
        drifted = CliRunner().invoke(cli, ["drift", str(tmp_path / "m"), *connect, "--format", "json"])
        assert drifted.exception is None, drifted.output
        back = [g for g in json.loads(drifted.stdout)["replay"]["groups"] if g["change"] == "service:Extra"]
        assert [(g["before"], g["after"]) for g in back] == [("596", gone[0]["before"])]
        refused = CliRunner().invoke(cli, ["apply", str(tmp_path / "m"), *connect, "--max-changed-calls", "3",
                                           "--auto-approve"])
        assert "would change the answer of 4 recorded call(s)" in str(refused.exception)
        assert served.manage("GET", f"/services/{extra['id']}").status_code == 200  # nothing written
        # without --prune the unmanaged service stays, and its call's answer with it
        kept = _plan_replay(served, tmp_path / "m", log)
        assert kept["replay"]["changed"] == 3
        assert {g["change"] for g in kept["replay"]["groups"]} == {"plan:P/Basic"}
        # the plan's only change is outside the target: nothing is made, nothing replayed changes
        targeted = _plan_replay(served, tmp_path / "m", log, "--target", "service:Weather")
        assert targeted["steps"] == [] or all(s["action"] == "read" for s in targeted["steps"])
        assert (targeted["replay"]["calls"], targeted["replay"]["changed"]) == (4, 0)
        ignored = _plan_replay(served, tmp_path / "m", log, "--ignore", "plan:P/Basic:services")
        assert not any(s["address"] == "plan:P/Basic" for s in ignored["steps"])
        assert (ignored["replay"]["calls"], ignored["replay"]["changed"]) == (4, 0)
    finally:
        served.manage("DELETE", f"/services/{extra['id']}")


def test_drift_and_apply_replay(served: Served, tmp_path: Path) -> None:
    """drift --replay reads the drift backwards; apply --replay --max-changed-calls refuses
    before writing anything, and applies within the bound (last: it changes the area)."""
    if served.dialect != "spec":
        pytest.skip("the CLI's handling is one for both dialects (the agreement test covers both)")
    from click.testing import CliRunner

    from apimctl.cli import cli

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "packages.yaml").write_text(MANIFEST)
    log = tmp_path / "calls.jsonl"
    now = time.time()
    log.write_text("".join(json.dumps(_record("GET", "/other/x", served.keys["basic"], False, 200, now + i)) + "\n"
                           for i in range(3)))
    connect = ["--url", served.api, "--token", FIRST, "--replay", str(log)]
    drifted = CliRunner().invoke(cli, ["drift", str(tmp_path / "m"), *connect, "--no-color"])
    assert drifted.exception is None, drifted.output
    assert "plan:P/Basic: 3 call(s), 1 key(s), 1 application(s): 403 ERR_403_NOT_AUTHORIZED → 200" in drifted.output
    # in drift's JSON (stdout alone, stderr apart) and as a warning of its Markdown, as plan shows it
    shown = CliRunner().invoke(cli, ["drift", str(tmp_path / "m"), *connect, "--format", "json"])
    assert shown.exception is None, shown.output
    doc = json.loads(shown.stdout)
    assert doc["drift"] is True and "Replayed" not in shown.stderr
    assert doc["replay"]["groups"] == [{
        "change": "plan:P/Basic", "before": "403 ERR_403_NOT_AUTHORIZED", "after": "200", "step": "entitlement",
        "calls": 3, "keys": 1, "applications": 1, "examples": ["GET /other/x (key …6789)"]}]
    assert (doc["replay"]["calls"], doc["replay"]["changed"]) == (3, 3)
    plain = CliRunner().invoke(cli, ["drift", str(tmp_path / "m"), "--url", served.api, "--token", FIRST,
                                     "--format", "json"])
    assert "replay" not in json.loads(plain.stdout)
    comment = CliRunner().invoke(cli, ["drift", str(tmp_path / "m"), *connect, "--format", "markdown"])
    assert comment.exception is None, comment.output
    assert "> [!WARNING]\n> Replayed 3 recorded calls: 3 would get another answer." in comment.stdout
    assert "are not counted against the drift." in comment.stdout
    assert ("`plan:P/Basic`: 3 calls, 1 key, 1 application: `403 ERR_403_NOT_AUTHORIZED` → `200`"
            in comment.stdout)
    assert served.keys["basic"] not in shown.stdout + comment.stdout
    refused = CliRunner().invoke(cli, ["apply", str(tmp_path / "m"), *connect, "--max-changed-calls", "2",
                                       "--auto-approve"])
    assert refused.exit_code != 0
    assert "more than --max-changed-calls 2; nothing was written" in str(refused.exception)
    assert _basic_endpoints(served) == 3  # untouched
    done = CliRunner().invoke(cli, ["apply", str(tmp_path / "m"), *connect, "--max-changed-calls", "3",
                                    "--auto-approve"])
    assert done.exit_code == 0, done.output
    assert _basic_endpoints(served) == 2


def _basic_endpoints(served: Served) -> int:
    """How many endpoints the plan Basic entitles (read as replay reads the area)."""
    package = next(p for p in asyncio.run(_docs(served))["package"] if p["name"] == "P")
    basic = next(p for p in package["plans"] if p["name"] == "Basic")
    return sum(len(s.get("endpoints") or []) for s in basic.get("services") or [])


def test_replay_refuses_the_key_of_an_inactive_member(served: Served, tmp_path: Path) -> None:
    """A key whose member is no longer active is refused by replay as by the emulator (the
    member and its application are read through the management API with the keys)."""
    package = next(p for p in served.manage("GET", "/packages", params={"fields": "id,name,plans"}).json()
                   if p["name"] == "P")
    plan = next(p for p in package["plans"] if p["name"] == "All")
    value = f"gone-{served.dialect}-0123456789"
    member = _one(served.manage("POST", "/members", json={
        "username": "gone", "email": "gone@example.com", "displayName": "Gone", "externalId": "gone",
        "passwdNew": "pw-gone-1234567", "applications": [{"name": "G", "username": "gone", "packageKeys": [
            {"apikey": value, "package": {"id": package["id"]}, "plan": {"id": plan["id"]}}]}]}))
    try:
        _one(served.manage("PUT", f"/members/{member['id']}", json={"areaStatus": "disabled"}))
        log = tmp_path / "calls.jsonl"
        when = time.time()
        answered = _send(served, "GET", "/other", value, False)
        log.write_text(json.dumps(_record("GET", "/other", value, False, answered, when)) + "\n")
        exported = httpx.get(f"{served.api}/operator/traffic", params={"format": "calllog"},
                             headers={"Authorization": f"Bearer {OPERATOR}"})
        emulated = json.loads(exported.text.splitlines()[-1])
        assert (answered, emulated["traffic_manager_error_code"]) == (403, "ERR_403_DEVELOPER_INACTIVE")
        side = Side([area_of("first", asyncio.run(_docs(served)))], dialect_of(served.dialect))
        [record] = [r for r in read(str(log)) if isinstance(r, Record)]
        decided = side.decide(keyed(side.areas, record), record.status)
        assert (decided.status, decided.error, decided.step) == (403, "ERR_403_DEVELOPER_INACTIVE", "key")
        # the member made active again: the emulator forwards the call, replay lets it pass every gate
        _one(served.manage("PUT", f"/members/{member['id']}", json={"areaStatus": "active"}))
        assert _send(served, "GET", "/other", value, False) == 200
        again = Side([area_of("first", asyncio.run(_docs(served)))], dialect_of(served.dialect))
        passed = again.decide(keyed(again.areas, record), 200)
        assert (passed.status, passed.error, passed.step) == (200, "", "forward")
    finally:
        served.manage("DELETE", f"/members/{member['id']}")
