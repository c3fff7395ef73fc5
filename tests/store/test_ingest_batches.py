"""How a file's records wait in a batch, and what a batch keeps of them.

Ingest takes each record apart as it is read (its run's columns, the objects new to the
file, its checks) and keeps only the record's text and columns until its batch goes in:
not the parsed value, several times the text's size for a large bundle.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.store import Store, _ingest, open_store
from kernelindex_sdk.store._connect import SQLITE_CACHE_KIB

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def lines(path: Path, docs: list[dict[str, Any]]) -> Path:
    """Write ``docs`` as published compact JSON Lines."""
    text = "".join(dumps(d, indent=None, validate=False) + "\n" for d in docs)
    path.write_text(text, encoding="utf-8")
    return path


def with_commit(doc: dict[str, Any], commit: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(doc))
    provenance.annotate(copy, provenance.Provenance(commit=commit))
    return copy


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three records a batch, so that a few records span several."""
    monkeypatch.setattr(_ingest, "BATCH", 3)


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[_ingest._Batch]:
    """Every batch a file's ingest hands to the store, as it hands it."""
    seen: list[_ingest._Batch] = []
    store = _ingest._FileIngest._store

    def keep(self: _ingest._FileIngest, batch: _ingest._Batch) -> None:
        seen.append(batch)
        store(self, batch)

    monkeypatch.setattr(_ingest._FileIngest, "_store", keep)
    return seen


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float))


def test_a_batch_keeps_each_runs_text_and_columns_not_its_value(
    store: Store, batches: list[_ingest._Batch]
) -> None:
    """No parsed value waits in a batch: a run's entry holds its text (the bytes read),
    its document and its columns, each a string, a number or None (labels as JSON text)."""
    report = store.ingest([SWEEP])
    assert report.added == len(SWEEP.read_text(encoding="utf-8").splitlines())
    (batch,) = batches
    assert len(batch.rows) == len(batch.texts) == len(batch.documents) == report.added
    texts = SWEEP.read_bytes().splitlines()
    for index, text in enumerate(texts):
        assert batch.texts[index] == text
        assert batch.documents[index].line == index + 1
        row = batch.rows[index]
        assert row
        assert all(_scalar(column) for column in row)
        # The few that need a record (a run stored before, a problem) get one.
        record = batch.record(index)
        assert (record.raw, record.row, record.bundle, record.value) == (text, row, True, None)


@pytest.mark.usefixtures("small_batches")
def test_a_runs_stored_text_is_compared_with_its_text_read_again(
    store: Store, tmp_path: Path
) -> None:
    """A run stored before under another text is compared by value: its batch kept only its
    text, which is read again (other spacing, other key order and other number forms
    are the same record; a changed value is a clash)."""
    docs = [bundle(params={"tokens": i, "dtype": "fp32", "tiny": 1e-6}) for i in range(5)]
    assert store.ingest([lines(tmp_path / "a.jsonl", docs)]).added == 5
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text(
        "".join(
            json.dumps(doc, separators=(", ", ": "), sort_keys=True).replace("1e-06", "0.000001")
            + "\n"
            for doc in docs
        ),
        encoding="utf-8",
    )
    report = store.ingest([spaced])
    assert (report.added, report.identical, report.ok) == (0, 5, True)
    annotated = [with_commit(doc, "abc") for doc in docs]
    report = store.ingest([lines(tmp_path / "b.jsonl", annotated)])
    assert (report.added, report.provenance_only, report.ok) == (0, 5, True)
    changed = json.loads(json.dumps(docs[4]))
    changed["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    report = store.ingest([lines(tmp_path / "c.jsonl", [*docs[:4], changed])])
    assert (report.refused, report.clashes) == (5, 1)
    assert [str(p).split(": ", 2)[1] for p in report.problems] == ["/run/metadata/name"]


@pytest.mark.usefixtures("small_batches")
def test_a_commit_time_out_of_form_is_refused_as_validation_refuses_it_in_any_batch(
    store: Store, tmp_path: Path
) -> None:
    """A commit time out of the published form is a problem of the record, found by the
    reader as validate finds it: beside an invalid record in its batch or in the batch
    before, each is reported, and nothing is stored."""
    late = with_commit(bundle(params={"tokens": 1, "dtype": "fp32"}), "abc")
    late["run"]["metadata"]["annotations"]["kernelindex.dev/commit-time"] = "yesterday"
    bad = bundle(params={"tokens": 2, "dtype": "fp32"})
    bad["run"]["spec"]["timing"]["latencyNs"]["median"] = -1
    fresh = [bundle(params={"tokens": 10 + i, "dtype": "fp32"}) for i in range(4)]
    one_batch = lines(tmp_path / "one.jsonl", [late, bad, fresh[0]])
    report = store.ingest([one_batch])
    assert [p.problem.code for p in report.problems] == ["commit-time", "minimum"]
    two_batches = lines(tmp_path / "two.jsonl", [*fresh[:2], late, bad, fresh[2], fresh[3]])
    report = store.ingest([two_batches])
    assert [p.problem.code for p in report.problems] == ["commit-time", "minimum"]
    assert report.refused == 6
    assert store.rows() == []


def test_a_sqlite_connection_caches_the_documented_pages(tmp_path: Path) -> None:
    """Each connection caches up to SQLITE_CACHE_KIB of pages (docs/performance.md): SQLite's
    own default would hold 31 of the store's 64 KiB pages."""
    path = tmp_path / "s.sqlite3"
    with open_store(path) as store:
        # The store's own connection's settings (a test of the connection, not a query).
        connection = store._backend._db  # type: ignore[attr-defined]
        ((kib,),) = connection.execute("PRAGMA cache_size").fetchall()
        ((page,),) = connection.execute("PRAGMA page_size").fetchall()
    assert (kib, page, SQLITE_CACHE_KIB // (page // 1024)) == (-SQLITE_CACHE_KIB, 65536, 512)
    # A setting of the connection, not of the file: another program's keeps its own.
    # The log is the file's: a new store is made in write-ahead logging.
    with sqlite3.connect(path) as other:
        ((theirs,),) = other.execute("PRAGMA cache_size").fetchall()
        ((journal,),) = other.execute("PRAGMA journal_mode").fetchall()
    assert theirs != -SQLITE_CACHE_KIB
    assert journal == "wal"
