"""A file whose data the database itself refuses (a PostgreSQL data exception or program
limit, SQLite's too big) is refused with the database's reason, naming the file, and the
next files still go in; a failure of the store itself (a full disk) stops the command.

Each backend says which of its failures are the data's (``DataRefusedError``): tested
here on the real databases; ingest's handling of one, on an injected failure."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps
from kernelindex_sdk.errors import StoreError
from kernelindex_sdk.store import Store
from kernelindex_sdk.store._backend import DataRefusedError


def _write(path: Path, name: str) -> Path:
    doc = bundle(params={"tokens": len(name), "dtype": "fp32"})
    doc["run"]["metadata"]["name"] = name
    path.write_text(dumps(doc, indent=None) + "\n", encoding="utf-8")
    return path


def test_each_backend_says_when_its_database_refuses_the_data(store: Store) -> None:
    backend = store._backend
    if store.dialect == "sqlite":
        # SQLite's longest value, as a build may set it: a longer text is too big.
        connection = backend._db  # type: ignore[attr-defined]
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000)
        row = ("sha256:" + "1" * 64, "jsd", "forward", "[" + "1," * 1000 + "1]")
    else:
        # jsonb parses the spec's text: another text than JSON is the data's fault.
        row = ("sha256:" + "1" * 64, "jsd", "forward", "{not json")
    with pytest.raises(DataRefusedError) as caught, backend.transaction():
        backend.insert_objects("workload", [row])
    assert caught.value.source == store.url.shown
    assert store.spec("workload", row[0]) is None


def test_data_the_database_refuses_refuses_its_file_only(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = type(store._backend)
    insert = backend.insert_runs
    refused = _write(tmp_path / "refused.jsonl", "refused")
    fine = _write(tmp_path / "fine.jsonl", "fine")

    def failing(self: Any, rows: Any) -> Any:
        if rows[0][0] == "refused":
            raise DataRefusedError(source=store.url.shown, reason="postgresql: value too long")
        return insert(self, rows)

    monkeypatch.setattr(backend, "insert_runs", failing)
    report = store.ingest([refused, fine])
    assert (report.added, report.refused) == (1, 1)
    (problem,) = report.problems
    assert problem.source == str(refused)
    assert problem.problem.message == (
        "the store refused the file's records: postgresql: value too long"
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
