"""Text rendering of plans and apply summaries (``apimctl.render.text``)."""

from __future__ import annotations

from collections.abc import Callable

from apimctl.plans.model import Budget, Change, Plan, Step
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.render.text import render_apply_summary, render_plan

from .render_plans import big_plan, mixed_plan, no_change_plan

Golden = Callable[[str, str], None]


def test_mixed_plan_matches_golden(golden: Golden) -> None:
    golden("mixed.txt", render_plan(mixed_plan()))


def test_no_changes_matches_golden(golden: Golden) -> None:
    golden("no_changes.txt", render_plan(no_change_plan()))


def test_totals_line() -> None:
    assert render_plan(mixed_plan()).endswith("Plan: 2 to create, 2 to update, 1 to delete.\n")
    assert render_plan(Plan()).strip() == "No changes. The area matches the manifests."
    assert render_plan(big_plan(3, 2, 1)).endswith("Plan: 2 to create, 3 to update, 1 to delete.\n")


def test_step_and_field_lines() -> None:
    out = render_plan(mixed_plan())
    assert '  + create service "Weather"\n' in out
    assert '  ~ update endpoint "Weather/Current"\n' in out
    assert '  - delete role "Interns"\n' in out
    assert "      ~ cors.maxAge: 60 -> 120\n" in out
    assert '      + description: "Current conditions"\n' in out
    assert '      - notes: "temporary" -> null\n' in out
    assert '      ~ supportedHttpMethods: added "head"\n' in out  # a list: what it gains and loses
    assert "      + cors.maxAge: 60\n" in out  # nested desired fields are flattened


def test_secrets_show_as_sensitive_including_references() -> None:
    out = render_plan(mixed_plan())
    assert "      + systemDomainCredentialSecret: (sensitive)\n" in out
    assert "      + systemDomainAuthentication.password: (sensitive)\n" in out
    assert '      + systemDomainAuthentication.username: "svc"\n' in out
    assert "      ~ systemDomainCredentialSecret: (sensitive)\n" in out
    assert "${" not in out


def test_unchanged_fields_are_hidden() -> None:
    plan = Plan(steps=[Step("update", "service", "Weather", id="s", changes=(Change("version", "1", "2"),))])
    out = render_plan(plan)
    field_lines = [line for line in out.splitlines() if line.startswith("      ")]
    assert field_lines == ['      ~ version: "1" -> "2"']


def test_create_without_desired_uses_changes() -> None:
    plan = Plan(steps=[Step("create", "role", "Partners", changes=(Change("name", None, "Partners"),))])
    assert '      + name: "Partners"\n' in render_plan(plan)


def test_sections_for_unmanaged_ignored_and_warnings() -> None:
    out = render_plan(mixed_plan())
    assert "Unmanaged (left alone; use --prune to delete):\n  service \"Legacy\"\n  package \"Old Partners\"\n" in out
    assert "  endpoint:Weather/Current:cache.cacheTtl (reason: ops tune this by hand)\n" in out
    assert "Warning: weather.yaml:12:9: services[0].endpoints[0].notes: deprecated field\n" in out


def test_target_loses_credentials_and_query() -> None:
    out = render_plan(mixed_plan())
    assert out.startswith("Target: https://api.example.com/v3/rest\n")
    assert "tok3n" not in out and "access_token" not in out


def test_color_only_when_asked() -> None:
    plain = render_plan(mixed_plan())
    colored = render_plan(mixed_plan(), color=True)
    assert "\x1b[" not in plain
    assert "\x1b[32m+\x1b[0m create service" in colored
    assert "\x1b[31m-\x1b[0m delete role" in colored


def test_output_is_deterministic() -> None:
    assert render_plan(mixed_plan()) == render_plan(mixed_plan())


def _result() -> ApplyResult:
    return ApplyResult(
        done=[StepOutcome("service:Weather", "create"), StepOutcome("role:Interns", "delete")],
        failed=[StepOutcome("endpoint:Weather/Forecast", "create",
                            "400 requestPathAlias: duplicate")],
        skipped=[StepOutcome("plan:Weather Partners/Gold", "update",
                             "depends on endpoint:Weather/Forecast, which failed")],
        calls=9, write_calls=4, read_calls=5, seconds=1.25,
    )


def test_apply_summary_partial_matches_golden(golden: Golden) -> None:
    golden("apply_partial.txt", render_apply_summary(_result()))


def test_apply_summary_headlines() -> None:
    ok = ApplyResult(done=[StepOutcome("service:Weather", "create")], calls=2, write_calls=1, read_calls=1)
    assert "Apply complete: 1 created, 0 updated, 0 deleted.\n" in render_apply_summary(ok)
    assert "Apply finished partially: 1 created, 0 updated, 1 deleted; 1 failed, 1 skipped." in (
        render_apply_summary(_result()))
    failed = ApplyResult(failed=[StepOutcome("service:Weather", "create", "401 unauthorized")],
                         stopped="daily quota exhausted (ERR_403_DEVELOPER_OVER_RATE)")
    out = render_apply_summary(failed)
    assert "Apply failed: nothing was written; 1 failed." in out
    assert "Stopped early: daily quota exhausted" in out
    assert '  + create service "Weather": 401 unauthorized\n' in out


def test_apply_summary_scrubs_secret_values_from_reasons() -> None:
    plan = mixed_plan()
    result = ApplyResult(failed=[StepOutcome("endpoint:Weather/Forecast", "create",
                                             f"400 systemDomainCredentialSecret: {plan.secret_values[next(iter(plan.secret_values))]} too long")])
    out = render_apply_summary(result, plan=plan)
    assert "hunter2" not in out
    assert "systemDomainCredentialSecret: (sensitive) too long" in out


def test_the_budget_line_under_the_totals() -> None:
    plan = mixed_plan()
    plan.budget = Budget(reads=8, lease=4, writes=6, checks=5, qps=4.0)
    assert render_plan(plan).endswith("Plan: 2 to create, 2 to update, 1 to delete.\n"
                                      "Budget: 23 calls (8 reads, 4 lease, 6 writes, 5 checks), about 6 s at --qps 4.\n")
    plan.budget = Budget(reads=8, lease=4, writes=6, checks=5)
    assert render_plan(plan).endswith("Budget: 23 calls (8 reads, 4 lease, 6 writes, 5 checks) "
                                      "(no client-side rate limit).\n")
