"""Manifests in subdirectories (a warning, or ``--recursive``), and the summary's counts."""

from __future__ import annotations

from click.testing import CliRunner

from apimctl.cli import cli

from ..manifests.corpus_cases import DOMAINS, SERVICE


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False)
    return int(result.return_value or 0), result.stdout, result.stderr


LAYOUT = {"apimctl/m.yaml": DOMAINS + SERVICE, "apimctl/team/roles.yaml": "roles: [Ops]\n",
          "apimctl/team/more/roles.yaml": "roles: [Dev]\n",
          "apimctl/overlays/prod/o.yaml": "services:\n  - {name: Weather, version: '9'}\n",
          "apimctl/.hidden/x.yaml": "roles: [Hidden]\n"}


def test_unread_subdirectories_are_warned_about(workdir) -> None:
    workdir(LAYOUT)
    code, _, err = invoke("validate", "apimctl", "--overlay", "apimctl/overlays/prod")
    assert code == 0
    assert "Warning: apimctl/team holds 1 manifest file that is not read (only the files " \
           "directly in apimctl are): add apimctl/team to the paths, or use --recursive" in err
    assert "apimctl/team/more holds 1 manifest file" in err
    assert "overlays" not in err and ".hidden" not in err  # an overlay, a hidden folder
    assert err.rstrip().endswith("valid: 2 files, 4 objects")


def test_a_named_subdirectory_is_not_warned_about(workdir) -> None:
    workdir(LAYOUT)
    _, _, err = invoke("validate", "apimctl", "apimctl/team", "apimctl/team/more",
                       "--overlay", "apimctl/overlays/prod")
    assert "Warning" not in err and "valid: 4 files, 6 objects" in err


def test_recursive_reads_every_subdirectory_but_overlays(workdir) -> None:
    workdir(LAYOUT)
    code, _, err = invoke("validate", "apimctl", "--recursive", "--overlay", "apimctl/overlays/prod")
    assert code == 0 and "Warning" not in err
    assert err.strip() == "valid: 4 files, 6 objects"


def test_a_missing_path_reads_no_file(workdir) -> None:
    workdir({})
    code, out, err = invoke("validate", "nowhere")
    assert code == 1
    assert out == "nowhere: no such file or directory\n"
    assert err == "1 error; no manifest file was read\n"


CALL_TESTS = {"apimctl/m.yaml": DOMAINS + SERVICE,
              "apimctl/tests/weather.test.yaml": "calls:\n  - {name: a, url: 'http://a.example.com/', expect: {status: 200}}\n",
              "apimctl/tests/more.test.yml": "calls: []\n"}


def test_call_test_files_are_neither_warned_about_nor_read(workdir) -> None:
    workdir(CALL_TESTS)
    for extra in ((), ("--recursive",)):
        code, out, err = invoke("validate", "apimctl", *extra)
        assert (code, out) == (0, ""), err
        assert "Warning" not in err and err.strip() == "valid: 1 file, 4 objects"


def test_call_test_files_named_as_manifests_are_refused_with_the_reason(workdir) -> None:
    workdir(CALL_TESTS)
    code, out, _ = invoke("validate", "apimctl/tests/weather.test.yaml")
    assert code == 1
    assert out == "apimctl/tests/weather.test.yaml: a call-test file, not a manifest: run it with apimctl test\n"
    code, out, _ = invoke("validate", "apimctl/tests")
    assert (code, out) == (1, "apimctl/tests: no manifest files in this directory (its *.test.yaml files are call "
                          "tests: apimctl test reads them)\n")


def test_the_examples_with_call_tests_validate_without_a_warning(monkeypatch) -> None:
    from pathlib import Path

    examples = Path(__file__).resolve().parents[3] / "examples"
    folders = sorted({p.parent.parent for p in examples.rglob("tests/*.test.yaml")})
    assert examples / "weather" in folders and len(folders) == 5
    monkeypatch.setenv("FORECAST_BACKEND_SECRET", "x")  # the examples' placeholder secrets
    monkeypatch.setenv("PAYMENTS_BACKEND_KEY_SECRET", "x")
    for folder in folders:
        for extra in ((), ("--recursive",)):
            code, _, err = invoke("validate", str(folder), *extra)
            assert code == 0 and "Warning" not in err, err
