"""The saved-plan file (``apimctl.plans.file``): written whole, read back only when apply can
execute it, every problem of a bad one named as ``path: what``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.plans.file import check_destination, load_plan, plan_problems, plan_schema, save_plan
from apimctl.plans.model import FORMAT_VERSION, Change, Fingerprint, Plan, Step, Unmanaged

ROOT = Path(__file__).resolve().parents[3]

SECRET = "systemDomainCredentialSecret"


def saved() -> Plan:
    """A plan with every action, a nested kind, a dependency, a secret and a fingerprint."""
    return Plan(
        steps=[
            Step("create", "domain", "example.com", desired={"domain": "example.com"}),
            Step("update", "service", "Weather", id="s1", changes=(Change("version", "1", "2"),),
                 desired={"name": "Weather", "version": "2"}),
            Step("create", "endpoint", "Weather/Forecast", parent="service:Weather", parent_id="s1",
                 changes=(Change(SECRET, None, None, sensitive=True),),
                 depends_on=("domain:example.com", "service:Weather"),
                 desired={"name": "Forecast", SECRET: "${FORECAST_SECRET}"}),
            Step("delete", "role", "Interns", id="r9"),
        ],
        unmanaged=[Unmanaged("package", "Legacy", "p1")],
        fingerprints={"service:Weather": Fingerprint("service", "Weather", "s1", None, 4),
                      "role:Interns": Fingerprint("role", "Interns", "r9", "2026-01-01T00:00:00Z")},
        ignored=[{"target": "service:Weather:description", "reason": "edited by hand"}],
        target="http://apim.test/v3/rest",
        warnings=["a warning"],
    )


def test_a_saved_plan_round_trips(tmp_path: Path) -> None:
    plan = saved()
    path = tmp_path / "plan.json"
    save_plan(plan, str(path))
    again = load_plan(str(path))
    assert again == plan and again.dumps() == plan.dumps()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]  # no temporary left


def test_a_saved_plan_names_the_apimctl_version_that_wrote_it(tmp_path: Path) -> None:
    from apimctl import __version__

    data = json.loads(saved().dumps())
    assert list(data)[:2] == ["format_version", "apimctl_version"]
    assert data["apimctl_version"] == __version__
    assert "apimctl_version" not in saved().to_json()  # the JSON output (and its goldens) unchanged
    assert plan_problems(data) == []


@pytest.mark.parametrize("version", ["2.0", "1.99", "1", "1.x"])
def test_a_plan_of_an_incompatible_format_names_both_versions(tmp_path: Path, version: str) -> None:
    from apimctl import __version__

    data = {**json.loads(saved().dumps()), "format_version": version, "apimctl_version": "9.1.0"}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PlanError) as info:
        load_plan(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: saved plan has format_version {version!r}; "
                              f"this apimctl reads {FORMAT_VERSION}")
    assert f"(apimctl {__version__})" in message and "written by apimctl 9.1.0" in message
    assert "plan again" in message


def test_the_packaged_schema_is_the_documented_one() -> None:
    packaged = ROOT / "src" / "apimctl" / "schemas" / "plan.schema.json"
    assert packaged.read_bytes() == (ROOT / "schemas" / "plan.schema.json").read_bytes()
    jsonschema.Draft202012Validator.check_schema(plan_schema())


def test_the_schema_knows_every_kind() -> None:
    # a read-only kind (organizations) is never planned: no step, fingerprint or unmanaged entry
    planned = [k.name for k in kinds.KINDS if not k.read_only]
    assert plan_schema()["$defs"]["kind"]["enum"] == planned


def _step(index: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for name, value in fields.items():
            if value is _GONE:
                del data["steps"][index][name]
            else:
                data["steps"][index][name] = value
    return edit


_GONE = object()


def _set(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.__setitem__(name, value)


# every check the hand-written reader made, with the words of its message
EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "unknown-kind": (_step(0, kind="spaceship"), "steps[0].kind: unknown kind 'spaceship' (known: domain, role"),
    "unknown-action": (_step(0, action="explode"),
                       "steps[0].action: expected one of create, update, delete, got 'explode'"),
    "create-without-object": (_step(0, desired=None), "steps[0].desired: expected the object to create, got null"),
    "delete-with-object": (_step(3, desired={"name": "x"}), "steps[3].desired: expected null"),
    "dangling-depends-on": (_step(2, depends_on=["service:Nope"]),
                            "steps[2].depends_on: 'service:Nope' is not a step of this plan"),
    "depends-on-a-number": (_step(2, depends_on=7), "steps[2].depends_on: expected an array, got a number"),
    "depends-on-a-list-of-numbers": (_step(2, depends_on=[7]),
                                     "steps[2].depends_on[0]: expected an address KIND:KEY, got a number"),
    "changes-a-string": (_step(0, changes="x"), "steps[0].changes: expected an array, got the string 'x'"),
    "change-path-missing": (_step(1, changes=[{"before": 1, "after": 2}]), "steps[1].changes[0]: missing path"),
    "sensitive-change-with-a-value": (
        _step(2, changes=[{"path": SECRET, "before": None, "after": "hunter2", "sensitive": True}]),
        "steps[2].changes[0].after: expected '(sensitive)', got 'hunter2'"),
    "step-a-number": (lambda d: d.__setitem__("steps", [5, *d["steps"]]),
                      "steps[0]: expected an object, got a number"),
    "steps-a-string": (_set("steps", "abc"), "steps: expected an array, got the string 'abc'"),
    "duplicate-step": (lambda d: d["steps"].append(dict(d["steps"][0])), "steps[4]: a second step for domain:example.com"),
    "fingerprints-a-string": (_set("fingerprints", "x"), "fingerprints: expected an object, got the string 'x'"),
    "fingerprint-without-id": (lambda d: d["fingerprints"]["service:Weather"].__setitem__("id", None),
                               "fingerprints['service:Weather'].id: expected a string, got null"),
    "id-an-object": (_step(0, id={"a": 1}), "steps[0].id: expected a string or null, got an object"),
    "update-without-id": (_step(1, id=None), "steps[1].id: an update needs the live object's id, got null"),
    "delete-with-empty-id": (_step(3, id=""), "steps[3].id: a delete needs the live object's id, got the string ''"),
    "key-null": (_step(0, key=None), "steps[0].key: expected a string, got null"),
    "key-missing": (_step(0, key=_GONE), "steps[0]: missing key"),
    "fields-missing": (_step(0, key=_GONE, id=_GONE), "steps[0]: missing key, id"),
    "key-empty": (_step(0, key=""), "steps[0].key: must not be empty"),
    "address-of-another-object": (_step(1, address="service:Climate"),
                                  "steps[1].address: 'service:Climate' does not match kind and key ('service:Weather')"),
    "parent-not-an-address": (_step(2, parent="Weather"),
                              "steps[2].parent: expected the parent's address KIND:KEY, or null, got 'Weather'"),
    "unknown-field": (_step(0, extra=1), "steps[0].extra: not a field of a saved plan"),
    "target-a-number": (_set("target", 5), "target: expected a string, got a number"),
    "warnings-an-object": (_set("warnings", {}), "warnings: expected an array, got an object"),
    "unmanaged-kind": (lambda d: d["unmanaged"][0].__setitem__("kind", "x"), "unmanaged[0].kind: unknown kind 'x'"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_problem_is_named_where_and_what(edit: str) -> None:
    data = json.loads(saved().dumps())
    assert plan_problems(data) == []
    change, expected = EDITS[edit]
    change(data)
    problems = plan_problems(data)
    assert any(p.startswith(expected) for p in problems), problems


def test_problems_come_in_document_order_and_the_error_counts_the_rest(tmp_path: Path) -> None:
    data = json.loads(saved().dumps())
    for step in data["steps"]:
        step["kind"] = "x"
    data["target"] = 5
    problems = plan_problems(data)
    assert [p.split(":")[0] for p in problems][:5] == [
        "target", "steps[0].kind", "steps[0].address", "steps[1].kind", "steps[1].address"]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PlanError) as info:
        load_plan(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: not a valid saved plan: target: expected a string, got a number; ")
    assert message.count(";") == 4 and message.endswith(f"(and {len(problems) - 5} more)")


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", ":1:2: not a saved plan (invalid JSON: Expecting property name"),
    ("[1, 2]", ": not a saved plan (no `steps`)"),
    ('{"format_version": "9.0", "steps": []}', ": saved plan has format_version '9.0'; this apimctl reads 1.0"),
    ('{"steps": []}', ": saved plan has format_version ''"),
    ('{"format_version": "1.0", "steps": [{"kind": "role"}]}', ": not a valid saved plan: "),
    ("[" * 100_000 + "]" * 100_000, ": not a saved plan (JSON nested too deeply)"),
])
def test_a_file_that_is_not_a_saved_plan(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(PlanError) as info:
        load_plan(str(path))
    assert str(info.value).startswith(str(path) + message)


def test_binary_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(b"\x80\x81")
    with pytest.raises(PlanError, match=r"not a saved plan \(not UTF-8 text: byte 0x80 at offset 0\)"):
        load_plan(str(path))
    with pytest.raises(PlanError, match=r"nope\.json: cannot read the saved plan: No such file"):
        load_plan(str(tmp_path / "nope.json"))


def test_a_plan_is_saved_only_where_it_can_be(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    for out, why in [(tmp_path, "give a file name, not a directory"),
                     (tmp_path / "nodir" / "p.json", "does not exist"),
                     (tmp_path / "afile" / "p.json", "does not exist")]:
        with pytest.raises(PlanError, match=why):
            check_destination(str(out))
        with pytest.raises(PlanError, match=why):
            save_plan(saved(), str(out))
