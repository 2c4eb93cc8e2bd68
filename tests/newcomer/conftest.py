"""The newcomer tier: the README's quick start, run as printed, from a fresh HOME."""

from __future__ import annotations

import pytest

from tests.live import mark_real


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """It runs the real client: the ``real`` tier (not in the PostgreSQL pass)."""
    mark_real(__file__, items)
