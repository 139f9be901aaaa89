"""Fixtures the HTTP transport tests share."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """A plain HTTP client, every wait bounded."""
    with httpx.Client(timeout=10) as client:
        yield client
