"""The workflows work when copied: checked by actionlint, and run where they can be here.

- ``examples.yml``'s script runs as GitHub runs it (``CI=true``) for one example, against the
  embedded server it names;
- every apimctl command in a workflow that reaches an area says which (``--url``,
  ``--profile`` or their variables), so none falls back to the embedded server in CI by
  accident;
- the multi-area example's shell steps run as GitHub runs them against two reference servers
  (``spec`` and ``mashery``), one area each: the matrix of a change, each area's plan, the
  merged comment, and apply area by area in order, stopping at the first failure;
- the action's comment (action/comment.js, through node): one heading, apimctl's error when it
  failed, a report too large for a comment cut with a link to the whole of it;
- the apply example finds the plan by its artifact's name, not the plan workflow's file name.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = [*sorted((ROOT / ".github" / "workflows").glob("*.yml")),
             *sorted((ROOT / "examples" / "gitops" / ".github" / "workflows").glob("*.yml"))]
CONNECTING = re.compile(r"\bapimctl (plan|apply|drift|export|unlock)\b")
ACTIONLINT = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
NODE = shutil.which("node")


def _steps(doc: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(job, step) for job in doc.get("jobs", {}).values() for step in job.get("steps", [])]


@pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is in the test extra")
def test_every_workflow_lints_clean() -> None:
    result = subprocess.run([ACTIONLINT, *map(str, WORKFLOWS)], capture_output=True, text=True,
                            cwd=ROOT, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_commands_that_reach_an_area_name_it(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    for job, step in _steps(doc):
        run = step.get("run", "")
        env = {**doc.get("env", {}), **job.get("env", {}), **step.get("env", {})}
        for line in run.splitlines():
            if CONNECTING.search(line) and not line.lstrip().startswith("#"):
                named = ("--url" in line or "--profile" in line or "APIMCTL_URL" in env
                         or "APIMCTL_PROFILE" in env)
                assert named, f"{path.name}: {line.strip()}"


def test_examples_workflow_passes_where_ci_is_set(tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "examples.yml").read_text())
    step = next(s for _, s in _steps(doc) if "apimctl apply" in s.get("run", ""))
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, **{k: str(v) for k, v in step["env"].items()},
           "CI": "true", "GITHUB_ACTIONS": "true", "REPO": str(ROOT), "PATHS": "examples/weather",
           "OVERLAY": "", "FORECAST_BACKEND_SECRET": "placeholder", "TMPDIR": str(tmp_path),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("APIMCTL_TOKEN", None)
    result = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "refus" not in result.stderr.lower()


def test_apply_example_finds_the_plan_by_artifact_name() -> None:
    path = ROOT / "examples" / "gitops" / ".github" / "workflows" / "apimctl-apply.yml"
    text = path.read_text()
    assert "apimctl-plan.yml" not in text
    plan = (path.parent / "apimctl-plan.yml").read_text()
    artifact = "apimctl-plan-${{ github.event.pull_request.head.sha }}"
    assert artifact in plan and artifact in text
    assert "listArtifactsForRepo" in text and "core.setFailed" in text


def _comment(**options: Any) -> str:
    script = ("const c = require(process.argv[1]);"
              "const o = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "process.stdout.write(c.commentBody(o));")
    base = {"command": "plan", "sha": "abc1234", "runUrl": "https://gh/run/1", "ok": "0 2"}
    result = subprocess.run([NODE or "node", "-e", script, str(ROOT / "action" / "comment.js")],
                            input=json.dumps({**base, **options}), capture_output=True, text=True,
                            check=True)
    return result.stdout


needs_node = pytest.mark.skipif(NODE is None, reason="node runs the action's script")


@needs_node
def test_the_comment_has_one_heading() -> None:
    body = _comment(report="## apimctl plan\n\nPlan: 1 to create.\n", code="2", changes="true")
    assert body.startswith("<!-- apimctl-plan -->\n## apimctl plan for abc1234\n")
    assert body.count("## apimctl plan") == 1
    assert "Plan: 1 to create." in body and "Merging applies exactly this plan" in body


@needs_node
def test_a_failure_posts_the_error() -> None:
    stderr = "".join(f"progress {i}\n" for i in range(100)) + "Error: token rejected (401)\n"
    body = _comment(report="", code="1", stderr=stderr, commentId="production")
    assert body.startswith("<!-- apimctl-plan:production -->\n## apimctl plan (production) for abc1234")
    assert "failed (exit 1)" in body and "Error: token rejected (401)" in body
    assert "progress 0\n" not in body          # the last lines only
    assert "Merging applies" not in body


@needs_node
def test_a_report_too_large_is_cut_with_a_link() -> None:
    rows = "".join(f"| endpoint {i} | update |\n" for i in range(6000))
    report = "## apimctl plan\n\n<details><summary>all</summary>\n\n```diff\n" + rows + "```\n</details>\n"
    body = _comment(report=report, code="2", changes="true", artifactUrl="https://gh/artifact/9")
    assert len(body) <= 65536
    assert "https://gh/artifact/9" in body and "cut here" in body
    assert body.count("```") % 2 == 0 and body.count("<details>") == body.count("</details>")
    assert body.rstrip().endswith("</sub>")


AREAS_WORKFLOW = ROOT / "examples" / "gitops" / ".github" / "workflows" / "apimctl-areas.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
FLEET_TOKEN = "fleet-workflow-t0ken"
FLEET_SECRET = "fleet-workflow-backend-s3cret"


def _step(doc: dict[str, Any], job: str, name: str) -> dict[str, Any]:
    step: dict[str, Any] = next(s for s in doc["jobs"][job]["steps"]
                                if s.get("id") == name or s.get("name", "").startswith(name))
    return step


class _Runner:
    """Runs a workflow step's shell script in the repository ``root`` as GitHub would: its
    ``env:`` with every ``${{ ... }}`` taken from ``values`` (an unknown one fails the test)."""

    def __init__(self, root: Path, values: dict[str, str]) -> None:
        self.root = root
        self.values = values
        self.output = root.parent / "github_output"
        bin_dir = Path(sys.executable).parent
        self.base = {k: v for k, v in os.environ.items() if not k.startswith("APIMCTL_")}
        self.base.update({"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(self.output),
                          "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})

    def __call__(self, step: dict[str, Any], **more: str) -> subprocess.CompletedProcess[str]:
        values = {**self.values, **more}
        env = {k: _EXPRESSION.sub(lambda m: values[m.group(1)], str(v)) for k, v in step.get("env", {}).items()}
        return subprocess.run(["bash", "-c", step["run"]], env={**self.base, **env}, cwd=self.root,
                              capture_output=True, text=True, timeout=120, check=False)

    def outputs(self) -> dict[str, str]:
        lines = self.output.read_text().splitlines() if self.output.exists() else []
        return dict(line.split("=", 1) for line in lines)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *args],
                          cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def fleet_repo(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A repository of two areas (examples/environments: staging on a ``spec`` server,
    production on a ``mashery`` one) and a pull request changing the base manifests."""
    from apimctl.server import ServerConfig, create_app

    from .inprocess import uvicorn_in_thread

    apps = [create_app(ServerConfig(db_path=str(tmp_path / f"{d}.db"), tokens={FLEET_TOKEN: "area-1"},
                                    dialect=d, auto_approve_domains=True)) for d in ("spec", "mashery")]
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "environments", root / "apimctl")
    with uvicorn_in_thread(apps[0]) as staging, uvicorn_in_thread(apps[1]) as production:
        (root / "apimctl.toml").write_text(
            f'[profiles.staging]\nurl = "http://127.0.0.1:{staging}/v3/rest"\n'
            'token = "${APIMCTL_TOKEN_STAGING}"\n\n'
            f'[profiles.production]\nurl = "http://127.0.0.1:{production}/v3/rest"\n'
            'token = "${APIMCTL_TOKEN_PRODUCTION}"\n\n'
            '[areas.production]\nprofile = "production"\npaths = ["apimctl/base"]\n'
            'overlays = ["apimctl/overlays/production"]\norder = 2\nmax_deletes = 0\n\n'
            '[areas.staging]\nprofile = "staging"\npaths = ["apimctl/base"]\n'
            'overlays = ["apimctl/overlays/staging"]\norder = 1\n')
        (root / "README.md").write_text("areas\n")
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "base")
        base = _git(root, "rev-parse", "HEAD")
        with (root / "apimctl" / "base" / "forecast.yaml").open("a") as manifest:
            manifest.write("# reviewed in one comment\n")
        (root / "README.md").write_text("areas, changed\n")
        _git(root, "commit", "-qam", "change the base")
        yield root, {"github.event.pull_request.base.sha": base,
                     "github.event.pull_request.head.sha": _git(root, "rev-parse", "HEAD"),
                     "secrets.APIMCTL_TOKEN_STAGING": FLEET_TOKEN,
                     "secrets.APIMCTL_TOKEN_PRODUCTION": FLEET_TOKEN,
                     "secrets.FORECAST_BACKEND_SECRET": FLEET_SECRET,
                     "github.server_url": "https://github.com", "github.repository": "o/r",
                     "github.run_id": "7"}


@pytest.mark.skipif(shutil.which("jq") is None or shutil.which("git") is None,
                    reason="the workflow's steps use jq and git, as GitHub's runners have them")
def test_areas_workflow_plans_comments_and_applies_in_order(fleet_repo: tuple[Path, dict[str, str]]) -> None:
    root, values = fleet_repo
    doc = yaml.safe_load(AREAS_WORKFLOW.read_text())
    run = _Runner(root, values)
    done = run(_step(doc, "areas", "matrix"))
    assert done.returncode == 0, done.stderr
    outputs = run.outputs()
    matrix = json.loads(outputs["matrix"])
    assert outputs["count"] == "2"
    assert [e["area"] for e in matrix["include"]] == ["staging", "production"]  # declared order
    assert doc["jobs"]["plan"]["strategy"]["matrix"] == "${{ fromJSON(needs.areas.outputs.matrix) }}"
    assert "needs.areas.outputs.count != '0'" in doc["jobs"]["plan"]["if"]

    for entry in matrix["include"]:
        done = run(_step(doc, "plan", "Plan"), **{"matrix.area": entry["area"], "matrix.profile": entry["profile"],
                                                   "toJSON(matrix.args)": json.dumps(entry["args"])})
        assert done.returncode == 0, done.stderr
        assert (root / "plans" / f"{entry['area']}.json").is_file()

    done = run(_step(doc, "comment", "One comment"), **{"needs.areas.outputs.matrix": outputs["matrix"]})
    assert done.returncode == 0, done.stderr
    comment = (root / "comment.md").read_text()
    assert comment.startswith("## apimctl plan: 2 areas\n")
    assert comment.index("| **staging** |") < comment.index("| **production** |")
    assert "✅ --max-deletes 0 (0 to delete)" in comment
    assert "(https://github.com/o/r/actions/runs/7)" not in comment  # nothing was cut
    assert json.loads((root / "plans" / "matrix.json").read_text()) == matrix
    assert FLEET_SECRET not in comment + done.stdout + done.stderr

    apply = _step(doc, "apply", "Apply area by area")
    refused = run(apply, **{"secrets.APIMCTL_TOKEN_STAGING": "a-wrong-token"})
    assert refused.returncode == 1, refused.stdout[-3000:] + refused.stderr[-3000:]
    assert "a-wrong-token" not in refused.stdout + refused.stderr
    assert "::group::apply staging" in refused.stdout
    assert "::group::apply production" not in refused.stdout  # stopped at the first failure
    done = run(apply)  # production's plan is not stale: nothing reached it before
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.index("::group::apply staging") < done.stdout.index("::group::apply production")
    assert FLEET_SECRET not in done.stdout + done.stderr


ADOPT_WORKFLOW = ROOT / "examples" / "gitops" / ".github" / "workflows" / "apimctl-adopt.yml"


@pytest.mark.skipif(shutil.which("git") is None, reason="the test keeps the manifests in git")
def test_adopt_workflow_writes_the_body_and_a_quiet_night_changes_nothing(tmp_path: Path) -> None:
    """The nightly adoption step as GitHub runs it against a reference server: the drift is
    written into the manifests and the Markdown body; a run with no new drift changes
    nothing; the pull request lives on one branch, so an open one is updated."""
    import asyncio

    from click.testing import CliRunner

    from apimctl.api.client import ApiClient
    from apimctl.cli import cli
    from apimctl.server import ServerConfig, create_app

    from .inprocess import uvicorn_in_thread
    from .test_drift_adopt import BASE, ENV, OVERLAY, change

    doc = yaml.safe_load(ADOPT_WORKFLOW.read_text())
    pr = _step(doc, "adopt", "Open or update the pull request")
    assert pr["uses"].startswith("peter-evans/create-pull-request@v")
    assert pr["with"]["branch"] == "apimctl/adopt" and "steps.adopt.outputs.body" in pr["with"]["body-path"]
    assert doc[True]["schedule"]  # "on": YAML 1.1 reads it as true
    assert doc["permissions"] == {"contents": "write", "pull-requests": "write"}

    root = tmp_path / "repo"
    (root / "apimctl" / "base").mkdir(parents=True)
    (root / "apimctl" / "overlays" / "production").mkdir(parents=True)
    (root / "apimctl" / "base" / "weather.yaml").write_text(BASE)
    (root / "apimctl" / "overlays" / "production" / "overlay.yaml").write_text(OVERLAY)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "manifests")
    app = create_app(ServerConfig(db_path=str(tmp_path / "area.db"), tokens={FLEET_TOKEN: "area-1"},
                                  auto_approve_domains=True))
    with uvicorn_in_thread(app) as port:
        url = f"http://127.0.0.1:{port}/v3/rest"
        env = {**ENV, "APIMCTL_URL": url, "APIMCTL_TOKEN": FLEET_TOKEN, "APIMCTL_QPS": "0"}
        applied = CliRunner().invoke(cli, ["apply", "--auto-approve", str(root / "apimctl" / "base"), "--overlay",
                                           str(root / "apimctl" / "overlays" / "production")], env=env)
        assert applied.exit_code == 0, applied.output

        async def by_hand() -> None:
            async with ApiClient(url, token=FLEET_TOKEN, qps=None) as client:
                await change(client, "plan:Weather Partners/Gold", "rateLimitCeiling", 6000)

        asyncio.run(by_hand())
        run = _Runner(root, {"secrets.APIMCTL_URL": url, "secrets.APIMCTL_TOKEN": FLEET_TOKEN})
        step = _step(doc, "adopt", "Adopt")
        step = {**step, "env": {**doc["env"], **step["env"], **ENV, "RUNNER_TEMP": str(tmp_path),
                                "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
                                "GITHUB_RUN_ID": "7"}}
        done = run(step)
        assert done.returncode == 0, done.stdout + done.stderr
        body = Path(run.outputs()["body"]).read_text()
        assert body.startswith("### Adopt changes made by hand") and "`6000`" in body
        assert "(https://github.com/o/r/actions/runs/7)" in body
        assert _git(root, "diff", "--name-only") == "apimctl/overlays/production/overlay.yaml"
        assert "rateLimitCeiling: 6000   # production ceiling" in (
            root / "apimctl" / "overlays" / "production" / "overlay.yaml").read_text()
        _git(root, "commit", "-qam", "adopted")  # the pull request's branch, as the action leaves it

        quiet = run(step)
        assert quiet.returncode == 0, quiet.stdout + quiet.stderr
        assert _git(root, "status", "--porcelain") == ""  # no new drift: nothing changes
