"""The store's tests in the PostgreSQL pass run on both clients of a PostgreSQL room."""

from __future__ import annotations

import pytest

from tests.conftest import PG_CLIENTS, postgres_pass


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test of this folder whose room service is the ``room`` fixture's (or that asks
    for ``pg_client`` itself) runs once on each client in the PostgreSQL pass: the libpq
    binding of the hooks and ``send``, and psycopg of the console and ``watch``."""
    if postgres_pass() and "pg_client" in metafunc.fixturenames:
        metafunc.parametrize("pg_client", PG_CLIENTS)
