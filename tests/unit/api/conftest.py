"""Fixtures of the API client tests (helpers live in ``clientkit``)."""

from __future__ import annotations

import pytest

from .clientkit import FakeApi, VirtualClock


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def api(clock: VirtualClock) -> FakeApi:
    return FakeApi(clock)
