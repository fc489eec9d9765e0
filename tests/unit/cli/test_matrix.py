"""``apimctl matrix``: the areas of ``apimctl.toml`` a change touches, as GitHub's
``strategy.matrix``, in apply's order; a bad ``[areas]`` declaration named by file and line."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.cli import cli
from tests.integration.inprocess import entry_point

PROFILES = """
[profiles.dev]
url = "https://dev.example.test/v3/rest"
token = "${DEV_TOKEN}"

[profiles.prod]
url = "https://prod.example.test/v3/rest"
token = "${PROD_TOKEN}"
"""

AREAS = PROFILES + """
[areas.prod]
profile = "prod"
paths = ["apimctl/base"]
overlays = ["apimctl/overlays/prod"]
order = 2
max_deletes = 0
max_affected_keys = 50

[areas.dev]
profile = "dev"
paths = ["apimctl/base", "apimctl/dev only.yaml"]
order = 1
"""


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> Callable[..., tuple[int, str, str]]:
    return entry_point(monkeypatch, capsys)


def matrix(config: Path, changed: str | None) -> dict[str, list[dict[str, Any]]]:
    args = ["matrix", "--config", str(config)]
    if changed is not None:
        args += ["--changed-files", "-"]
    done = CliRunner().invoke(cli, args, input=changed, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert done.output.count("\n") == 1  # one line: $GITHUB_OUTPUT takes it as it is
    result: dict[str, list[dict[str, Any]]] = json.loads(done.output)
    return result


def test_the_matrix_names_profile_arguments_and_gates(tmp_path: Path) -> None:
    config = tmp_path / "apimctl.toml"
    config.write_text(AREAS)
    assert matrix(config, "apimctl/overlays/prod/rates.yaml\nREADME.md\n") == {"include": [
        {"area": "prod", "profile": "prod", "args": ["apimctl/base", "--overlay", "apimctl/overlays/prod"],
         "gates": ["--max-deletes", "0", "--max-affected-keys", "50"]}]}
    everything = matrix(config, None)
    assert [e["area"] for e in everything["include"]] == ["dev", "prod"]  # by order, not by file
    assert everything["include"][0]["args"] == ["apimctl/base", "apimctl/dev only.yaml"]
    assert everything["include"][0]["gates"] == []
    assert matrix(config, "apimctl/dev only.yaml\n")["include"][0]["area"] == "dev"
    assert matrix(config, "./apimctl/base/x/y.yaml\n")["include"] == everything["include"]
    assert matrix(config, "apimctl.toml\n") == everything
    assert matrix(config, "") == {"include": []}
    assert matrix(config, "apimctl/basement.yaml\napimctl\n") == {"include": []}


def test_the_repository_file_is_found_from_a_subfolder(tmp_path: Path, run: Callable[..., tuple[int, str, str]],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "apimctl.toml").write_text(AREAS)
    (tmp_path / "apimctl" / "base").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "apimctl" / "base")
    code, out, err = run("matrix")
    assert code == 0, err
    assert [e["area"] for e in json.loads(out)["include"]] == ["dev", "prod"]


@pytest.mark.parametrize(("text", "wanted"), [
    (PROFILES + '[areas.dev]\nprofile = "dev"\npaths = ["a"]\n\n[areas.dev]\nprofile = "dev"\n',
     ["apimctl.toml:13: area 'dev' is declared twice (first at line 9)"]),
    (PROFILES + '[areas.qa]\nprofile = "staging"\npaths = ["a"]\n',
     ["apimctl.toml:10: [areas.qa]: profile 'staging' is not a [profiles.NAME] of apimctl.toml "
      "(defined: dev, prod)"]),
    (PROFILES + '[areas.qa]\nprofile = "dev"\npaths = ["a"]\ncolour = "red"\n',
     ["apimctl.toml:12: [areas.qa]: unknown key 'colour'"]),
    (PROFILES + '[areas.qa]\nprofile = "dev"\n\n[areas.qb]\npaths = "a"\norder = "first"\n',
     ["apimctl.toml:9: [areas.qa]: missing paths", "apimctl.toml:13: [areas.qb]: paths must be a list",
      "apimctl.toml:14: [areas.qb]: order must be a number", "apimctl.toml:12: [areas.qb]: missing profile"]),
    (PROFILES + '[areas.qa]\nprofile = "dev"\npaths = ["../elsewhere"]\nmax_deletes = -1\n',
     ["apimctl.toml:11: [areas.qa]: paths must be paths inside the repository, not '../elsewhere'",
      "apimctl.toml:12: [areas.qa]: max_deletes must be a whole number, 0 or more"]),
    (PROFILES + '[areas."eu west"]\nprofile = "dev"\npaths = []\n',
     ["apimctl.toml:9: area name 'eu west': letters, digits, '-', '_' and '.' only",
      "apimctl.toml:11: [areas.eu west]: paths must name at least one path"]),
    (PROFILES, ["apimctl.toml: declares no area"]),
    ("[areas.qa\n", ["apimctl.toml: not valid TOML"]),
])
def test_a_bad_declaration_is_named_by_file_and_line(tmp_path: Path, text: str, wanted: list[str],
                                                     run: Callable[..., tuple[int, str, str]]) -> None:
    config = tmp_path / "apimctl.toml"
    config.write_text(text)
    code, out, err = run("matrix", "--config", str(config))
    assert code == 1 and out == ""
    assert "Traceback" not in err
    for line in wanted:
        assert f"{tmp_path}/{line}" in err, err


def test_no_file_and_an_unreadable_list_are_errors(tmp_path: Path, run: Callable[..., tuple[int, str, str]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = run("matrix")
    assert code == 1 and "no apimctl.toml here" in err
    (tmp_path / "apimctl.toml").write_text(AREAS)
    code, _, err = run("matrix", "--changed-files", "missing.txt")
    assert code == 1 and "missing.txt: cannot read the changed files" in err


SEGMENTS = st.sampled_from(["a", "b", "c", "d e"])
PATHS = st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda parts: "/".join(parts))
AREA = st.fixed_dictionaries({"paths": st.lists(PATHS, min_size=1, max_size=3),
                              "overlays": st.lists(PATHS, max_size=2),
                              "order": st.none() | st.integers(0, 3)})
LAYOUTS = st.dictionaries(st.sampled_from(["dev", "qa", "staging", "prod", "eu-1"]), AREA,
                          min_size=1, max_size=5)
CHANGES = st.lists(st.one_of(PATHS, st.just("apimctl.toml"), st.just("README.md")), max_size=6)


def _under(file: str, root: str) -> bool:
    return file == root or PurePosixPath(root) in PurePosixPath(file).parents


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=LAYOUTS, changed=CHANGES)
def test_an_area_is_in_the_matrix_iff_a_changed_file_lies_under_its_paths(
        layout: dict[str, dict[str, object]], changed: list[str]) -> None:
    lines = [PROFILES]
    for name, area in layout.items():
        lines += [f"[areas.{name}]", 'profile = "dev"', f"paths = {json.dumps(area['paths'])}",
                  f"overlays = {json.dumps(area['overlays'])}"]
        lines += [f"order = {area['order']}"] if area["order"] is not None else []
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "apimctl.toml"
        config.write_text("\n".join(lines) + "\n")
        got = matrix(config, "\n".join(changed) + "\n")["include"]
    roots = {name: [*area["paths"], *area["overlays"]] for name, area in layout.items()}  # type: ignore[misc]
    touched = {name for name, paths in roots.items()
               if "apimctl.toml" in changed or any(_under(f, r) for f in changed for r in paths)}
    assert {e["area"] for e in got} == touched
    assert len(got) == len(touched)
    declared = list(layout)
    rank = {name: (layout[name]["order"] if layout[name]["order"] is not None else float("inf"),
                   declared.index(name)) for name in layout}
    assert [e["area"] for e in got] == sorted(touched, key=lambda n: rank[n])  # type: ignore[arg-type, return-value]
