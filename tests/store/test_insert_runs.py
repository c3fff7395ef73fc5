"""Runs going into the store through a backend's ``insert_runs`` and ``insert_texts``: each
numbered in the rows' order, one already stored skipped, None stored as NULL, texts
beside their runs, on both backends."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _records import bundle
from _sql import query

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.store import Store, open_store
from kernelindex_sdk.store._layout import RUN_INSERT_COLUMNS


def test_runs_with_and_without_provenance_in_one_file_keep_their_nulls(
    store: Store, tmp_path: Path
) -> None:
    """A file whose runs alternate between carrying a commit and not: each run's columns
    as it gave them, NULL where it gave none."""
    docs = []
    for i in range(40):
        doc = bundle()
        doc["run"]["metadata"]["name"] = f"run-{i:02d}"
        if i % 3 == 0:
            provenance.annotate(doc, provenance.Provenance(commit=f"{i:040x}", branch="main"))
        docs.append(doc)
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    report = store.ingest([path])
    assert (report.added, report.without_commit) == (40, 26)
    rows = query(
        store,
        "SELECT r.name, r.commit_id, r.branch, t.record_text"
        " FROM runs r JOIN run_texts t ON t.seq = r.seq ORDER BY r.seq",
    )
    assert [row[0] for row in rows] == [f"run-{i:02d}" for i in range(40)]
    for i, (_, commit, branch, text) in enumerate(rows):
        assert (commit, branch) == ((f"{i:040x}", "main") if i % 3 == 0 else (None, None))
        assert text == dumps(docs[i], indent=None)


def _row(name: str, commit: str | None) -> tuple[Any, ...]:
    digest = "sha256:" + "0" * 64
    values = dict.fromkeys(RUN_INSERT_COLUMNS)
    values.update(
        name=name, observed_at="t", status="passed", commit_id=commit, median_ns=5,
        workload_digest=digest, implementation_digest=digest, protocol_digest=digest,
        environment_digest=digest, labels="{}", annotations="{}", source="s",
        ingested_at="t", group_id=1,
    )  # fmt: skip
    return tuple(values[column] for column in RUN_INSERT_COLUMNS)


@pytest.mark.parametrize("count", [1, 63, 64, 65, 200])
def test_runs_are_numbered_in_order_and_a_stored_one_is_skipped(store: Store, count: int) -> None:
    """Each run its number in the rows' order, one already stored gets none, and its
    texts go in beside them (a file's runs have distinct names: validation refuses a
    name given twice)."""
    backend = store._backend
    with backend.transaction():
        first = backend.insert_runs([_row("stored", None)])
        rows = [_row(f"r{i}", "c" if i % 5 == 0 else None) for i in range(count)]
        rows.insert(count // 2, _row("stored", "x"))
        seqs = backend.insert_runs(rows)
        numbered = [*first, *seqs]
        texts = [(seq, f"text {seq}".encode(), "line") for seq in numbered if seq is not None]
        backend.insert_texts(texts)
    assert len(first) == 1
    assert seqs[count // 2] is None
    numbers = [seq for seq in seqs if seq is not None]
    assert numbers == sorted(numbers)
    assert first[0] is not None
    assert first[0] < numbers[0]
    found = query(
        store,
        "SELECT r.seq, r.name, r.commit_id, t.record_text FROM runs r"
        " JOIN run_texts t ON t.seq = r.seq ORDER BY r.seq",
    )
    assert found[1:] == [
        (seq, f"r{i}", "c" if i % 5 == 0 else None, f"text {seq}") for i, seq in enumerate(numbers)
    ]


def test_a_sqlite_built_with_999_parameters_takes_and_gives_every_run(tmp_path: Path) -> None:
    """SQLite before 3.32 allows 999 parameters a statement: lookups go in chunks under it."""
    docs = []
    for i in range(1200):
        doc = bundle(params={"tokens": i % 7, "dtype": "fp32"})
        doc["run"]["metadata"]["name"] = f"run-{i:04d}"
        docs.append(doc)
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    with open_store(tmp_path / "s.sqlite3") as store:
        connection = store._backend._db  # type: ignore[attr-defined]
        if not hasattr(connection, "setlimit"):
            pytest.skip("Connection.setlimit came with Python 3.11")
        connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        assert store.ingest([path]).added == 1200
        assert store.ingest([path]).identical == 1200
        names = [f"run-{i:04d}" for i in range(1200)]
        assert len(store.rows(names=names)) == 1200
        assert len(list(store.export_lines(names=names))) == 1200
        assert [name for name, _ in store.records(names)] == names
