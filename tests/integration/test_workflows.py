"""The workflows work when copied: checked by actionlint, and run where they can be here.

- ``examples.yml``'s script runs as GitHub runs it (``CI=true``) for one example, against the
  embedded server it names;
- every apimctl command in a workflow that reaches an area says which (``--url`` or
  ``APIMCTL_URL``), so none falls back to the embedded server in CI by accident;
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
                assert "--url" in line or "APIMCTL_URL" in env, f"{path.name}: {line.strip()}"


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
