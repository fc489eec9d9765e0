"""Options shared by the whole suite.

``--update-goldens`` rewrites golden files (scenario plans, renderer outputs) from the current
output instead of comparing against them; ``APIMCTL_UPDATE_GOLDENS=1`` does the same.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite golden files from the current output; review the diff")
