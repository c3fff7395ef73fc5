"""Commands that only read a store never change what they read, never take its write
lock, and never migrate it: only a command that writes (ingest, migrate) does.

Every read-only command (history in both formats, export to a file and to standard
output, site, compare --history) is run on files that are no store (an empty file, a text
file, another program's SQLite database) and on a store of the previous layout: each
exits 2 with one line, and the file's bytes and modification time are unchanged.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _cli_runner import run_in_process
from _layout3_store import layout3_store, snapshot
from _sql import query

from kernelindex_sdk.store import LAYOUT_VERSION, open_store

FIXTURES = Path(__file__).parent.parent / "fixtures"
SWEEP = FIXTURES / "h200-jsd-sweep.jsonl"


def _readers(db: str, out: Path) -> list[list[str]]:
    """Every command that reads a store and writes nothing to it."""
    return [
        ["history", "--db", db],
        ["history", "--db", db, "--format", "json"],
        ["export", "--db", db, "-o", str(out / "export.jsonl")],
        ["export", "--db", db],
        ["site", "--db", db, str(out / "site")],
        ["compare", "--history", "main", str(SWEEP), "--db", db],
    ]


def _no_store(kind: str, path: Path) -> None:
    if kind == "empty file":
        path.write_bytes(b"")
    elif kind == "text file":
        path.write_text('{"not": "a database"}\n' * 50, encoding="utf-8")
    else:
        db = sqlite3.connect(path)
        with db:
            db.execute("CREATE TABLE notes (body TEXT)")
            db.execute("INSERT INTO notes VALUES ('kept as it is')")
        db.close()


@pytest.mark.parametrize("kind", ["empty file", "text file", "another program's database"])
def test_a_reader_leaves_a_file_that_is_no_store_as_it_was(kind: str, tmp_path: Path) -> None:
    """No journal mode switched, no page written: an empty file stays empty."""
    path = tmp_path / "records.db"
    _no_store(kind, path)
    before = snapshot(str(path))
    for command in _readers(str(path), tmp_path):
        status, out, err = run_in_process(*command)
        assert (status, out) == (2, ""), (command, err)
        assert err.count("\n") == 1, err
        assert "Traceback" not in err
    assert snapshot(str(path)) == before
    # Nothing beside it either: no log or journal was begun.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.db"]


def test_a_reader_refuses_a_store_that_needs_migrating_and_leaves_it_as_it_was(
    store_url: str, tmp_path: Path
) -> None:
    layout3_store(store_url, [SWEEP], commit="c1", branch="main")
    before = snapshot(store_url)
    for command in _readers(store_url, tmp_path):
        status, out, err = run_in_process(*command)
        assert (status, out) == (2, ""), (command, err)
        assert err.count("\n") == 1, err
        assert (
            f"store layout version 3 needs migrating to {LAYOUT_VERSION}, which only a"
            f" command that writes does: run 'kernelindex migrate --db " in err
        )
    assert snapshot(store_url) == before
    assert not (tmp_path / "export.jsonl").exists()
    if store_url.startswith("sqlite"):
        # Nor the log files SQLite reads a write-ahead-logged store through: gone again.
        beside = sorted(path.name for path in tmp_path.iterdir())
        assert beside == ["store.sqlite3"]
    # The library's reader refuses it the same way.
    with pytest.raises(Exception, match="needs migrating"):
        open_store(store_url, create=False)
    assert snapshot(store_url) == before
    # A command that writes migrates it; then every reader reads it.
    status, _, err = run_in_process("migrate", "--db", store_url)
    assert status == 0
    assert f"migrated from layout version 3 to {LAYOUT_VERSION}" in err
    for command in _readers(store_url, tmp_path):
        status, _, err = run_in_process(*command)
        assert status == 0, (command, err)


def test_readers_do_not_wait_for_an_ingest_in_progress(tmp_path: Path) -> None:
    """Another connection holds the SQLite store's write lock (an ingest that has not
    committed): every reader still reads, without waiting for it, and sees none of its
    rows."""
    path = tmp_path / "s.sqlite3"
    with open_store(path) as store:
        assert store.ingest([SWEEP]).added == 64
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE runs SET median_ns = median_ns + 1")
        for command in _readers(str(path), tmp_path):
            status, _, err = run_in_process(*command)
            assert status == 0, (command, err)
        with open_store(path, create=False) as store:
            assert len(store.rows()) == 64
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_postgres_reader_runs_read_only_transactions(postgres_url: str) -> None:
    """The reader's session refuses any write, so that nothing it does can change the
    store."""
    with open_store(postgres_url) as store:
        assert store.ingest([SWEEP]).added == 64
    with open_store(postgres_url, create=False) as store:
        connection = store._backend._db  # type: ignore[attr-defined]
        ((read_only,),) = connection.execute("SHOW transaction_read_only").fetchall()
        assert read_only == "on"
        assert len(store.rows()) == 64
    assert query(postgres_url, "SELECT count(*) FROM runs") == [(64,)]


def test_an_ingest_into_a_store_opened_for_reading_opens_it_for_writing(
    store_url: str, tmp_path: Path
) -> None:
    """0.6.1's ``open_store(url, create=False).ingest(...)`` still stores the records."""
    with open_store(store_url):
        pass
    with open_store(store_url, create=False) as store:
        assert store.rows() == []
        assert store.ingest([SWEEP]).added == 64
        assert len(store.rows()) == 64
