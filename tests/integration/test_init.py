"""``apimctl init``: the repository skeleton, from the template or from the area."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from apimctl.export.scaffold import SKELETON, template

from .inprocess import entry_point

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"
EXAMPLE_OF = {".pre-commit-config.yaml": GITOPS / "pre-commit" / ".pre-commit-config.yaml"}

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.chdir(tmp_path)

    return entry_point(monkeypatch, capsys)


@pytest.mark.parametrize(("name", "destination"), SKELETON)
def test_the_skeleton_is_the_gitops_example(name: str, destination: str) -> None:
    """The packaged workflows and pre-commit config are examples/gitops's files."""
    example = EXAMPLE_OF.get(destination, GITOPS / destination)
    assert template(name) == example.read_text()


def test_init_writes_a_skeleton_that_validates(tmp_path: Path, run: Run) -> None:
    code, out, err = run("init", "repo")
    assert code == 0, err
    repo = tmp_path / "repo"
    for destination in ("apimctl/apimctl.yaml", ".github/workflows/apimctl-plan.yml",
                        ".github/workflows/apimctl-apply.yml", ".github/workflows/apimctl-drift.yml",
                        ".pre-commit-config.yaml", ".gitignore"):
        assert (repo / destination).is_file(), destination
        assert f"wrote    repo/{destination}" in out
    assert ".apimctl/" in (repo / ".gitignore").read_text().splitlines()
    code, _, err = run("validate", "repo/apimctl")
    assert code == 0, err


def test_existing_files_are_kept_unless_forced(tmp_path: Path, run: Run) -> None:
    repo = tmp_path / "repo"
    (repo / "apimctl").mkdir(parents=True)
    (repo / "apimctl" / "apimctl.yaml").write_text("roles: []\n")
    (repo / ".gitignore").write_text("node_modules/")
    code, out, _ = run("init", "repo")
    assert code == 0
    assert "kept     repo/apimctl/apimctl.yaml" in out and "extended repo/.gitignore" in out
    assert (repo / "apimctl" / "apimctl.yaml").read_text() == "roles: []\n"
    assert (repo / ".gitignore").read_text().startswith("node_modules/\n\n# apimctl")
    code, out, _ = run("init", "repo")
    assert "repo/.gitignore" not in out  # nothing more to add
    code, out, _ = run("init", "repo", "--force")
    assert "wrote    repo/apimctl/apimctl.yaml" in out
    assert "services:" in (repo / "apimctl" / "apimctl.yaml").read_text()


def test_init_from_the_area_plans_to_zero(tmp_path: Path, run: Run) -> None:
    assert run("init", ".")[0] == 0
    code, _, err = run("apply", "apimctl", "--url", "embedded", "--auto-approve")
    assert code == 0, err
    code, out, err = run("init", "copy", "--from-area", "--url", "embedded")
    assert code == 0, err
    assert "wrote    copy/apimctl/apimctl.yaml" in out
    assert (tmp_path / "copy" / ".github" / "workflows" / "apimctl-plan.yml").is_file()
    code, _, err = run("plan", "copy/apimctl", "--url", "embedded", "--detailed-exitcode")
    assert code == 0, err


def test_init_into_a_file_is_refused(tmp_path: Path, run: Run) -> None:
    (tmp_path / "file").write_text("x")
    code, _, err = run("init", "file")
    assert code != 0 and "file" in err and "Traceback" not in err


WORKFLOW_TEMPLATES = [name for name, destination in SKELETON if destination.startswith(".github/")]
SECRET = re.compile(r"secrets\.([A-Za-z_][A-Za-z0-9_]*)")


def _values(node: object) -> list[str]:
    """Every string of a parsed YAML document (comments are not in it)."""
    if isinstance(node, dict):
        return [s for key, value in node.items() for s in (*_values(key), *_values(value))]
    if isinstance(node, list):
        return [s for item in node for s in _values(item)]
    return [node] if isinstance(node, str) else []


@pytest.mark.parametrize("name", WORKFLOW_TEMPLATES)
def test_the_skeletons_workflows_read_no_secret_of_an_example(name: str) -> None:
    """A repository made by ``init`` has its own ``${VAR}``s: its workflows pass only the
    connection's secrets, and show in a comment how to add the manifests' own."""
    text = template(name)
    used = {m.group(1) for value in _values(yaml.safe_load(text)) for m in SECRET.finditer(value)}
    assert used and all(s.startswith("APIMCTL_") for s in used), used
    assert "# BACKEND_SECRET: ${{ secrets.BACKEND_SECRET }}" in text


def test_the_call_tests_step_follows_manifests() -> None:
    """The README says to adjust ``MANIFESTS``: the call tests are found under it, not under a
    fixed ``apimctl/tests``."""
    doc = yaml.safe_load(template(next(n for n in WORKFLOW_TEMPLATES if "plan" in n)))
    steps = [s for job in doc["jobs"].values() for s in job["steps"] if "apimctl test" in s.get("run", "")]
    assert len(steps) == 1
    step = steps[0]
    assert "env.MANIFESTS" in step["if"] and "apimctl/" not in step["if"], step["if"]
    assert 'apimctl test "$MANIFESTS/tests" --manifests "$MANIFESTS"' in step["run"]
