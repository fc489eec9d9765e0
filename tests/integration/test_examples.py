"""Every example under ``examples/``: it validates, applies to an empty area of the reference
server, re-plans to zero changes, and exports back to an equivalent configuration (the
export validates, plans to zero against the same area, and applied to another empty area
gives an area the example itself plans to zero against). Two exports are byte-identical and
never contain a secret value.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from apimctl.drift import detect_drift

from .export_support import (
    EXAMPLES,
    ROOT,
    apply,
    client_for,
    describe,
    export_env,
    export_to,
    load,
    read_env_file,
    replan,
    secret_values,
    server_app,
)


@dataclass(frozen=True)
class Example:
    name: str
    paths: tuple[str, ...]
    overlays: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def _env(folder: str) -> dict[str, str]:
    return read_env_file(EXAMPLES / folder / "example.env")


CASES = [
    Example("weather", ("weather",), env={"FORECAST_BACKEND_SECRET": "weather-secret-5e1f"}),
    Example("public-api", ("public-api",)),
    Example("multi-team", ("multi-team",), env=_env("multi-team")),
    Example("maintenance-window", ("maintenance-window",)),
    Example("openapi", ("openapi",)),  # bookshop.yaml is imported from openapi/document/
    Example("environments-staging", ("environments/base",), ("environments/overlays/staging",),
            env=_env("environments")),
    Example("environments-production", ("environments/base",),
            ("environments/overlays/production",), env=_env("environments")),
]
NOT_MANIFESTS = {"gitops"}  # GitHub Actions workflows and pre-commit configuration


def test_every_example_folder_is_covered() -> None:
    folders = {p.name for p in EXAMPLES.iterdir() if p.is_dir()} - NOT_MANIFESTS
    covered = {c.paths[0].split("/")[0] for c in CASES}
    assert folders == covered, "add the new example to CASES"


def test_examples_needing_secrets_ship_placeholders() -> None:
    for case in CASES:
        if case.name != "weather" and any("${" in p.read_text() and "SECRET" in p.read_text()
                                          for d in case.paths for p in (EXAMPLES / d).glob("*.yaml")):
            assert case.env, f"{case.name}: add an example.env with placeholder values"


async def _round_trip(case: Example, tmp: Path, dialect: str) -> None:
    paths = [EXAMPLES / p for p in case.paths]
    overlays = [EXAMPLES / o for o in case.overlays]
    manifest = load(paths, case.env, overlays)
    app = server_app(tmp / "area.db", dialect=dialect)
    async with client_for(app) as client:
        first = await apply(client, manifest, case.env)
        assert first.steps and {s.action for s in first.steps} == {"create"}
        assert first.dialect == dialect, first.dialect_reason
        again = await replan(client, manifest)
        assert not again.steps, describe(again)
        drifted = await detect_drift(client, manifest)
        assert not drifted.plan.steps, describe(drifted.plan)

        single = await export_to(client, tmp / "single")
        per_service = await export_to(client, tmp / "per-service", layout="per-service")
        twice = await export_to(client, tmp / "single-again")
        assert [f.text for f in single.files] == [f.text for f in twice.files]

        known = secret_values(manifest)
        for folder, result in ((tmp / "single", single), (tmp / "per-service", per_service)):
            texts = "\n".join(f.text for f in result.files)
            assert texts.startswith("# yaml-language-server: $schema=")
            for value in [*case.env.values(), *known.values()]:
                assert value not in texts
            env = export_env(folder, known)
            assert sorted(env) == result.variables
            exported = load([folder], env)
            zero = await replan(client, exported)
            assert not zero.steps, f"{folder.name}:\n{describe(zero)}"

    # Equivalence the other way: the export, applied to an empty area, is the example.
    env = export_env(tmp / "single", known)
    exported = load([tmp / "single"], env)
    async with client_for(server_app(tmp / "other.db", dialect=dialect)) as other:
        await apply(other, exported, env)
        back = await replan(other, manifest)
        assert not back.steps, describe(back)


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_example_applies_replans_to_zero_and_exports_back(case: Example, dialect: str,
                                                          tmp_path: Path) -> None:
    """Against ``serve`` and ``serve --dialect mashery``: applies, plans to zero, drifts clean,
    exports back to zero (SUPPLEMENT §10: the same manifests work against both)."""
    asyncio.run(_round_trip(case, tmp_path, dialect))


def _workflow(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((EXAMPLES / "gitops" / ".github" / "workflows" / name).read_text())
    assert isinstance(doc, dict) and doc.get("jobs"), name
    return doc


def _runs(doc: dict[str, Any]) -> str:
    """The shell and github-script code of every step, and for each step that uses the apimctl
    action (action.yml) the command line it runs: ``apimctl COMMAND PATHS ARGS``."""
    return "\n".join(str(step.get("run", "")) + str(step.get("with", {}).get("script", ""))
                     + _action_call(step)
                     for job in doc["jobs"].values() for step in job["steps"])


ACTION = "apimctl/apimctl"  # action.yml at the root, as other repositories name it


def _action_call(step: dict[str, Any]) -> str:
    if not str(step.get("uses", "")).startswith(ACTION + "@"):
        return ""
    given = step.get("with", {})
    return " ".join(["apimctl", str(given.get("command", "plan")), str(given.get("args", ""))])


def _action() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "action.yml").read_text())
    assert isinstance(doc, dict)
    return doc


def test_gitops_workflows_do_what_the_readme_says() -> None:
    plan = _workflow("apimctl-plan.yml")
    assert "pull_request" in plan[True]  # YAML 1.1 reads the key `on` as True
    text = _runs(plan)
    assert "apimctl validate" in text and "apimctl plan" in text
    sticky = [s for j in plan["jobs"].values() for s in j["steps"] if _action_call(s)]
    assert {s["with"]["command"] for s in sticky} == {"validate", "plan"}
    assert any(s["with"]["command"] == "plan" and s["with"].get("comment") is True
               and s["with"].get("plan-file") == "plan.json" for s in sticky)
    uses = [s.get("uses", "") for j in plan["jobs"].values() for s in j["steps"]]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)

    apply_ = _workflow("apimctl-apply.yml")
    assert apply_[True]["pull_request"]["types"] == ["closed"]
    assert "merged == true" in apply_["jobs"]["apply"]["if"]
    assert "apimctl apply --plan plan.json" in _runs(apply_)

    drift = _workflow("apimctl-drift.yml")
    assert "schedule" in drift[True]
    text = _runs(drift)
    assert "apimctl drift" in text and "issues.create" in text and "issues.update" in text


def test_the_action_installs_runs_and_posts_one_sticky_comment() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {"command", "paths", "args", "version", "python-version",
                                     "comment", "github-token"}
    assert set(action["outputs"]) >= {"exit-code", "plan-file", "markdown-file"}
    assert all("description" in v for v in [*action["inputs"].values(), *action["outputs"].values()])
    steps = action["runs"]["steps"]
    assert all("shell" in s for s in steps if "run" in s)  # a composite step needs its shell
    code = "\n".join(str(s.get("run", "")) + str(s.get("with", {}).get("script", "")) for s in steps)
    code += (ROOT / "action" / "comment.js").read_text()  # the comment's script, required by a step
    for command in ("plan", "apply", "drift", "lint", "validate"):
        assert f"apimctl {command} " in code, command
    assert "--format markdown --out \"$PLAN_FILE\" --detailed-exitcode" in code
    assert "${{ github.action_path }}" in yaml.safe_dump(steps)  # the action's own release
    assert "updateComment" in code and "`<!-- apimctl-${o.command}" in code  # <!-- apimctl-plan -->
    assert "action/comment.js" in code


def test_the_gitops_examples_use_the_action_of_this_release() -> None:
    from apimctl import __version__

    used = [step["uses"] for path in WORKFLOWS for step in _steps(yaml.safe_load(path.read_text()))
            if str(step.get("uses", "")).startswith(ACTION + "@")]
    assert len(used) >= 4  # validate and plan, apply, drift
    assert set(used) == {f"{ACTION}@v{__version__}"}, "pin the action to this release's tag"


def test_pre_commit_hook_runs_validate() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "apimctl-validate")
    assert hook["entry"] == "apimctl validate --allow-missing-vars" and hook["language"] == "python"
    # defaults that work as they are (`pre-commit try-repo`): the conventional apimctl/ directory,
    # and only when a YAML file under it changes (skipped in a repository without one)
    assert hook["args"] == ["apimctl/"] and hook["files"] == r"^apimctl/.*\.ya?ml$"
    config = yaml.safe_load((EXAMPLES / "gitops" / "pre-commit" / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["hooks"][0]["id"] == "apimctl-validate"


WORKFLOWS = [*sorted((EXAMPLES / "gitops" / ".github" / "workflows").glob("*.yml")),
             ROOT / ".github" / "workflows" / "examples.yml"]
# The first major of each action that runs on Node 24 (Node 20 is gone from the runners).
NODE24_MAJORS = {"actions/checkout": 5, "actions/setup-python": 6, "actions/upload-artifact": 6,
                 "actions/download-artifact": 7, "actions/github-script": 8,
                 "github/codeql-action/upload-sarif": 4, "peter-evans/create-pull-request": 8}


def _steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in doc["jobs"].values() for step in job["steps"]]


def test_workflows_use_current_actions() -> None:
    majors: dict[str, set[int]] = {}
    every = [(path, _steps(yaml.safe_load(path.read_text()))) for path in WORKFLOWS]
    every.append((ROOT / "action.yml", _action()["runs"]["steps"]))
    for path, steps in every:
        for step in steps:
            if "uses" not in step or str(step["uses"]).startswith(ACTION + "@"):
                continue
            action, _, ref = str(step["uses"]).partition("@")
            assert action in NODE24_MAJORS, f"{path.name}: unexpected action {action}"
            assert re.fullmatch(r"v\d+", ref), f"{path.name}: {step['uses']}: pin a major tag"
            majors.setdefault(action, set()).add(int(ref[1:]))
    for action, seen in majors.items():
        assert len(seen) == 1, f"{action}: one major everywhere, not {sorted(seen)}"
        assert min(seen) >= NODE24_MAJORS[action], f"{action}@v{min(seen)} runs on Node 20"


def _apimctl_calls(text: str) -> list[tuple[str, list[str]]]:
    """Every ``apimctl COMMAND ...`` in a shell script: the command and its ``--options``."""
    calls = []
    for match in re.finditer(r"\bapimctl (\w+)([^\n|>;]*)", text):
        calls.append((match.group(1), re.findall(r"(?<![\w-])--[a-z][a-z-]*", match.group(2))))
    return calls


def test_workflows_and_hooks_use_real_apimctl_options() -> None:
    """Each option a workflow or hook passes exists on that command (``apimctl CMD --help``)."""
    from apimctl.cli import cli

    scripts = [str(step.get("run", "")) + _action_call(step) for path in WORKFLOWS
               for step in _steps(yaml.safe_load(path.read_text()))]
    scripts += [str(step.get("run", "")) for step in _action()["runs"]["steps"]]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    scripts += [" ".join([h["entry"], *h.get("args", [])]) for h in hooks]
    calls = [call for script in scripts for call in _apimctl_calls(script)]
    assert {name for name, _ in calls} >= {"validate", "plan", "apply", "drift", "export"}
    for name, options in calls:
        command = cli.commands.get(name)
        assert command is not None, f"apimctl {name}: no such command"
        # a group (``import openapi``): the options of its commands
        commands = list(command.commands.values()) if hasattr(command, "commands") else [command]
        known = {opt for cmd in commands for param in cmd.params for opt in param.opts + param.secondary_opts}
        for option in options:
            assert option in known, f"apimctl {name} {option}: no such option"
