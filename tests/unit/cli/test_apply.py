"""The `apimctl apply` adapter: progress displays, option checks."""

from __future__ import annotations

import io

from click.testing import CliRunner
from rich.console import Console

from apimctl.cli import cli
from apimctl.cli.apply_terminal import plain_progress, progress_display, scrubbed
from apimctl.plans.model import Plan, Step
from apimctl.plans.progress import ProgressEvent
from apimctl.render.style import Redactor


def test_plain_progress_is_one_line_per_finished_step() -> None:
    lines: list[str] = []
    update = plain_progress(lambda text, **_: lines.append(text))
    update(ProgressEvent("start", "role:a", "create", "", 0, 2))
    update(ProgressEvent("done", "role:a", "create", "", 1, 2))
    update(ProgressEvent("failed", "role:b", "update", "PUT /roles/x: 400 name: duplicate", 2, 2))
    assert lines == ["[1/2] create role:a: ok",
                     "[2/2] update role:b: FAILED: PUT /roles/x: 400 name: duplicate"]


def test_rich_progress_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with progress_display(console, interactive=True) as update:
        update(ProgressEvent("start", "role:a", "create", "", 0, 2))
        update(ProgressEvent("done", "role:a", "create", "", 1, 2))
        update(ProgressEvent("skipped", "role:b", "create", "depends on role:a", 2, 2))
    text = out.getvalue()
    assert "2/2" in text and "role:b: skipped: depends on role:a" in text


def test_options_that_cannot_go_together() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["apply", "--auto-approve"])
    assert result.exit_code != 0 and "PATH" in result.output
    result = runner.invoke(cli, ["apply", "--auto-approve", "--plan", "p.json", "--prune"])
    assert result.exit_code != 0 and "saved --plan" in result.output


def test_progress_messages_are_scrubbed_of_secret_values() -> None:
    """A server may echo a refused value; a resolved secret never reaches the terminal."""
    plan = Plan(steps=[Step("create", "role", "a", desired={"name": "a"})])
    plan.secret_values["endpoint:S/E#systemDomainCredentialSecret"] = "hunter2-very-secret"
    lines: list[str] = []
    update = scrubbed(plain_progress(lambda text, **_: lines.append(text)), Redactor(plan).text)
    update(ProgressEvent("failed", "endpoint:S/E", "create",
                         "POST /services: 400 systemDomainCredentialSecret: 'hunter2-very-secret' too long", 1, 1))
    assert lines and "hunter2-very-secret" not in lines[0] and "(sensitive)" in lines[0]
