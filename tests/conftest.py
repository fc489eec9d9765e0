"""Options shared by the whole suite.

``--update-goldens`` rewrites golden files (scenario plans, renderer outputs) from the current
output instead of comparing against them; ``APIMCTL_UPDATE_GOLDENS=1`` does the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite golden files from the current output; review the diff")


# The variables apimctl reads for its target: a CI runner sets ``CI`` (which refuses the
# embedded server), and a developer's shell or config file may name a real area. Every test
# starts without them; a test that needs one sets it.
_TARGET_VARIABLES = ("CI", "NO_COLOR", "APIMCTL_URL", "APIMCTL_TOKEN", "APIMCTL_API_KEY",
                     "APIMCTL_API_SECRET", "APIMCTL_USERNAME", "APIMCTL_PASSWORD", "APIMCTL_AREA",
                     "APIMCTL_PROFILE")


@pytest.fixture(autouse=True)
def _no_target_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in _TARGET_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "xdg-config"))


@pytest.fixture(autouse=True)
def _runs_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in its own temporary directory: what a command writes where it runs
    (an apply's journal in ``.apimctl/runs``, the embedded server's ``.apimctl/local.db``)
    lands there, never in the repository."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def _secrets_forgotten() -> object:
    """Every test starts with an empty scrubber and the default manifest policy (both live as
    long as the process or thread: one command, but many tests)."""
    from apimctl import sensitive
    from apimctl.manifests import environment

    sensitive.forget()
    environment.reset()
    yield
    sensitive.forget()
    environment.reset()


@pytest.fixture
def worker_answers(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The worker process allowed (``apimctl.workers``), whatever the environment says, and
    every answer taken from it recorded in the returned list (``None``: none came)."""
    from apimctl import workers

    monkeypatch.delenv(workers.ENV, raising=False)
    monkeypatch.setattr(workers, "_unavailable", False)
    answers: list[object] = []
    result = workers.result

    def recorded(future):  # type: ignore[no-untyped-def]
        answers.append(result(future))
        return answers[-1]

    monkeypatch.setattr(workers, "result", recorded)
    return answers
