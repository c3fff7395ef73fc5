"""Layout 1 to 2: real version-1 stores, made by kernelindex-sdk 0.4.0's code, migrated.

The fixtures (tests/fixtures/README.md) hold 8 runs of the H200 sweep ingested with
provenance, the published example bundle (a ``.json`` document) and a protocol
document on its own: the SQLite file as 0.4.0 left it, and the PostgreSQL store as
``pg_dump`` wrote it.
"""

# The queries name constant tables and columns only.
# ruff: noqa: S608

from __future__ import annotations

import gzip
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import pytest

from kernelindex_sdk.store import LAYOUT_VERSION, StoreLayoutError, open_store
from kernelindex_sdk.store._export import export_line

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"
# The columns layout 2 keeps in runs.
RUN_COLUMNS = (
    "seq, name, status, observed_at, commit_id, branch, commit_time, median_ns, p20_ns,"
    " p80_ns, workload_digest, implementation_digest, protocol_digest, environment_digest,"
    " labels, annotations, source, ingested_at"
)

Query = Callable[[str], list[tuple[Any, ...]]]


def _sqlite_v1(tmp_path: Path) -> str:
    path = tmp_path / "v1.sqlite3"
    with gzip.open(FIXTURES / "store-v1.sqlite3.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return str(path)


def _sqlite_query(path: str) -> Iterator[Query]:
    db = sqlite3.connect(path)
    try:
        yield lambda sql: db.execute(sql).fetchall()
    finally:
        db.close()


def _postgres_v1(url: str) -> str:
    psycopg = pytest.importorskip("psycopg")
    schema = parse_qs(urlsplit(url).query)["options"][0].split("=")[1]
    dump = (FIXTURES / "store-v1-postgresql.sql").read_text(encoding="utf-8")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA {schema}")
        db.execute(dump.replace("kernelindex_v1", schema))
    return url


def _postgres_query(url: str) -> Iterator[Query]:
    import psycopg

    db = psycopg.connect(url, autocommit=True)
    try:
        yield lambda sql: db.execute(sql).fetchall()
    finally:
        db.close()


@attrs.frozen
class Stores:
    """A layout-1 store and an empty place for a new one, each with direct queries."""

    url: str
    connect: Callable[[], Iterator[Query]]
    fresh_url: str
    fresh_connect: Callable[[], Iterator[Query]]


@pytest.fixture(params=["sqlite", "postgresql"])
def v1(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    """A layout-1 store, queried directly (not through the package), and a new one."""
    if request.param == "sqlite":
        path = _sqlite_v1(tmp_path)
        fresh = str(tmp_path / "fresh.sqlite3")
        return Stores(
            f"sqlite:///{path}",
            lambda: _sqlite_query(path),
            f"sqlite:///{fresh}",
            lambda: _sqlite_query(fresh),
        )
    url = _postgres_v1(str(request.getfixturevalue("postgres_url")))
    fresh = str(request.getfixturevalue("postgres_server").new_database())
    return Stores(url, lambda: _postgres_query(url), fresh, lambda: _postgres_query(fresh))


def _one(connect: Callable[[], Iterator[Query]], sql: str) -> list[tuple[Any, ...]]:
    for query in connect():
        return query(sql)
    raise AssertionError("unreachable")


def _columns(url: str, connect: Callable[[], Iterator[Query]], table: str) -> list[Any]:
    if url.startswith("sqlite"):
        return [row[1:] for row in _one(connect, f"PRAGMA table_info({table})")]
    return _one(
        connect,
        "SELECT column_name, data_type, is_nullable, column_default"
        " FROM information_schema.columns WHERE table_schema = current_schema()"
        f" AND table_name = '{table}' ORDER BY ordinal_position",
    )


def test_fixture_is_layout_one(v1: Stores) -> None:
    connect = v1.connect
    version = _one(connect, "SELECT value FROM kernelindex_layout")
    assert version == [("1",)]
    assert _one(connect, "SELECT count(*) FROM runs") == [(9,)]


def test_v1_store_is_migrated_with_every_value_kept(v1: Stores) -> None:
    url, connect = v1.url, v1.connect
    runs = _one(connect, f"SELECT {RUN_COLUMNS} FROM runs ORDER BY seq")
    texts = _one(connect, "SELECT seq, record_text, record_form FROM runs ORDER BY seq")
    names = [row[1] for row in runs]
    documents = _one(connect, "SELECT record_text, record_form FROM documents ORDER BY seq")
    expected_export = [export_line(t, f) for t, f in documents] + [
        export_line(t, f) for _, t, f in texts
    ]
    # rows() orders by commit time, else observedAt, then name.
    order = sorted((r[6] or r[3], r[1]) for r in runs)

    with open_store(url) as store:
        assert dict(store.records(names)) == {r[1]: t[1] for r, t in zip(runs, texts, strict=True)}
        assert list(store.export_lines()) == expected_export
        assert [row.name for row in store.rows()] == [name for _, name in order]

    assert _one(connect, "SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    assert _one(connect, f"SELECT {RUN_COLUMNS} FROM runs ORDER BY seq") == runs
    assert (
        _one(connect, "SELECT seq, record_text, record_form FROM run_texts ORDER BY seq") == texts
    )

    # The migrated tables are those a new store of this version gets.
    with open_store(v1.fresh_url):
        pass
    for table in ("runs", "run_texts"):
        assert _columns(url, connect, table) == _columns(url, v1.fresh_connect, table)
    if not url.startswith("sqlite"):
        index = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1"
        assert _one(connect, index) == _one(v1.fresh_connect, index)


def test_migrated_store_takes_new_records_after_the_old(v1: Stores) -> None:
    url, connect = v1.url, v1.connect
    (last,) = _one(connect, "SELECT max(seq) FROM runs")[0]
    with open_store(url) as store:
        report = store.ingest([SWEEP])
        # The fixture holds the sweep's first 8 runs with provenance: seen again.
        assert (report.added, report.provenance_only, report.ok) == (56, 8, True)
        lines = SWEEP.read_text(encoding="utf-8").splitlines(keepends=True)
        assert list(store.export_lines())[-56:] == lines[8:]
    first_new = _one(connect, "SELECT min(seq) FROM runs WHERE source LIKE '%h200-jsd-sweep%'")
    assert first_new[0][0] > last
    with open_store(url) as store:
        assert len(store.rows()) == 9 + 56


def test_a_failing_migration_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    path = _sqlite_v1(tmp_path)
    with sqlite3.connect(path) as db:
        # Someone's own table in the way of the migration's.
        db.execute("CREATE TABLE runs_v2 (x INTEGER)")
    with pytest.raises(
        StoreLayoutError,
        match=r"cannot migrate store layout version 1 to 4 \(the store is unchanged\):"
        r" sqlite: table runs_v2 already exists",
    ):
        open_store(path)
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT value FROM kernelindex_layout").fetchall() == [("1",)]
        assert db.execute("SELECT count(record_text) FROM runs").fetchall() == [(9,)]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "run_texts" not in tables
    finally:
        db.close()


def _pg_v1(request: pytest.FixtureRequest) -> tuple[str, Query]:
    """A PostgreSQL layout-1 store and direct queries to it (closed at the test's end)."""
    url = _postgres_v1(str(request.getfixturevalue("postgres_url")))
    queries = _postgres_query(url)
    request.addfinalizer(queries.close)
    return url, next(queries)


def _run(url: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        for statement in statements:
            db.execute(statement)


def test_postgres_migration_waits_for_a_layout_one_writer(request: pytest.FixtureRequest) -> None:
    """A 0.4.0 client's run, uncommitted while the migration starts, keeps its text."""
    import psycopg

    url, query = _pg_v1(request)
    writer = psycopg.connect(url)
    try:
        # As 0.4.0 wrote a run: its text and form in runs; left uncommitted for now.
        writer.execute(
            "INSERT INTO runs (name, status, observed_at, commit_id, branch, commit_time,"
            " median_ns, p20_ns, p80_ns, workload_digest, implementation_digest,"
            " protocol_digest, environment_digest, labels, annotations, record_text,"
            " record_form, source, ingested_at)"
            " SELECT 'late-run', status, observed_at, commit_id, branch, commit_time,"
            " median_ns, p20_ns, p80_ns, workload_digest, implementation_digest,"
            " protocol_digest, environment_digest, labels, annotations,"
            # Its own record (export checks that a run's text is that run's).
            " replace(record_text, '\"' || name || '\"', '\"late-run\"'),"
            " record_form, source, ingested_at FROM runs ORDER BY seq LIMIT 1"
        )
        failures: list[BaseException] = []

        def migrate() -> None:
            try:
                with open_store(url):
                    pass
            except BaseException as err:  # reported by the test's thread
                failures.append(err)

        opener = threading.Thread(target=migrate)
        opener.start()
        waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'runs'::regclass"
        deadline = time.monotonic() + 30
        while query(waiting) == [(0,)]:
            assert opener.is_alive(), "the migration did not wait for the writer"
            assert time.monotonic() < deadline, "the migration never reached the runs table"
            time.sleep(0.02)
        writer.commit()
        opener.join(timeout=60)
        assert not opener.is_alive()
        assert failures == []
    finally:
        writer.close()

    assert query("SELECT value FROM kernelindex_layout") == [(str(LAYOUT_VERSION),)]
    assert query("SELECT count(*) FROM runs WHERE name = 'late-run'") == [(1,)]
    without_text = "SELECT r.name FROM runs r LEFT JOIN run_texts t USING (seq) WHERE t.seq IS NULL"
    assert query(without_text) == []
    with open_store(url) as store:
        assert list(store.records(["late-run"])) != []
        ((documents,),) = query("SELECT count(*) FROM documents")
        assert len(list(store.export_lines())) == documents + 10


def test_postgres_migration_keeps_a_teams_indexes_and_grants(
    request: pytest.FixtureRequest,
) -> None:
    url, query = _pg_v1(request)
    schema = query("SELECT current_schema()")[0][0]
    reader = f"kernelindex_reader_{schema}"
    _run(url, f"CREATE ROLE {reader}")
    try:
        _run(url, "CREATE INDEX runs_by_branch ON runs (branch, commit_time)")
        _run(url, f"GRANT SELECT ON runs TO {reader}")
        with open_store(url) as store:
            assert len(store.rows()) == 9
        indexes = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        assert ("runs_by_branch",) in query(indexes)
        granted = f"SELECT has_table_privilege('{reader}', 'runs', 'SELECT')"
        assert query(granted) == [(True,)]
        columns = _columns(url, lambda: _postgres_query(url), "runs")
        assert "record_text" not in {row[0] for row in columns}
    finally:
        _run(url, f"DROP OWNED BY {reader}")
        _run(url, f"DROP ROLE {reader}")


def test_postgres_read_only_role_cannot_migrate(request: pytest.FixtureRequest) -> None:
    url, query = _pg_v1(request)
    schema = query("SELECT current_schema()")[0][0]
    role = f"kernelindex_ro_{schema}"
    _run(url, f"CREATE ROLE {role} LOGIN")
    try:
        _run(url, f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        _run(url, f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        with pytest.raises(
            StoreLayoutError,
            match=r"cannot migrate store layout version 1 to 4 \(the store is unchanged\):"
            r" postgresql: permission denied for table runs",
        ):
            open_store(url.replace("postgresql://postgres@", f"postgresql://{role}@", 1))
        assert query("SELECT value FROM kernelindex_layout") == [("1",)]
        assert query("SELECT count(record_text) FROM runs") == [(9,)]
    finally:
        _run(url, f"DROP OWNED BY {role}")
        _run(url, f"DROP ROLE {role}")
