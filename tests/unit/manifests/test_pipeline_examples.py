"""Every ``examples/*/`` validates (warnings allowed).

An example is either a directory of manifests, or a ``base/`` directory with per-environment
``overlays/*/``, each validated on its own and with every overlay. Variables come from the
example's ``example.env`` (placeholder values), never from the process environment.
Examples without any manifest (for instance CI snippets) have nothing to validate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl.manifests import validate

EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples"


def _manifest_runs() -> list[tuple[str, Path, Path | None]]:
    runs: list[tuple[str, Path, Path | None]] = []
    for example in sorted(p for p in EXAMPLES_DIR.iterdir() if p.is_dir()):
        base = example / "base" if (example / "base").is_dir() else example
        if not any(base.glob("*.y*ml")):
            continue
        runs.append((example.name, base, None))
        overlays = example / "overlays"
        for overlay in sorted(p for p in overlays.iterdir() if p.is_dir()) if overlays.is_dir() else []:
            runs.append((f"{example.name}+{overlay.name}", base, overlay))
    return runs


def _env(example: Path) -> dict[str, str]:
    path = example / "example.env"
    if not path.is_file():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if "=" in line and not line.lstrip().startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


RUNS = _manifest_runs()


def test_there_are_examples() -> None:
    assert any(name == "weather" for name, _, _ in RUNS)


@pytest.mark.parametrize(("name", "base", "overlay"), RUNS, ids=[r[0] for r in RUNS])
def test_example_validates(name: str, base: Path, overlay: Path | None) -> None:
    example = EXAMPLES_DIR / name.split("+")[0]
    result = validate([str(base)], [str(overlay)] if overlay else [], env=_env(example))
    assert [str(p) for p in result.problems if p.severity == "error"] == []
    assert result.objects > 0


@pytest.mark.parametrize(("name", "base", "overlay"), RUNS, ids=[r[0] for r in RUNS])
def test_example_read_in_the_worker_is_read_the_same(name: str, base: Path, overlay: Path | None,
                                                      request: pytest.FixtureRequest) -> None:
    """Files read in the worker process (``apimctl.workers``) give the same manifest: the same
    documents, secrets, warnings and every position, down to the deepest node."""
    example = EXAMPLES_DIR / name.split("+")[0]
    args = ([str(base)], [str(overlay)] if overlay else [], _env(example))
    here = validate(*args).manifest
    answers = request.getfixturevalue("in_the_worker")
    apart = validate(*args).manifest
    assert here is not None and apart is not None
    assert apart.doc == here.doc and apart.secret_refs == here.secret_refs
    assert apart.warnings == here.warnings and apart.files == here.files
    assert dict(apart.positions) == dict(here.positions)  # every table completed from the files
    assert answers and None not in answers  # the worker answered: nothing was read here instead
