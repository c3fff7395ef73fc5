"""Store fixtures: every store test runs on SQLite and on a real PostgreSQL server.

Without PostgreSQL's binaries the PostgreSQL cases are skipped on a developer's machine,
and fail under CI (``CI=true``), where .ci/run installs them: a store test must never
pass there without its server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _postgres_server import Server, find_bindir

from kernelindex_sdk.store import Store, open_store


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """A PostgreSQL server for the session (started on first use)."""
    bindir = find_bindir()
    if bindir is None:
        message = "PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    server = Server(bindir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: Server) -> str:
    """The URL of a fresh database in the session's server."""
    return postgres_server.new_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty store: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An open, empty store of each kind."""
    with open_store(store_url) as opened:
        yield opened
