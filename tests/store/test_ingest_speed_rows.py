"""Ingest's fast paths against the slow ones they stand in for.

A run's columns come from one call (:func:`_extract.run_row`: its latency walk inline,
one rounding, the labels' and annotations' text without a call, the range check where
the values are at hand); they must equal, for every run, what the former code gave,
kept here as the reference: a walk through ``_ns`` rounding each value, ``_compact``
for each text, and the range check over the row. A batch keeps rows, texts and
documents, not a record a run, and a run whose group of values the file met before
skips the object lookups: what the store holds must not change.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from _records import bundle
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kernelindex_sdk import dumps, provenance
from kernelindex_sdk._base.units import NS_PER
from kernelindex_sdk.store import Store, open_store
from kernelindex_sdk.store._extract import RUN_COLUMNS, _compact, run_columns, run_row

_NS_MIN = -(2**63)
_NS_MAX = 2**63 - 1
_EMPTY: dict[str, Any] = {}


def _reference_ns(value: Any, unit: str) -> int | None:
    factor = NS_PER.get(unit)
    return None if factor is None or value is None else round(value * factor)


def _reference_latency(spec: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    timing = spec.get("timing")
    latency = (timing.get("latencyNs") if timing else None) or _EMPTY
    median, p20, p80 = latency.get("median"), latency.get("p20"), latency.get("p80")
    if median is None or p20 is None or p80 is None:
        for m in spec.get("measurements", ()):
            if m["metric"] != "latency":
                continue
            statistic = m["statistic"]
            if statistic == "p20":
                if p20 is None:
                    p20 = _reference_ns(m["value"], m["unit"])
            elif statistic == "p80":
                if p80 is None:
                    p80 = _reference_ns(m["value"], m["unit"])
            elif statistic == "median" and median is None:
                median = _reference_ns(m["value"], m["unit"])
            if median is not None and p20 is not None and p80 is not None:
                break
    return (
        None if median is None else round(median),
        None if p20 is None else round(p20),
        None if p80 is None else round(p80),
    )


def _reference_columns(run: dict[str, Any], source: str, ingested_at: str) -> tuple[Any, ...]:
    """run_columns as it was before the fast path (0.6.0)."""
    spec = run["spec"]
    metadata = run["metadata"]
    notes = metadata.get("annotations")
    labels = metadata.get("labels")
    median, p20, p80 = _reference_latency(spec)
    if notes:
        commit = notes.get(provenance.COMMIT)
        branch = notes.get(provenance.BRANCH)
        commit_time = notes.get(provenance.COMMIT_TIME)
    else:
        commit = branch = commit_time = None
    return (
        metadata["name"],
        spec["observedAt"],
        commit,
        commit_time,
        median,
        p20,
        p80,
        spec["status"],
        branch,
        spec["workloadDigest"],
        spec["implementationDigest"],
        spec["protocolDigest"],
        spec["environmentDigest"],
        _compact(labels) if labels else "{}",
        _compact(notes) if notes else "{}",
        source,
        ingested_at,
    )


def _reference_fits(row: tuple[Any, ...]) -> bool:
    """The range check as ingest made it over a row's three latency columns."""
    at = [RUN_COLUMNS.index(f"{s}_ns") for s in ("median", "p20", "p80")]
    return all(row[i] is None or _NS_MIN <= row[i] <= _NS_MAX for i in at)


_numbers = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 0, 1]),
    st.floats(min_value=-1e22, max_value=1e22, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.5, 1.5, 2.5, -0.5, 2.2900800704956055, 9.223372036854776e18, 1e19]),
)
_units = st.sampled_from([*NS_PER, "GB/s", "MiB", "1"])
_statistics = st.sampled_from(["median", "p20", "p80", "mean", "max"])
_metrics = st.sampled_from(["latency", "latency", "bandwidth", "memory"])
_texts = st.text(st.characters(codec="utf-8"), max_size=6) | st.sampled_from(["\ud800", "é", ""])
_string_maps = st.dictionaries(_texts, _texts, max_size=4)


@st.composite
def _runs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "status": draw(st.sampled_from(["passed", "failed"])),
        "observedAt": "2026-11-30T00:00:00.000Z",
        "workloadDigest": "sha256:" + "1" * 64,
        "implementationDigest": "sha256:" + "2" * 64,
        "protocolDigest": "sha256:" + "3" * 64,
        "environmentDigest": "sha256:" + "4" * 64,
    }
    timing = draw(st.none() | st.just({}) | st.fixed_dictionaries({}, optional={"x": st.none()}))
    if timing is not None:
        latency = draw(
            st.none()
            | st.fixed_dictionaries(
                {}, optional={"median": _numbers, "p20": _numbers, "p80": _numbers}
            )
        )
        if latency is not None:
            timing["latencyNs"] = latency
        spec["timing"] = timing
    measurements = draw(
        st.lists(
            st.fixed_dictionaries(
                {"unit": _units, "value": _numbers, "metric": _metrics, "statistic": _statistics}
            ),
            max_size=7,
        )
    )
    if measurements or draw(st.booleans()):
        spec["measurements"] = measurements
    metadata: dict[str, Any] = {"name": "run-1"}
    labels = draw(st.none() | _string_maps)
    if labels is not None:
        metadata["labels"] = labels
    notes = draw(
        st.none()
        | _string_maps
        | st.fixed_dictionaries(
            {},
            optional={
                provenance.COMMIT: _texts,
                provenance.BRANCH: _texts,
                provenance.COMMIT_TIME: _texts,
                "kernelindex.dev/host": _texts,
            },
        )
    )
    if notes is not None:
        metadata["annotations"] = notes
    return {"spec": spec, "metadata": metadata}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
@example(
    {
        "spec": {
            "status": "passed",
            "observedAt": "t",
            "workloadDigest": "w",
            "implementationDigest": "i",
            "protocolDigest": "p",
            "environmentDigest": "e",
            "timing": {"latencyNs": {"median": 2**63}},
            "measurements": [
                {"unit": "ms", "value": 2.5e-6, "metric": "latency", "statistic": "p20"},
                {"unit": "s", "value": 9.3e9, "metric": "latency", "statistic": "p80"},
            ],
        },
        "metadata": {"name": "n", "labels": {"a": "\ud800"}, "annotations": {"b": "é"}},
    }
)
def test_a_runs_columns_and_range_verdict_are_the_former_codes(run: dict[str, Any]) -> None:
    """For any run (any latency in any unit or none, the first of each statistic, any
    labels and annotations text, lone surrogates included): the same values of the
    same types, and the same verdict on the 64-bit range."""
    expected = _reference_columns(run, "f.jsonl:3", "now")
    row, fits = run_row(run, "f.jsonl:3", "now")
    assert row == expected
    assert [type(value) for value in row] == [type(value) for value in expected]
    assert fits is _reference_fits(expected)
    assert run_columns(run, "f.jsonl:3", "now") == expected


def test_the_harness_and_liger_fixtures_give_the_former_columns() -> None:
    fixtures = Path(__file__).parent.parent / "fixtures"
    lines = (fixtures / "h200-jsd-sweep.jsonl").read_text(encoding="utf-8").splitlines()
    runs = [json.loads(line)["run"] for line in lines]
    runs.append(json.loads((fixtures / "liger-jsd-forward-torch-b200.json").read_text())["run"])
    for run in runs:
        assert run_row(run, "s", "t") == (_reference_columns(run, "s", "t"), True)
        # Every value a whole number of ns, as an int (never a float that equals one).
        assert all(type(v) is int for v in run_row(run, "s", "t")[0][4:7])


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
    """Multi-row INSERTs of 64 runs and the rows left over: every run, numbered in the
    file's order, its columns and its text as read, and export gives the file back."""
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
        rows = store._backend.execute(
            "SELECT r.seq, r.name, r.commit_id, r.source, t.record_text FROM runs r"
            " JOIN run_texts t ON t.seq = r.seq ORDER BY r.seq"
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
    rows = store._backend.execute(
        "SELECT r.name, r.status, r.branch, r.workload_digest, r.implementation_digest,"
        " r.protocol_digest, r.environment_digest, r.labels, g.status, g.branch,"
        " g.workload_digest, g.implementation_digest, g.protocol_digest,"
        " g.environment_digest, g.labels FROM runs r JOIN run_groups g ON g.id = r.group_id"
        " ORDER BY r.seq"
    )
    assert len(rows) == 14
    by_name = {d["run"]["metadata"]["name"]: d for d in docs + annotated}
    for row in rows:
        own, group = row[1:8], row[8:15]
        assert own[:6] == group[:6]
        json_value = store._backend.json_value
        assert json_value(own[6]) == json_value(group[6])
        labels = by_name[row[0]]["run"]["metadata"]["labels"]
        if store._backend.dialect == "sqlite":
            # Its own text (PostgreSQL's jsonb keeps values, not texts).
            assert own[6] == json.dumps(labels, separators=(",", ":"))
    ((unused,),) = store._backend.execute(
        "SELECT count(*) FROM run_groups g WHERE NOT EXISTS"
        " (SELECT 1 FROM runs r WHERE r.group_id = g.id)"
    )
    assert unused == 0
    ((groups,),) = store._backend.execute("SELECT count(*) FROM run_groups")
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
