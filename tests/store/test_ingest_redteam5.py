"""Hostile and odd input against ingest's guarantees (issue 22), on SQLite and PostgreSQL.

Ingest takes each record apart as it is read and keeps only its text and columns in a
batch; these pin what that must not change: a run seen again in another form is the same
record, a clash or a failure in a later batch leaves the store as it was, and the first
arrival keeps its text and provenance.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.errors import RecordSetError, StoreError
from kernelindex_sdk.merge import merge_paths
from kernelindex_sdk.store import Store, _ingest


def lines(path: Path, docs: list[dict[str, Any]]) -> Path:
    """Write ``docs`` as published compact JSON Lines."""
    path.write_text("".join(dumps(d, indent=None, validate=False) + "\n" for d in docs))
    return path


def copy(doc: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(doc))  # type: ignore[no-any-return]


def with_commit(doc: dict[str, Any], commit: str) -> dict[str, Any]:
    annotated = copy(doc)
    provenance.annotate(annotated, provenance.Provenance(commit=commit))
    return annotated


def runs(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [bundle(params={"tokens": start + i, "dtype": "fp32"}) for i in range(n)]


def exported(store: Store) -> list[str]:
    return list(store.export_lines())


def counts(report: Any) -> tuple[int, int, int, int, int]:
    return (
        report.added,
        report.identical,
        report.provenance_only,
        report.refused,
        report.clashes,
    )


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three records a batch, so that a few records span several."""
    monkeypatch.setattr(_ingest, "BATCH", 3)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"tokens":5}', '"tokens":5.0}'),
        ('"tokens":5}', '"tokens":5E0}'),
        ('"tokens":5}', '"tokens":0.5e1}'),
    ],
    ids=["5.0", "5E0", "0.5e1"],
)
def test_an_integer_written_as_a_float_is_the_same_record(
    store: Store, tmp_path: Path, old: str, new: str
) -> None:
    """``5`` and ``5.0`` are one JSON value (RFC 8785 writes both as ``5``, the digests and
    merge agree): a run stored with one and seen again with the other is identical, not a
    clash; with provenance added it is the same measurement seen again."""
    doc = bundle(params={"tokens": 5, "dtype": "fp32"})
    first = lines(tmp_path / "first.jsonl", [doc])
    assert store.ingest([first]).added == 1
    before = exported(store)
    text = first.read_text()
    assert old in text
    again = tmp_path / "again.jsonl"
    again.write_text(text.replace(old, new))
    assert merge_paths([first, again]).duplicates == 1
    assert counts(store.ingest([again])) == (0, 1, 0, 0, 0)
    annotated = tmp_path / "annotated.jsonl"
    annotated.write_text(
        lines(tmp_path / "x.jsonl", [with_commit(doc, "abc")]).read_text().replace(old, new)
    )
    assert counts(store.ingest([annotated])) == (0, 0, 1, 0, 0)
    assert exported(store) == before


def test_an_integer_stored_as_a_float_is_the_same_record(store: Store, tmp_path: Path) -> None:
    """The other way round: stored as ``5.0``, seen again as ``5``."""
    doc = bundle(params={"tokens": 5, "dtype": "fp32"})
    text = lines(tmp_path / "x.jsonl", [doc]).read_text()
    first = tmp_path / "first.jsonl"
    first.write_text(text.replace('"tokens":5}', '"tokens":5.0}'))
    assert store.ingest([first]).added == 1
    assert counts(store.ingest([tmp_path / "x.jsonl"])) == (0, 1, 0, 0, 0)
    assert exported(store) == [first.read_text()]


def test_a_number_of_another_value_is_still_a_clash(store: Store, tmp_path: Path) -> None:
    """Numbers compare by value, never by less: a p80 of ``100000.5`` or
    ``100001.0`` is not the stored ``100000``."""
    first = lines(tmp_path / "first.jsonl", runs(1))
    assert store.ingest([first]).added == 1
    old = '"value":100000,"metric":"latency","statistic":"p80"'
    for value in ["100000.5", "100001.0"]:
        text = first.read_text()
        assert old in text
        other = tmp_path / "other.jsonl"
        other.write_text(text.replace(old, old.replace("100000", value)))
        report = store.ingest([other])
        assert (report.refused, report.clashes) == (1, 1), value
        assert [p.problem.code for p in report.problems] == ["store-clash"]


@pytest.mark.usefixtures("small_batches")
def test_a_clash_in_a_later_batch_leaves_the_store_as_it_was(store: Store, tmp_path: Path) -> None:
    """Two batches go in before the third finds a clash: the file is refused whole and
    the store holds exactly what it held before (rows, objects, texts)."""
    stored = runs(4)
    assert store.ingest([lines(tmp_path / "a.jsonl", stored)]).added == 4
    before = (exported(store), store.rows())
    changed = copy(stored[2])
    changed["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    fresh = runs(6, start=100)
    new_protocol = bundle(params={"tokens": 999, "dtype": "fp32"}, timer="cuda_graph")
    report = store.ingest([lines(tmp_path / "b.jsonl", [*fresh, stored[0], new_protocol, changed])])
    assert (report.added, report.refused, report.clashes) == (0, 9, 1)
    assert [str(p).split(": ")[0] for p in report.problems] == [f"{tmp_path / 'b.jsonl'}:9"]
    assert (exported(store), store.rows()) == before
    assert store.spec("protocol", new_protocol["run"]["spec"]["protocolDigest"]) is None


@pytest.mark.usefixtures("small_batches")
def test_an_invalid_record_after_a_stored_duplicate_refuses_the_file(
    store: Store, tmp_path: Path
) -> None:
    """A record already stored, then an invalid one in a later batch: nothing goes in and
    the duplicate is not counted as skipped."""
    stored = runs(2)
    assert store.ingest([lines(tmp_path / "a.jsonl", stored)]).added == 2
    before = exported(store)
    bad = bundle(params={"tokens": 50, "dtype": "fp32"})
    bad["run"]["spec"]["timing"]["latencyNs"]["median"] = -1
    report = store.ingest([lines(tmp_path / "b.jsonl", [stored[0], *runs(3, 10), bad])])
    assert counts(report) == (0, 0, 0, 5, 0)
    assert [p.problem.code for p in report.problems] == ["minimum"]
    assert exported(store) == before


@pytest.mark.usefixtures("small_batches")
def test_provenance_only_repeats_across_batches_and_files_keep_the_first_arrival(
    store: Store, tmp_path: Path
) -> None:
    """The same runs arrive without provenance, then with commit ``aaa`` (and one new run
    in a later batch), then with ``bbb`` given on ingest: each keeps its first text."""
    docs = runs(5)
    assert store.ingest([lines(tmp_path / "a.jsonl", docs[:2])]).added == 2
    first = exported(store)
    report = store.ingest([lines(tmp_path / "b.jsonl", [with_commit(d, "aaa") for d in docs])])
    assert counts(report) == (3, 0, 2, 0, 0)
    after_b = exported(store)
    assert after_b[:2] == first
    assert all('"kernelindex.dev/commit":"aaa"' in line for line in after_b[2:])
    report = store.ingest([lines(tmp_path / "c.jsonl", docs)], commit="bbb")
    assert counts(report) == (0, 0, 5, 0, 0)
    assert exported(store) == after_b
    assert [row.commit for row in store.rows()] == [None, None, "aaa", "aaa", "aaa"]


@pytest.mark.usefixtures("small_batches")
def test_an_object_repeated_in_a_later_batch_with_one_byte_changed_is_refused(
    store: Store, tmp_path: Path
) -> None:
    """The first batch stores an implementation; a run two batches on declares its digest
    for a spec one byte apart: the file is refused whole, in the same file and across
    files."""
    docs = runs(7)
    odd = copy(docs[6])
    odd["run"]["spec"]["implementation"]["provider"] = "torcH"
    report = store.ingest([lines(tmp_path / "a.jsonl", [*docs[:6], odd])])
    assert (report.added, report.refused) == (0, 7)
    assert [p.problem.code for p in report.problems] == ["digest-clash"]
    assert store.rows() == []
    assert store.ingest([lines(tmp_path / "b.jsonl", docs[:6])]).added == 6
    before = exported(store)
    report = store.ingest([lines(tmp_path / "c.jsonl", [*runs(4, 50), odd])])
    assert (report.added, report.refused) == (0, 5)
    assert [p.problem.code for p in report.problems] == ["digest-clash"]
    assert exported(store) == before


@pytest.mark.usefixtures("small_batches")
def test_a_store_failure_half_way_rolls_the_file_back(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store fails on the file's third batch, after two went in: the error reaches the
    caller as a StoreError and none of the file's rows, texts or objects stay."""
    backend = type(store._backend)
    insert = backend.insert_runs
    calls = []

    def failing(self: Any, rows: Any) -> Any:
        calls.append(len(rows))
        if len(calls) == 3:
            raise StoreError(source="test", reason="disk full")
        return insert(self, rows)

    monkeypatch.setattr(backend, "insert_runs", failing)
    docs = runs(8)
    with pytest.raises(StoreError, match="disk full"):
        store.ingest([lines(tmp_path / "a.jsonl", docs)])
    assert calls == [3, 3, 2]
    assert exported(store) == []
    assert store.spec("workload", docs[0]["run"]["spec"]["workloadDigest"]) is None
    monkeypatch.setattr(backend, "insert_runs", insert)
    assert store.ingest([tmp_path / "a.jsonl"]).added == 8


def test_more_than_a_batch_with_a_name_repeated_past_it_is_refused_whole(
    store: Store, tmp_path: Path
) -> None:
    """2,001 records, the real batch size: the last repeats the first's name (byte for
    byte): the file is refused and the first batch's 2,000 runs are rolled back; the same
    file without the repeat goes in, and again is 2,001 identical."""
    docs = runs(_ingest.BATCH + 1)
    report = store.ingest([lines(tmp_path / "a.jsonl", [*docs, docs[0]])])
    assert (report.added, report.refused) == (0, _ingest.BATCH + 2)
    assert [p.problem.code for p in report.problems] == ["duplicate-name"]
    assert store.rows() == []
    clean = lines(tmp_path / "b.jsonl", docs)
    assert store.ingest([clean]).added == _ingest.BATCH + 1
    assert counts(store.ingest([clean])) == (0, _ingest.BATCH + 1, 0, 0, 0)
    assert "".join(exported(store)) == clean.read_text()


def test_a_file_name_that_is_not_utf8_is_stored_and_named(store: Store, tmp_path: Path) -> None:
    """A name whose bytes are not UTF-8 neither breaks the insert nor the clash message:
    its bytes show as ``\\xNN``; the record is exported as it was read."""
    doc = runs(1)[0]
    path = lines(tmp_path / os.fsdecode(b"caf\xe9.jsonl"), [doc])
    assert store.ingest([path]).added == 1
    assert exported(store) == [path.read_text()]
    changed = copy(doc)
    changed["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    report = store.ingest([lines(tmp_path / "b.jsonl", [changed])])
    assert report.clashes == 1
    assert "caf\\xe9.jsonl:1" in str(report.problems[0])


@pytest.mark.parametrize("text", ["", "\n\n"], ids=["empty", "blank-lines"])
def test_an_empty_json_lines_file_adds_nothing_and_refuses_nothing(
    store: Store, tmp_path: Path, text: str
) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(text)
    report = store.ingest([path])
    assert counts(report) == (0, 0, 0, 0, 0)
    assert report.ok
    assert exported(store) == []


def test_a_standalone_document_with_other_metadata_under_its_name_is_a_clash(
    store: Store, tmp_path: Path
) -> None:
    """A protocol document on its own, seen again with the same spec but another label, is
    another record under the same name: refused, as merge refuses it, and the stored one
    is kept; the same document in another layout (or key order) is identical."""
    protocol = bundle()["protocol"]
    first = tmp_path / "protocol.json"
    first.write_text(dumps(protocol, validate=False) + "\n")
    assert store.ingest([first]).added == 1
    before = exported(store)
    compact = tmp_path / "compact.jsonl"
    compact.write_text(json.dumps(dict(reversed(list(protocol.items())))) + "\n")
    assert counts(store.ingest([compact])) == (0, 1, 0, 0, 0)
    labelled = copy(protocol)
    labelled["metadata"]["labels"] = {"team": "kernels"}
    other = tmp_path / "labelled.json"
    other.write_text(dumps(labelled, validate=False) + "\n")
    with pytest.raises(RecordSetError, match="duplicate-name"):
        merge_paths([first, other])
    report = store.ingest([other])
    assert (report.refused, report.clashes) == (1, 1)
    assert [p.problem.code for p in report.problems] == ["store-clash"]
    assert exported(store) == before


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize(
    "tail",
    [b'{"run": "caf\xe9"}\n', b'{"run": {"kind": "Bench'],
    ids=["not-utf8", "cut-short"],
)
def test_a_file_that_goes_bad_after_two_batches_leaves_nothing(
    store: Store, tmp_path: Path, tail: bytes
) -> None:
    """Six good records (two batches, stored inside the file's transaction), then a line
    that is not UTF-8 or a record cut short: the file is refused whole, with one problem
    on line 7, and nothing of it stays; the six alone go in."""
    good = lines(tmp_path / "good.jsonl", runs(6))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(good.read_bytes() + tail)
    report = store.ingest([bad])
    assert (report.added, report.refused) == (0, 7)
    assert [str(p).split(":")[1] for p in report.problems] == ["7"]
    assert exported(store) == []
    assert store.ingest([good]).added == 6
