"""What a failure leaves in a store, on both backends: a writer killed (kill -9) in the
middle of a file, a full SQLite database, and filters or names written as SQL.

A file goes in in one transaction: killed or refused half-way, none of it stays, and the
store still opens and reads as before. A value is always a parameter, never SQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _records import bundle
from _sql import query

from kernelindex_sdk import dumps
from kernelindex_sdk.errors import StoreError
from kernelindex_sdk.store import Store, open_store

SRC = Path(__file__).resolve().parent.parent.parent / "src"

# Ingests a file in batches of 100, and stops for good once two batches went in, inside
# the file's transaction, saying so on standard output.
_STALLED_WRITER = """
import sys, time
from kernelindex_sdk.store import _ingest, open_store
_ingest.BATCH = 100
url, path = sys.argv[1], sys.argv[2]
with open_store(url) as store:
    backend = type(store._backend)
    insert = backend.insert_texts
    calls = []
    def stalled(self, rows):
        insert(self, rows)
        calls.append(len(rows))
        if len(calls) == 2:
            self.stored_runs([])  # the texts written, not only sent
            print("two batches in", flush=True)
            time.sleep(600)
    backend.insert_texts = stalled
    store.ingest([path])
"""


def _file(path: Path, prefix: str, count: int) -> Path:
    docs = []
    for i in range(count):
        doc = bundle(params={"tokens": i % 11, "dtype": "fp32"})
        doc["run"]["metadata"]["name"] = f"{prefix}-{i:04d}"
        docs.append(doc)
    path.write_text("".join(dumps(d, indent=None) + "\n" for d in docs), encoding="utf-8")
    return path


def test_a_writer_killed_half_way_through_a_file_leaves_none_of_it(
    store_url: str, tmp_path: Path
) -> None:
    with open_store(store_url) as store:
        assert store.ingest([_file(tmp_path / "first.jsonl", "first", 30)]).added == 30
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _STALLED_WRITER,
            store_url,
            str(_file(tmp_path / "b.jsonl", "b", 500)),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "two batches in\n"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=60)
    # PostgreSQL ends the killed client's session (and its transaction) once it sees
    # the connection gone; until then the rows were never visible to anyone.
    deadline = time.monotonic() + 30
    while store_url.startswith("postgresql") and query(
        store_url,
        "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'",
    ) != [(0,)]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    with open_store(store_url, create=False) as store:
        assert [row.name for row in store.rows()] == [f"first-{i:04d}" for i in range(30)]
        assert len(list(store.export_lines())) == 30
    assert query(store_url, "SELECT count(*) FROM run_texts") == [(30,)]
    with open_store(store_url) as store:
        assert store.ingest([tmp_path / "b.jsonl"]).added == 500


def test_a_full_sqlite_database_rolls_the_file_back(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with open_store(path) as store:
        assert store.ingest([_file(tmp_path / "first.jsonl", "first", 10)]).added == 10
        connection = store._backend._db  # type: ignore[attr-defined]
        # The file may grow by a few pages only, as on a full disk.
        ((pages,),) = connection.execute("PRAGMA page_count").fetchall()
        connection.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(StoreError, match="full"):
            store.ingest([_file(tmp_path / "big.jsonl", "big", 2000)])
        assert [row.name for row in store.rows()] == [f"first-{i:04d}" for i in range(10)]
        connection.execute("PRAGMA max_page_count = 1073741823")
        assert store.ingest([tmp_path / "big.jsonl"]).added == 2000


_HOSTILE = [
    "x' OR '1'='1",
    'x"; DROP TABLE runs; --',
    "%s",
    "%(name)s",
    "?",
    "first-0001') OR ('1'='1",
    "\\",
]


@pytest.mark.parametrize("value", _HOSTILE)
def test_filters_and_names_are_values_never_sql(store: Store, tmp_path: Path, value: str) -> None:
    assert store.ingest([_file(tmp_path / "first.jsonl", "first", 5)]).added == 5
    names = ("operation", "pass_", "provider", "hardware", "branch", "commit")
    filters: dict[str, Any] = dict.fromkeys(
        (*names, "workload_digest", "protocol_digest", "status"), value
    )
    for name, given in filters.items():
        assert store.rows(**{name: given}) == []
        assert list(store.export_lines(**{name: given})) == []
    assert store.rows(names=[value]) == []
    assert list(store.export_lines(names=[value, "first-0001"])) != []
    assert store.spec("workload", value) is None
    assert len(store.rows()) == 5
