"""The bad-input corpus: every case prints exactly its expected located problems."""

from __future__ import annotations

import pytest

from apimctl.manifests import validate
from apimctl.render.problems import render_text

from .corpus_cases import CASES, Case


def test_corpus_is_large_and_names_are_unique() -> None:
    assert len(CASES) >= 60
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, workdir) -> None:
    workdir(case.files)
    result = validate(case.paths, case.overlays, case.env)
    assert [render_text(p) for p in result.problems] == case.expected
    errors = [line for line in case.expected if ": warning: " not in line]
    assert result.valid is not errors


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_read_in_the_worker(case: Case, workdir, in_the_worker: list[object]) -> None:
    """The same problems, at the same places, when the files are read in the worker process
    (positions not recorded there are read again here, from the file)."""
    workdir(case.files)
    result = validate(case.paths, case.overlays, case.env)
    assert [render_text(p) for p in result.problems] == case.expected
    assert None not in in_the_worker  # read there, not here after a failure
