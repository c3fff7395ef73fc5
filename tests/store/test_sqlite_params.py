"""SQLite rows bound without sqlite3's adaptation: None as a NULL literal of the statement,
texts as bytearrays. The rows must go in as given, in their order, whatever their None
values' pattern."""

from __future__ import annotations

import itertools
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.store import open_store
from kernelindex_sdk.store._sqlite_params import (
    in_statements,
    values_clause,
    without_nulls,
)


def _insert_all(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows as a table gives them back after going in through :func:`without_nulls`."""
    db = sqlite3.connect(":memory:")
    width = len(rows[0])
    names = [f"c{i}" for i in range(width)]
    db.execute(f"CREATE TABLE t (n INTEGER PRIMARY KEY, {', '.join(names)})")
    count = 0
    for nulls, part in without_nulls(rows):
        if nulls:
            assert all(None not in row for row in part)
            assert all(len(row) == width - len(nulls) for row in part)
        cursor = db.executemany(
            f"INSERT INTO t ({', '.join(names)}) VALUES ({values_clause(width, nulls)})",  # noqa: S608
            part,
        )
        count += cursor.rowcount
    assert count == len(rows)
    return db.execute(f"SELECT {', '.join(names)} FROM t ORDER BY n").fetchall()  # noqa: S608


@pytest.mark.parametrize("seed", range(8))
def test_rows_of_any_none_pattern_go_in_unchanged_and_in_order(seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 (test data)
    width = rng.randint(1, 6)
    # A few patterns in long stretches, or a new one at almost every row.
    stretch = rng.choice([1, 2, 40])
    rows = []
    for _ in range(rng.randint(1, 200)):
        if not rows or rng.random() < 1 / stretch:
            pattern = [rng.random() < 0.4 for _ in range(width)]
        rows.append(tuple(None if none else rng.choice([1, 2.5, "x", ""]) for none in pattern))
    assert _insert_all(rows) == rows


def test_every_value_none_and_none_at_all() -> None:
    assert _insert_all([(None, None)] * 3) == [(None, None)] * 3
    assert without_nulls([(1, "a"), (2, "b")]) == [(frozenset(), [(1, "a"), (2, "b")])]
    assert without_nulls([]) == []


def test_a_single_kept_value_is_still_a_row() -> None:
    assert without_nulls([(None, 7), (None, 8)]) == [(frozenset({0}), [(7,), (8,)])]


def test_patterns_that_alternate_at_every_row_keep_their_nones_in_one_part() -> None:
    rows = [(None, 1) if i % 2 else (1, None) for i in range(64)]
    assert without_nulls(rows) == [(frozenset(), rows)]
    assert _insert_all(rows) == rows


def test_consecutive_parts_keep_the_rows_order() -> None:
    rows = [(1, None)] * 20 + [(None, 2)] * 20 + [(3, None)] * 20
    parts = without_nulls(rows)
    assert [nulls for nulls, _ in parts] == [frozenset({1}), frozenset({0}), frozenset({1})]
    assert list(itertools.chain.from_iterable(part for _, part in parts)) == (
        [(1,)] * 20 + [(2,)] * 20 + [(3,)] * 20
    )


def test_runs_with_and_without_provenance_in_one_file_keep_their_nulls(tmp_path: Path) -> None:
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
    url = f"sqlite:///{tmp_path / 's.sqlite3'}"
    with open_store(url) as store:
        assert store.ingest([path]).added == 40
    db = sqlite3.connect(tmp_path / "s.sqlite3")
    rows = db.execute(
        "SELECT r.name, r.commit_id, r.branch, typeof(t.record_text), t.record_text"
        " FROM runs r JOIN run_texts t ON t.seq = r.seq ORDER BY r.seq"
    ).fetchall()
    assert [row[0] for row in rows] == [f"run-{i:02d}" for i in range(40)]
    for i, (_, commit, branch, kind, text) in enumerate(rows):
        assert (commit, branch) == ((f"{i:040x}", "main") if i % 3 == 0 else (None, None))
        assert kind == "text"
        assert text == dumps(docs[i], indent=None)


@pytest.mark.parametrize("seed", range(8))
def test_looking_at_the_nullable_positions_only_gives_the_same_parts(seed: int) -> None:
    """Where None can only be at the positions named, the parts are those of looking at
    every position."""
    rng = random.Random(seed)  # noqa: S311 (test data)
    width = rng.randint(2, 8)
    nullable = sorted(rng.sample(range(width), rng.randint(1, width)))
    stretch = rng.choice([1, 3, 40])
    rows = []
    for _ in range(rng.randint(1, 300)):
        if not rows or rng.random() < 1 / stretch:
            pattern = [i in nullable and rng.random() < 0.5 for i in range(width)]
        rows.append(tuple(None if none else rng.choice([1, "x", 2.5]) for none in pattern))
    assert without_nulls(rows, nullable) == without_nulls(rows)


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 11, 12, 13])
def test_rows_in_statements_keep_every_value_in_order(count: int) -> None:
    rows = [(i, f"t{i}", None if i % 2 else 1.5) for i in range(count)]
    statements, rest = in_statements(rows, 4)
    assert all(len(values) == 4 * 3 for values in statements)
    assert len(rest) == count % 4
    flat = [value for values in statements for value in values]
    assert flat + [value for row in rest for value in row] == [v for row in rows for v in row]


def test_rows_of_no_values_are_left_as_they_are() -> None:
    assert in_statements([(), (), ()], 2) == ([], [(), (), ()])


def _lower_limit(backend: Any, limit: int) -> None:
    """The connection's limit of parameters a statement, as a build of SQLite with that
    SQLITE_MAX_VARIABLE_NUMBER has it (Python 3.11 on; 3.10 takes the module's guess)."""
    setlimit = getattr(backend._db, "setlimit", None)
    if setlimit is not None:
        setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)


@pytest.mark.parametrize("count", [1, 63, 64, 65, 128, 200])
# SQLite's own limit of parameters a statement, before 3.32 (999: 49 runs of 20 values
# a statement), and one that leaves a single run a statement.
@pytest.mark.parametrize("limit", [32766, 999, 25])
def test_multi_row_inserts_number_runs_in_order_and_skip_stored_ones(
    tmp_path: Path, count: int, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's insert of runs in statements of many rows: each run its number in the
    rows' order, one already stored gets none, and its texts go in beside them (a file's
    runs have distinct names: validation refuses a name given twice)."""
    from kernelindex_sdk.store import _backend
    from kernelindex_sdk.store._extract import RUN_COLUMNS

    monkeypatch.setattr(_backend, "_SQLITE_MAX_PARAMETERS", limit)

    with open_store(tmp_path / "s.sqlite3") as store:
        backend = store._backend
        _lower_limit(backend, limit)
        columns = (*RUN_COLUMNS, "group_id")
        digest = "sha256:" + "0" * 64

        def row(name: str, commit: str | None) -> tuple[Any, ...]:
            values = dict.fromkeys(columns)
            values.update(
                name=name, observed_at="t", status="passed", commit_id=commit, median_ns=5,
                workload_digest=digest, implementation_digest=digest, protocol_digest=digest,
                environment_digest=digest, labels="{}", annotations="{}", source="s",
                ingested_at="t", group_id=1,
            )  # fmt: skip
            return tuple(values[column] for column in columns)

        with backend.transaction():
            first = backend.insert_runs(columns, [row("stored", None)])
            rows = [row(f"r{i}", "c" if i % 5 == 0 else None) for i in range(count)]
            rows.insert(count // 2, row("stored", "x"))
            seqs = backend.insert_runs(columns, rows)
            texts = [(seq, f"text {seq}".encode(), "line") for seq in seqs if seq is not None]
            backend.insert_texts(texts)
        assert list(first) == [1]
        assert seqs == [*range(2, 2 + count // 2), None, *range(2 + count // 2, 2 + count)]
        found = backend.execute(
            "SELECT r.seq, r.name, r.commit_id, t.record_text FROM runs r"
            " JOIN run_texts t ON t.seq = r.seq ORDER BY r.seq"
        )
    assert found == [
        (seq, f"r{i}", "c" if i % 5 == 0 else None, f"text {seq}")
        for i, seq in enumerate(s for s in seqs if s is not None)
    ]


def test_a_limit_lower_than_the_connection_said_inserts_one_row_a_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the limit cannot be asked (Python 3.10) and the guess is too high, SQLite
    refuses the many-row statement as it prepares it, before any row: the rows go in
    one a statement, every one, in order."""
    from kernelindex_sdk.store import _backend

    monkeypatch.setattr(_backend.SQLiteBackend, "_max_parameters", lambda self: 32766)
    with open_store(tmp_path / "s.sqlite3") as store:
        backend = store._backend
        if not hasattr(backend._db, "setlimit"):
            pytest.skip("Connection.setlimit came with Python 3.11")
        backend._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100)
        with backend.transaction():
            backend.insert_texts([(i, f"text {i}".encode(), "line") for i in range(1, 131)])
        found = backend.execute("SELECT seq, record_text FROM run_texts ORDER BY seq")
    assert found == [(i, f"text {i}") for i in range(1, 131)]
