"""The area of the traffic manager's tests, once per dialect per module (see support)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .support import Area, build


@pytest.fixture(scope="module", params=("spec", "mashery"))
def area(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Area]:
    with build(Path(tmp_path_factory.mktemp("traffic")), request.param) as built:
        yield built
