"""The workers run in the long-lived processes (the console, ``watch``): their tests'
rooms on PostgreSQL are reached as those processes reach them, through psycopg."""

from __future__ import annotations

import pytest


@pytest.fixture
def pg_client() -> str:
    """The ``room`` fixture's client on PostgreSQL (``tests.conftest.PG_CLIENTS``)."""
    return "psycopg"
