"""A run's columns as ingest stores them, and runs going in over batches of any size.

A run's columns come from one call (:func:`_extract.run_row`): its latency statistics in
whole ns (the first of each kind in a unit of time), its labels' and annotations' text,
its provenance, its degraded mark, and whether its latencies fit the 64-bit columns. A
batch keeps rows, texts and documents, not a record a run, and a run whose group of
values the file met before skips the object lookups: what the store holds must not
change.
"""

# A query below writes the labels' column for the store's dialect (no input in it).
# ruff: noqa: S608

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from _records import bundle
from _sql import json_text, query

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk.conditions import degraded_reason
from kernelindex_sdk.store import Store, open_store
from kernelindex_sdk.store._extract import RUN_COLUMNS, run_columns, run_row

_AT = RUN_COLUMNS.index


def _run(**spec: Any) -> dict[str, Any]:
    digests = {f"{k}Digest": k for k in ("workload", "implementation", "protocol", "environment")}
    return {
        "spec": {"status": "passed", "observedAt": "t", **digests, **spec},
        "metadata": {"name": "n"},
    }


def _latency(unit: str, value: float, statistic: str, metric: str = "latency") -> dict[str, Any]:
    return {"unit": unit, "value": value, "metric": metric, "statistic": statistic}


def test_latency_columns_take_the_first_of_each_statistic_in_a_unit_of_time() -> None:
    run = _run(
        timing={"latencyNs": {"median": 1500}},
        measurements=[
            _latency("ms", 9.0, "median"),
            _latency("GB/s", 4.0, "p20"),
            _latency("bytes", 4.0, "p20", metric="memory"),
            _latency("us", 2.0, "p20"),
            _latency("us", 3.0, "p20"),
            _latency("s", 1e-6, "p80"),
            _latency("ns", 7.0, "mean"),
        ],
    )
    row, fits = run_row(run, "s", "t")
    assert row[_AT("median_ns") : _AT("p80_ns") + 1] == (1500, 2000, 1000)
    assert all(type(value) is int for value in row[_AT("median_ns") : _AT("p80_ns") + 1])
    assert fits
    assert run_row(_run(), "s", "t")[0][_AT("median_ns") : _AT("p80_ns") + 1] == (None,) * 3


def test_a_runs_provenance_labels_and_place_are_its_columns() -> None:
    run = _run()
    run["metadata"]["labels"] = {"b": "é", "a": "\ud800"}
    notes = {provenance.COMMIT: "c1", provenance.BRANCH: "main", "x": "y"}
    run["metadata"]["annotations"] = notes
    values = dict(zip(RUN_COLUMNS, run_columns(run, "f.jsonl:3", "now"), strict=True))
    assert (values["commit_id"], values["branch"], values["commit_time"]) == ("c1", "main", None)
    # The labels' text as json writes it, keys in their order, non-ASCII as it is.
    assert values["labels"] == json.dumps(
        run["metadata"]["labels"], ensure_ascii=False, separators=(",", ":")
    )
    assert json.loads(values["annotations"]) == notes
    place = (values["source"], values["ingested_at"], values["degraded"])
    assert place == ("f.jsonl:3", "now", None)


def test_the_degraded_column_is_the_conditions_verdict() -> None:
    conditions = {"gpu": {"throttleReasons": ["HwSlowdown", "GpuIdle"]}}
    run = _run(conditions=conditions)
    reason = run_row(run, "s", "t")[0][_AT("degraded")]
    assert reason == degraded_reason(run["spec"])
    assert reason is not None
    assert "HwSlowdown" in reason


def test_the_samples_column_is_the_timings_sample_count() -> None:
    """``runs.samples`` is ``timing.samples`` as an integer (the schema's integer admits
    ``100.0``); a run without timing, or without a count, has none."""
    timed = _run(timing={"latencyNs": {"median": 5}, "samples": 100})
    assert run_row(timed, "s", "t")[0][_AT("samples")] == 100
    timed["spec"]["timing"]["samples"] = 100.0
    found = run_row(timed, "s", "t")[0][_AT("samples")]
    assert (found, type(found)) == (100, int)
    del timed["spec"]["timing"]["samples"]
    assert run_row(timed, "s", "t")[0][_AT("samples")] is None
    assert run_row(_run(), "s", "t")[0][_AT("samples")] is None


def test_a_stored_runs_samples_reach_its_row_and_its_verdict_point(
    store: Store, tmp_path: Path
) -> None:
    few = bundle(params={"tokens": 7, "dtype": "fp32"})
    few["run"]["spec"]["timing"]["samples"] = 5
    unknown = json.loads(json.dumps(few))
    unknown["run"]["metadata"]["name"] += "-unknown"
    del unknown["run"]["spec"]["timing"]["samples"]
    assert store.ingest([_lines(tmp_path / "a.jsonl", [few, unknown])]).added == 2
    counts = {row.name: row.samples for row in store.rows()}
    assert counts == {few["run"]["metadata"]["name"]: 5, unknown["run"]["metadata"]["name"]: None}


def test_rounding_is_once_and_half_to_even_as_before() -> None:
    run: dict[str, Any] = {
        "spec": {
            "status": "passed",
            "observedAt": "t",
            **{f"{k}Digest": k for k in ("workload", "implementation", "protocol", "environment")},
            "timing": {"latencyNs": {"median": 2.5}},
            "measurements": [
                {"unit": "us", "value": 0.0035, "metric": "latency", "statistic": "p20"},
                {"unit": "ns", "value": 3.5, "metric": "latency", "statistic": "p80"},
            ],
        },
        "metadata": {"name": "n"},
    }
    row, fits = run_row(run, "s", "t")
    assert row[4:7] == (2, round(0.0035 * 1000), 4)
    assert fits
    run["spec"]["timing"]["latencyNs"]["median"] = math.ldexp(1.0, 63)
    assert run_row(run, "s", "t")[1] is False


def _lines(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(dumps(d, indent=None, validate=False) + "\n" for d in docs), encoding="utf-8"
    )
    return path


def test_objects_a_later_run_of_a_known_group_carries_are_stored(
    store: Store, tmp_path: Path
) -> None:
    """A run whose group of values the file met before skips the object lookups only
    once every object its digests name is known: a first run that carried only the
    digests of its workload and implementation leaves them to a later one of the same
    values, which stores them."""
    full = bundle(params={"tokens": 7, "dtype": "fp32"})
    bare = json.loads(json.dumps(full))
    bare["run"]["metadata"]["name"] += "-bare"
    del bare["run"]["spec"]["workload"]
    del bare["run"]["spec"]["implementation"]
    again = json.loads(json.dumps(full))
    again["run"]["metadata"]["name"] += "-again"
    report = store.ingest([_lines(tmp_path / "a.jsonl", [bare, full, again])])
    assert (report.added, report.ok) == (3, True)
    spec = full["run"]["spec"]
    assert store.spec("workload", spec["workloadDigest"]) == spec["workload"]
    assert store.spec("implementation", spec["implementationDigest"]) == spec["implementation"]


def test_a_latency_past_the_range_is_refused_with_the_same_problem(
    store: Store, tmp_path: Path
) -> None:
    docs = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(3)]
    docs[1]["run"]["spec"]["measurements"][1]["value"] = 2**63
    report = store.ingest([_lines(tmp_path / "a.jsonl", docs)])
    assert report.refused == 3
    (problem,) = report.problems
    assert problem.problem.code == "store-range"
    assert problem.problem.pointer == "/run/spec"
    # The message 0.6.0 gave (the published form writes this integer past 2**63 - 1 as
    # 9223372036854776000), now placed in the line by the reader, which applies the rule.
    line = (tmp_path / "a.jsonl").read_text("utf-8").splitlines()[1]
    column = line.index('"spec":') + len('"spec":') + 1
    assert str(problem) == (
        f"{tmp_path / 'a.jsonl'}:2:{column}: /run/spec: latency p80 of 9223372036854776000 ns"
        " does not fit the store's 64-bit integer column (at most 9223372036854775807 ns)"
        " [store-range]"
    )
    assert store.rows() == []


@pytest.mark.parametrize("count", [1, 63, 64, 65, 130, 2001])
def test_files_of_any_size_go_in_whole_in_order_and_export_as_read(
    tmp_path: Path, count: int
) -> None:
    """Every run, numbered in the file's order, its columns and its text as read, and
    export gives the file back."""
    docs = []
    for i in range(count):
        doc = bundle(params={"tokens": i % 5, "dtype": "fp32"})
        doc["run"]["metadata"]["name"] = f"run-{i:05d}"
        if i % 7 == 3:
            provenance.annotate(doc, provenance.Provenance(commit=f"{i:040x}", branch="main"))
        docs.append(doc)
    path = _lines(tmp_path / "runs.jsonl", docs)
    with open_store(tmp_path / "s.sqlite3") as store:
        report = store.ingest([path])
        assert (report.added, report.ok) == (count, True)
        rows = query(
            store,
            "SELECT r.seq, r.name, r.commit_id, r.source, t.record_text FROM runs r"
            " JOIN run_texts t ON t.seq = r.seq ORDER BY r.seq",
        )
        out = tmp_path / "out.jsonl"
        store.export(out)
        again = store.ingest([path])
        assert (again.added, again.identical) == (0, count)
    assert [row[1] for row in rows] == [f"run-{i:05d}" for i in range(count)]
    assert [row[0] for row in rows] == list(range(rows[0][0], rows[0][0] + count))
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, (_, _, commit, source, text) in enumerate(rows):
        assert commit == (f"{i:040x}" if i % 7 == 3 else None)
        assert source == f"{path}:{i + 1}"
        assert text == lines[i]
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("batch", [1, 3, 2000])
def test_group_ids_over_batches_name_each_runs_own_values(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """Runs of a few groups of values in any order, across batches of any size (a group
    first met in one batch, known in the next; the same labels in another key order,
    one group): every run names the group of its own values, keeps its own labels text,
    each group is stored once, and a file seen again (the groups it made for runs
    already stored deleted) leaves no group without a run."""
    from kernelindex_sdk.store import _ingest

    monkeypatch.setattr(_ingest, "BATCH", batch)
    docs = []
    for i in range(14):
        doc = bundle(provider=("torch", "triton")[i % 2], params={"tokens": i % 3, "dtype": "x"})
        doc["run"]["metadata"]["labels"] = (
            {"a": "1", "b": "2"} if i % 4 < 2 else {"b": "2", "a": "1"}
        )
        if i % 5 == 0:
            provenance.annotate(doc, provenance.Provenance(commit="c", branch="main"))
        docs.append(doc)

    def plain(path: Path, docs: list[dict[str, Any]]) -> Path:
        # Keys in the order given (the published form would order them).
        path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
        return path

    first = store.ingest([plain(tmp_path / "a.jsonl", docs[:9])])
    assert (first.added, first.ok) == (9, True)
    annotated = [json.loads(json.dumps(d)) for d in docs]
    for doc in annotated:
        provenance.annotate(doc, provenance.Provenance(commit="d", branch="dev"))
    second = store.ingest([plain(tmp_path / "b.jsonl", annotated)])
    # Two already carried provenance, which annotate keeps: the same records.
    assert (second.added, second.identical, second.provenance_only) == (5, 2, 7)
    assert second.ok
    labels_of = f"{json_text(store, 'r.labels')}, {json_text(store, 'g.labels')}"
    # Constant columns, the labels as text in the store's dialect.
    statement = (
        "SELECT r.name, r.status, r.branch, r.workload_digest, r.implementation_digest,"
        " r.protocol_digest, r.environment_digest, g.status, g.branch,"
        " g.workload_digest, g.implementation_digest, g.protocol_digest,"
        f" g.environment_digest, {labels_of} FROM runs r JOIN run_groups g"
        " ON g.id = r.group_id ORDER BY r.seq"
    )
    rows = query(store, statement)
    assert len(rows) == 14
    by_name = {d["run"]["metadata"]["name"]: d for d in docs + annotated}
    for row in rows:
        own, group, (own_labels, group_labels) = row[1:7], row[7:13], row[13:]
        assert own == group
        assert json.loads(own_labels) == json.loads(group_labels)
        labels = by_name[row[0]]["run"]["metadata"]["labels"]
        if store.dialect == "sqlite":
            # Its own text (PostgreSQL's jsonb keeps values, not texts).
            assert own_labels == json.dumps(labels, separators=(",", ":"))
    ((unused,),) = query(
        store,
        "SELECT count(*) FROM run_groups g WHERE NOT EXISTS"
        " (SELECT 1 FROM runs r WHERE r.group_id = g.id)",
    )
    assert unused == 0
    ((groups,),) = query(store, "SELECT count(*) FROM run_groups")
    assert groups == len({row[1:7] for row in rows})


def test_a_run_on_its_own_keeps_its_pointers_in_clashes_and_range_problems(
    store: Store, tmp_path: Path
) -> None:
    """A batch keeps no record a run, only where its runs on their own are: a clash or a
    range problem of one points into the run itself, of a bundle into ``/run``."""
    docs = [bundle(params={"tokens": i, "dtype": "fp32"}) for i in range(2)]
    alone = docs[0]["run"]
    assert store.ingest([_lines(tmp_path / "a.jsonl", [alone, docs[1]])]).added == 2
    changed = [json.loads(json.dumps(d)) for d in (alone, docs[1])]
    changed[0]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    changed[1]["run"]["spec"]["observedAt"] = "2026-12-01T00:00:00.000Z"
    report = store.ingest([_lines(tmp_path / "b.jsonl", changed)])
    assert [p.problem.pointer for p in report.problems] == ["/metadata/name", "/run/metadata/name"]
    assert report.clashes == 2
    big = json.loads(json.dumps(alone))
    big["metadata"]["name"] += "-big"
    big["spec"]["measurements"][1]["value"] = 2**63
    report = store.ingest([_lines(tmp_path / "c.jsonl", [big])])
    assert [(p.problem.code, p.problem.pointer) for p in report.problems] == [
        ("store-range", "/spec")
    ]
