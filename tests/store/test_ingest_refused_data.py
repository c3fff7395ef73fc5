"""A file whose data the database itself refuses (a PostgreSQL data exception or program
limit, SQLite's too big) is refused with the database's reason, naming the file, and the
next files still go in; a failure of the store itself (a full disk) stops the command."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps
from kernelindex_sdk.errors import StoreError
from kernelindex_sdk.store import Store


def _write(path: Path, name: str) -> Path:
    doc = bundle(params={"tokens": len(name), "dtype": "fp32"})
    doc["run"]["metadata"]["name"] = name
    path.write_text(dumps(doc, indent=None) + "\n", encoding="utf-8")
    return path


def _refusal(dialect: str) -> BaseException:
    if dialect == "sqlite":
        return sqlite3.DataError("string or blob too big")
    import psycopg

    return psycopg.errors.ProgramLimitExceeded("index row size 3000 exceeds btree maximum")


def test_data_the_database_refuses_refuses_its_file_only(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = type(store._backend)
    insert = backend.insert_runs
    refused = _write(tmp_path / "refused.jsonl", "refused")
    fine = _write(tmp_path / "fine.jsonl", "fine")

    def failing(self: Any, rows: Any) -> Any:
        if rows[0][0] == "refused":
            cause = _refusal(store.dialect)
            raise StoreError(source=store.url.shown, reason=f"{store.dialect}: {cause}") from cause
        return insert(self, rows)

    monkeypatch.setattr(backend, "insert_runs", failing)
    report = store.ingest([refused, fine])
    assert (report.added, report.refused) == (1, 1)
    (problem,) = report.problems
    assert problem.source == str(refused)
    assert problem.problem.message.startswith(
        f"the store refused the file's records: {store.dialect}"
    )
    assert problem.problem.code == "store-refused"
    assert [row.name for row in store.rows()] == ["fine"]


def test_a_failure_of_the_store_itself_stops_the_command(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = type(store._backend)

    def failing(self: Any, rows: Any) -> Any:
        raise StoreError(source=store.url.shown, reason="disk full") from OSError("disk full")

    monkeypatch.setattr(backend, "insert_runs", failing)
    with pytest.raises(StoreError, match="disk full"):
        store.ingest([_write(tmp_path / "a.jsonl", "a"), _write(tmp_path / "b.jsonl", "b")])
