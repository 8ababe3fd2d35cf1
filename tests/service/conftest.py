"""Fixtures of the service tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.service.api_support import FAST_HASHERS, reset_throttles


@pytest.fixture
def fresh_throttles(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Throttle counters emptied before and after the test (they live in the cache, which outlives a test),
    and the fast password hasher (the flows sign in many accounts). Modules that drive the API through
    many requests use it for every test: ``pytestmark = pytest.mark.usefixtures("fresh_throttles")``."""
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    yield
    reset_throttles()
