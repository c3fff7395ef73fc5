"""The store's layout: created on first use, its version recorded, a newer one refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _sql import mark, query

from kernelindex_sdk.errors import InputError, StoreError, StoreLayoutError
from kernelindex_sdk.store import DEFAULT_DB, LAYOUT_VERSION, Store, open_store, parse_url


def test_layout_version_is_recorded(store: Store) -> None:
    rows = query(store, "SELECT value FROM kernelindex_layout WHERE key = 'layout_version'")
    assert rows == [(str(LAYOUT_VERSION),)]


def test_reopening_keeps_the_records(store_url: str) -> None:
    fixture = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"
    with open_store(store_url) as store:
        store.ingest([fixture])
    with open_store(store_url, create=False) as store:
        assert len(store.rows()) == 64


def test_newer_layout_is_refused(store_url: str) -> None:
    with open_store(store_url):
        pass
    update = "UPDATE kernelindex_layout SET value = {} WHERE key = 'layout_version'"
    query(store_url, update.format(mark(store_url)), (str(LAYOUT_VERSION + 1),))
    newer = f"layout version {LAYOUT_VERSION + 1} is newer than this"
    with pytest.raises(StoreLayoutError, match=newer):
        open_store(store_url)


def test_layout_without_a_migration_is_refused(store_url: str) -> None:
    with open_store(store_url):
        pass
    query(store_url, "UPDATE kernelindex_layout SET value = '0' WHERE key = 'layout_version'")
    with pytest.raises(StoreLayoutError, match=r"store layout version 0 cannot be migrated"):
        open_store(store_url)


def test_tables_of_another_program_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runs (x INTEGER)")
    with pytest.raises(StoreLayoutError, match="holds tables runs but no kernelindex_layout"):
        open_store(str(path))


def test_a_file_that_is_no_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text("{}\n" * 100, encoding="utf-8")
    with pytest.raises(StoreError, match="file is not a database") as caught:
        open_store(str(path))
    assert isinstance(caught.value, InputError)


def test_absent_store_is_refused_without_create(tmp_path: Path) -> None:
    with pytest.raises(StoreLayoutError, match="no kernelindex store here"):
        open_store(str(tmp_path / "none.sqlite3"), create=False)
    assert not (tmp_path / "none.sqlite3").exists()


def test_url_forms() -> None:
    assert parse_url("x.db").target == "x.db"
    assert parse_url("sqlite:///x.db").target == "x.db"
    assert parse_url("sqlite:////srv/x.db").target == "/srv/x.db"
    assert parse_url("sqlite:///:memory:").target == ":memory:"
    pg = parse_url("postgresql://me:secret@db/records")
    assert (pg.dialect, pg.target) == ("postgresql", "postgresql://me:secret@db/records")
    assert pg.shown == "postgresql://me:***@db/records"
    assert parse_url("postgres://db/records").dialect == "postgresql"
    with pytest.raises(StoreError, match="unsupported store URL scheme 'mysql://'"):
        parse_url("mysql://db/records")


def test_default_store_is_the_environment_then_the_file() -> None:
    assert parse_url(None, {}).target == DEFAULT_DB == "kernelindex.sqlite3"
    assert parse_url(None, {"KERNELINDEX_DB": "postgresql://db/x"}).dialect == "postgresql"
    assert parse_url("y.db", {"KERNELINDEX_DB": "postgresql://db/x"}).target == "y.db"


def test_unreachable_postgres_is_a_store_error(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    url = f"postgresql://nobody:pw@/db?host={tmp_path}&port=1"
    with pytest.raises(StoreError, match=r"^postgresql://nobody:\*\*\*@/db") as caught:
        open_store(url)
    assert "pw" not in str(caught.value).split("?")[0]
