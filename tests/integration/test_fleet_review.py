"""``apimctl show --merge``: the plans of several areas, made against the reference server in
both dialects, as one pull-request comment: the table's counts are each plan's, the gates are
apply's, a plan too large for a comment is cut with a pointer to the artifacts, and no secret
is ever shown."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from apimctl.cli import cli
from apimctl.plans.file import load_plan
from apimctl.server import ServerConfig, create_app

from .inprocess import entry_point, uvicorn_in_thread

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = "fleet-review-s3cret-value"
TOKEN = "fleet-t0ken"
GITHUB_LIMIT = 65_536


def _cli(*args: str) -> None:
    done = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False)
    assert done.return_value in (0, 2), done.output


def _big_manifest(count: int) -> str:
    endpoints = "".join(
        f"      - name: Endpoint {i:04d} with a long descriptive name\n"
        f"        requestPathAlias: /v1/big/{i:04d}\n"
        "        trafficManagerDomain: api.example.org\n"
        "        publicDomains: [api.example.org]\n"
        "        systemDomains: [backend.example.org]\n"
        "        supportedHttpMethods: [get, post]\n"
        for i in range(count))
    return ("domains: [example.org]\nservices:\n  - name: Big\n    version: \"1\"\n"
            f"    endpoints:\n{endpoints}")


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Saved plans of four areas: ``dev`` (spec, weather to create), ``prod`` (mashery: weather
    and public-api applied, then weather alone planned with --prune: deletes), ``big`` (spec,
    400 endpoints to create) and ``quiet`` (mashery, no changes)."""
    folder = tmp_path_factory.mktemp("fleet")
    apps = {d: create_app(ServerConfig(db_path=str(folder / f"{d}.db"), tokens={TOKEN: "area-1"},
                                       dialect=d, auto_approve_domains=True))
            for d in ("spec", "mashery")}
    (folder / "big").mkdir()
    (folder / "big" / "big.yaml").write_text(_big_manifest(400))
    with pytest.MonkeyPatch.context() as mp, uvicorn_in_thread(apps["spec"]) as spec, \
            uvicorn_in_thread(apps["mashery"]) as mashery:
        mp.chdir(folder)
        mp.setenv("FORECAST_BACKEND_SECRET", SECRET)
        urls = {d: ("--url", f"http://127.0.0.1:{port}/v3/rest", "--token", TOKEN)
                for d, port in (("spec", spec), ("mashery", mashery))}
        weather, public = str(EXAMPLES / "weather"), str(EXAMPLES / "public-api")
        _cli("plan", weather, *urls["spec"], "--out", "dev.json")
        _cli("apply", weather, public, *urls["mashery"], "--auto-approve")
        _cli("plan", weather, *urls["mashery"], "--prune", "--out", "prod.json")
        _cli("plan", "big", *urls["spec"], "--out", "big.json")
        _cli("plan", weather, public, *urls["mashery"], "--out", "quiet.json")
    yield {name: folder / f"{name}.json" for name in ("dev", "prod", "big", "quiet")}


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> Callable[..., tuple[int, str, str]]:
    (tmp_path / ".git").mkdir()  # no apimctl.toml of this repository's is read
    monkeypatch.chdir(tmp_path)
    return entry_point(monkeypatch, capsys)


def _rows(comment: str) -> dict[str, list[str]]:
    rows = {}
    for line in comment.splitlines():
        match = re.match(r"\| \*\*(.+?)\*\* \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [c.strip() for c in match.group(2).split("|")]
    return rows


def test_the_table_counts_each_plan_and_the_folds_follow(plans: dict[str, Path],
                                                         run: Callable[..., tuple[int, str, str]]) -> None:
    code, out, err = run("show", "--merge", f"dev={plans['dev']}", f"prod={plans['prod']}",
                         str(plans["quiet"]), "--detailed-exitcode")
    assert code == 2, err
    rows = _rows(out)
    assert list(rows) == ["dev", "prod", "quiet"]
    for name, row in rows.items():
        counts = load_plan(str(plans[name])).summary()
        assert row[:4] == [str(counts[a]) for a in ("create", "update", "delete", "unmanaged")], (name, row)
    assert int(rows["prod"][2]) > 0 and rows["quiet"][:3] == ["0", "0", "0"]
    assert out.startswith("## apimctl plan: 3 areas\n")
    assert out.index("| **dev** |") < out.index("<details><summary>dev: ")
    assert out.index("<details><summary>dev: ") < out.index("<details><summary>prod: ") \
        < out.index("<details><summary>quiet: no changes</summary>")
    assert out.count("<details>") == out.count("</details>")
    assert "Some plans are cut" not in out
    assert SECRET not in out + err


def test_the_gates_of_the_declared_areas_refuse_first_in_apply_order(
        plans: dict[str, Path], run: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    (tmp_path / "apimctl.toml").write_text(
        '[profiles.dev]\nurl = "embedded"\n\n[profiles.prod]\nurl = "embedded"\n\n'
        '[areas.prod]\nprofile = "prod"\npaths = ["apimctl"]\norder = 2\nmax_deletes = 0\n\n'
        '[areas.dev]\nprofile = "dev"\npaths = ["apimctl"]\norder = 1\nmax_deletes = 0\n'
        'max_affected_keys = 10\n')
    code, out, err = run("show", "--merge", f"prod={plans['prod']}", f"dev={plans['dev']}",
                         f"qa={tmp_path / 'qa.json'}", "--allow-missing", "--max-deletes", "3")
    assert code == 0, err
    rows = _rows(out)
    assert list(rows) == ["dev", "prod", "qa"]  # declared order, then the others as given
    deletes = load_plan(str(plans["prod"])).summary()["delete"]
    assert rows["prod"][-1] == f"⛔ refused: --max-deletes 0 ({deletes} to delete)"
    assert rows["dev"][-1].startswith("✅ --max-deletes 0 (0 to delete), --max-affected-keys 10 (")
    assert rows["qa"][0] == "—" and "no plan" in rows["qa"][-1]
    alert = out[out.index("> [!CAUTION]"):out.index("| Area |")]
    assert "Apply would stop at **prod**: 2 areas cannot be applied as planned" in alert
    assert alert.index("**prod**: --max-deletes 0") < alert.index("**qa**: no plan")
    assert "<details><summary>⛔ prod: " in out


def test_a_plan_too_large_is_cut_first_with_a_pointer_to_the_artifacts(
        plans: dict[str, Path], run: Callable[..., tuple[int, str, str]]) -> None:
    url = "https://github.com/o/r/actions/runs/42"
    assert len(run("show", str(plans["big"]), "--format", "markdown")[1]) > 40_000  # large alone
    code, out, err = run("show", "--merge", str(plans["dev"]), str(plans["big"]), str(plans["prod"]),
                         "--artifacts", url)
    assert code == 0, err
    assert len(out) <= 60_000 < GITHUB_LIMIT
    assert f"[the workflow run's artifacts]({url})" in out
    assert "Some plans are cut to keep this comment under GitHub's 65,536 characters" in out
    big = out[out.index("<details><summary>big: "):]
    assert "(not shown: comment length limit; the whole plan is in `" in big
    whole_dev = run("show", str(plans["dev"]), "--format", "markdown")[1]
    assert whole_dev.split("\n", 2)[2].strip() in out  # the small plans are kept whole
    assert out.count("<details>") == out.count("</details>")
    code, tight, _ = run("show", "--merge", str(plans["dev"]), str(plans["big"]), str(plans["prod"]),
                         "--limit", "4000")
    assert code == 0 and len(tight) <= 4000
    assert "Not shown (comment length limit): the whole plan is in" in tight
    assert list(_rows(tight)) == ["dev", "big", "prod"]
    assert tight.count("<details>") == tight.count("</details>")


def test_what_cannot_be_merged_is_refused(plans: dict[str, Path], run: Callable[..., tuple[int, str, str]],
                                          tmp_path: Path) -> None:
    code, out, err = run("show", str(plans["dev"]), str(plans["prod"]))
    assert code == 1 and out == "" and "several need --merge" in err
    code, out, err = run("show", "--merge", f"dev={plans['dev']}", f"dev={plans['prod']}")
    assert code == 1 and out == "" and "area 'dev' is given twice" in err
    code, out, err = run("show", "--merge", str(plans["dev"]), "--format", "json")
    assert code == 1 and "--merge writes Markdown" in err
    code, out, err = run("show", "--merge", str(plans["dev"]), str(tmp_path / "missing.json"))
    assert code == 1 and out == "" and "missing.json: cannot read the saved plan" in err
    bad = tmp_path / "apimctl.toml"
    bad.write_text('[areas.dev]\nprofile = "nope"\npaths = ["a"]\n')
    code, out, err = run("show", "--merge", str(plans["dev"]))
    assert code == 1 and out == "" and f"{bad}:2: [areas.dev]: profile 'nope'" in err
    assert "Traceback" not in err
