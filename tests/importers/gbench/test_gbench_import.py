"""Google Benchmark JSON to records: an instance is one run (its aggregates the
statistics, never runs of their own), real time the latency and CPU time its own metric,
the name split into family and arguments, every number kept."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _foreign import FIXTURES, import_into, measurement, metrics, runs, valid_with_digests

from kernelindex_sdk.importers import gbench

GBENCH = FIXTURES / "gbench"
KERNELS = GBENCH / "kernels.json"
RUN2 = GBENCH / "kernels-run2.json"
AGGREGATES_ONLY = GBENCH / "kernels-aggregates-only.json"


def _import(
    tmp_path: Path, *sources: Path, **options: Any
) -> tuple[list[dict[str, Any]], list[str]]:
    out = tmp_path / f"runs-{len(list(tmp_path.iterdir()))}.jsonl"
    _, errors = import_into(gbench.import_files, list(sources), out, **options)
    assert valid_with_digests(out) == [] if out.exists() else True
    return (
        [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    ), errors


def _rows(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text("utf-8"))["benchmarks"]  # type: ignore[no-any-return]


def _by_id(bundles: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {b["run"]["spec"]["sourceNative"]["externalId"]: b["run"] for b in bundles}


def test_each_instance_is_one_run_and_no_aggregate_is_a_run(tmp_path: Path) -> None:
    bundles, errors = _import(tmp_path, KERNELS)
    assert errors == []
    run_names = list(
        dict.fromkeys(
            r["run_name"] for r in _rows(KERNELS) if not r["name"].endswith(("_BigO", "_RMS"))
        )
    )
    assert list(_by_id(bundles)) == run_names
    assert len(bundles) == 11
    names = [b["run"]["spec"]["sourceNative"]["externalId"] for b in bundles]
    assert not [n for n in names if n.endswith(("_mean", "_median", "_stddev", "_cv", "_max"))]


def test_repetitions_take_their_statistics_from_the_aggregate_rows(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    key = "BM_fill/rows:8/cols:64/min_time:0.010/repeats:3"
    run = _by_id(bundles)[key]
    aggregates = {
        r["aggregate_name"]: r
        for r in _rows(KERNELS)
        if r.get("run_type") == "aggregate" and r["run_name"] == key
    }
    repetitions = [
        r for r in _rows(KERNELS) if r.get("run_type") == "iteration" and r["run_name"] == key
    ]
    timing = run["spec"]["timing"]
    assert timing["primaryStatistic"] == "mean"
    assert timing["samples"] == 3
    for ours, theirs in (("mean", "mean"), ("median", "median"), ("stddev", "stddev")):
        real, cpu = aggregates[theirs]["real_time"], aggregates[theirs]["cpu_time"]
        assert measurement(run, "latency", ours) == {
            "metric": "latency",
            "statistic": ours,
            "unit": "ns",
            "value": real,
        }
        assert timing["latencyNs"][ours] == round(real)
        assert measurement(run, "cpu_time", ours)["value"] == cpu
    kept = metrics(run)
    for name, row in aggregates.items():
        for field in ("real_time", "cpu_time", "iterations", "items_per_second"):
            assert kept[f"{name}/{field}"] == row[field]
    for row in repetitions:
        for field in ("real_time", "cpu_time", "iterations", "items_per_second"):
            assert kept[f"repetition/{row['repetition_index']}/{field}"] == row[field]


def test_a_single_repetition_is_its_rows_real_time_per_iteration(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    for row in _rows(KERNELS):
        if (
            row.get("repetitions") != 1
            or row.get("run_type") != "iteration"
            or row.get("error_occurred")
            or row.get("skipped")
        ):
            continue
        run = _by_id(bundles)[row["run_name"]]
        unit = row["time_unit"]
        assert measurement(run, "latency", "mean") == {
            "metric": "latency",
            "statistic": "mean",
            "unit": unit,
            "value": row["real_time"],
        }
        assert measurement(run, "cpu_time", "mean")["value"] == row["cpu_time"]
        assert "samples" not in run["spec"]["timing"]
        for field, value in row.items():
            if field not in (
                "name",
                "run_name",
                "run_type",
                "repetition_index",
                "family_index",
                "per_family_instance_index",
                "repetitions",
                "threads",
            ):
                assert metrics(run)[field] == value, field


def test_the_name_splits_into_family_and_arguments(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    found = {
        r["spec"]["sourceNative"]["externalId"]: r["spec"]["workload"]
        for r in (b["run"] for b in bundles)
    }
    assert found["BM_memcpy/8/min_time:0.010"] == {
        "operation": "bm_memcpy",
        "pass": "forward",
        "parameters": {"arg0": 8, "threads": 1},
    }
    assert found["BM_fill/rows:8/cols:64/min_time:0.010/repeats:3"]["parameters"] == {
        "rows": 8,
        "cols": 64,
        "threads": 1,
    }
    assert found["BM_spin_threads/min_time:0.010/process_time/real_time/threads:2"][
        "parameters"
    ] == {"threads": 2}
    # A capture's case is part of the family; its template's brackets carry a hash.
    capture = found["BM_construct<std::string>/empty_string/min_time:0.010"]
    assert capture["operation"].startswith("bm_construct_std_string_empty_string_")
    run = _by_id(bundles)["BM_fill/rows:8/cols:64/min_time:0.010/repeats:3"]
    assert run["spec"]["sourceNative"]["benchmark"] == "BM_fill"
    assert metrics(run)["run_name/min_time"] == 0.01
    assert metrics(run)["run_name/repeats"] == 3


def test_each_way_of_timing_is_a_protocol_of_its_own(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    family = {
        b["run"]["spec"]["sourceNative"]["benchmark"]: b["protocol"]["spec"]["comparability"][
            "family"
        ]
        for b in bundles
    }
    assert family["BM_memcpy"] == "google_benchmark"
    assert family["BM_sleep_manual"] == "google_benchmark_manual_time"
    assert family["BM_spin_threads"] == "google_benchmark_real_time_process_time"
    protocols = {
        b["protocol"]["metadata"]["name"]: b["run"]["spec"]["protocolDigest"] for b in bundles
    }
    assert len(set(protocols.values())) == len(protocols) == 3
    default = next(
        b["protocol"]["spec"] for b in bundles if b["protocol"]["metadata"]["name"] == "gbench"
    )
    assert default["measurement"]["timer"] == "wall_clock"
    assert "library_build_type release" in default["measurement"]["notes"]


def test_cpu_time_is_its_own_metric_never_the_latency(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    for bundle in bundles:
        spec = bundle["run"]["spec"]
        for m in spec.get("measurements", ()):
            assert m["metric"] in {"latency", "cpu_time", "bandwidth"}
        if "timing" in spec:
            latency = measurement(bundle["run"], "latency", "mean")["value"]
            assert latency != measurement(bundle["run"], "cpu_time", "mean")["value"]


def test_two_files_of_one_machine_give_the_same_digests(tmp_path: Path) -> None:
    first, _ = _import(tmp_path, KERNELS)
    second, _ = _import(tmp_path, RUN2)
    one, two = _by_id(first), _by_id(second)
    assert one.keys() == two.keys()
    for key, run in one.items():
        for digest in (
            "protocolDigest",
            "environmentDigest",
            "workloadDigest",
            "implementationDigest",
        ):
            assert run["spec"][digest] == two[key]["spec"][digest], (key, digest)


def test_errors_and_skips_are_failed_runs_with_the_benchmarks_message(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    runs_by_id = _by_id(bundles)
    assert runs_by_id["BM_fails"]["spec"]["failure"] == {
        "reason": "error",
        "message": "device not found",
    }
    assert runs_by_id["BM_skipped"]["spec"]["failure"] == {
        "reason": "unsupported",
        "message": "needs AVX-512",
    }
    assert "timing" not in runs_by_id["BM_fails"]["spec"]


def test_the_complexity_fit_is_kept_with_every_instance_of_its_family(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    fit = {
        r["aggregate_name"]: r for r in _rows(KERNELS) if r.get("aggregate_name") in ("BigO", "RMS")
    }
    family = [
        b["run"] for b in bundles if b["run"]["spec"]["sourceNative"]["benchmark"] == "BM_sum"
    ]
    assert len(family) == 3
    for run in family:
        assert metrics(run)["BigO/cpu_coefficient"] == fit["BigO"]["cpu_coefficient"]
        assert metrics(run)["BigO/big_o"] == "N"
        assert metrics(run)["RMS/rms"] == fit["RMS"]["rms"]


def test_the_context_is_the_environment_and_its_readings_annotations(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, KERNELS)
    environment = bundles[0]["environment"]["spec"]
    assert environment == {
        "hardware": {
            "vendor": "cpu",
            "product": "CPU: 2 CPUs, L1d 32 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB",
            "multiprocessors": 2,
            "l2CacheBytes": 33554432,
        },
        "software": {},
    }
    notes = bundles[0]["run"]["metadata"]["annotations"]
    assert notes["gbench/context/host_name"] == "vm"
    assert notes["gbench/context/mhz_per_cpu"] == "2596"
    assert bundles[0]["run"]["spec"]["observedAt"] == "2026-12-07T02:06:52.000Z"
    named, _ = _import(tmp_path, KERNELS, machine="AMD EPYC 9B14")
    assert named[0]["environment"]["spec"]["hardware"]["product"] == "AMD EPYC 9B14"


def test_aggregates_only_give_one_run_per_instance(tmp_path: Path) -> None:
    bundles, errors = _import(tmp_path, AGGREGATES_ONLY)
    assert errors == []
    assert len(bundles) == 5
    for bundle in bundles:
        assert bundle["run"]["spec"]["timing"]["samples"] == 3
        assert not [k for k in metrics(bundle["run"]) if k.startswith("repetition/")]


def test_googles_own_compare_inputs_import_or_say_why(tmp_path: Path) -> None:
    expected = {
        "test1_run1.json": (14, 2),
        "test1_run2.json": (14, 2),
        "test2_run.json": (10, 0),
        "test3_run0.json": (4, 3),
        "test3_run1.json": (4, 3),
        "test4_run.json": (0, 4),
        "test4_run0.json": (0, 1),
        "test4_run1.json": (0, 1),
        "test5_run0.json": (1, 0),
        "test5_run1.json": (1, 0),
    }
    for name, (imported, rejected) in expected.items():
        bundles, errors = _import(tmp_path, GBENCH / "Inputs" / name)
        assert (len(bundles), len(errors)) == (imported, rejected), (name, errors)
    _, errors = _import(tmp_path, GBENCH / "Inputs" / "test1_run1.json")
    assert errors[0].endswith(
        "/benchmarks/11: a complexity fit ('MyComplexityTest_BigO') of no benchmark in the file"
    )
    _, errors = _import(tmp_path, GBENCH / "Inputs" / "test4_run.json")
    assert errors[0].endswith(
        "/benchmarks/0: time_unit is null; expected 'ns', 'us', 'ms' or 's'"
        " (and for /benchmarks/1, /benchmarks/2, of the same instance)"
    )


def test_a_time_unit_is_kept_and_converted(tmp_path: Path) -> None:
    bundles, _ = _import(tmp_path, GBENCH / "Inputs" / "test2_run.json")
    run = _by_id(bundles)["BM_Hi"]
    assert run["spec"]["timing"]["latencyNs"]["mean"] == 42_000_000
    assert measurement(run, "latency", "mean") == {
        "metric": "latency",
        "statistic": "mean",
        "unit": "ms",
        "value": 42,
    }
    assert measurement(run, "cpu_time", "mean")["unit"] == "ms"


def test_old_files_name_aggregates_by_suffix_and_repeated_rows_are_replicates(
    tmp_path: Path,
) -> None:
    doc = {
        "context": {"date": "2017-01-01 10:00:00", "num_cpus": 4},
        "benchmarks": [
            {
                "name": "BM_x/8",
                "iterations": 10,
                "real_time": 5.0,
                "cpu_time": 4.0,
                "time_unit": "ns",
            },
            {
                "name": "BM_x/8",
                "iterations": 10,
                "real_time": 7.0,
                "cpu_time": 6.0,
                "time_unit": "ns",
            },
            {
                "name": "BM_x/8_mean",
                "iterations": 10,
                "real_time": 6.0,
                "cpu_time": 5.0,
                "time_unit": "ns",
            },
            {
                "name": "BM_y",
                "iterations": 10,
                "real_time": 1.0,
                "cpu_time": 1.0,
                "time_unit": "ns",
            },
            {
                "name": "BM_y",
                "iterations": 10,
                "real_time": 2.0,
                "cpu_time": 2.0,
                "time_unit": "ns",
            },
            {
                "name": "BM_z_mean",
                "iterations": 10,
                "real_time": 3.0,
                "cpu_time": 3.0,
                "time_unit": "us",
            },
        ],
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc), "utf-8")
    bundles, errors = _import(tmp_path, path)
    assert errors == []
    ids = [b["run"]["spec"]["sourceNative"]["externalId"] for b in bundles]
    # BM_z_mean has no BM_z beside it: a benchmark of that name.
    assert ids == ["BM_x/8", "BM_y#rep0", "BM_y#rep1", "BM_z_mean"]
    assert bundles[0]["run"]["spec"]["timing"]["latencyNs"] == {"mean": 6}
    assert bundles[0]["run"]["spec"]["observedAt"] == "2017-01-01T10:00:00.000Z"
    assert (
        bundles[1]["run"]["spec"]["workloadDigest"] == bundles[2]["run"]["spec"]["workloadDigest"]
    )


@pytest.mark.parametrize(
    ("value", "kept"),
    [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e400", "Infinity")],
)
def test_a_counter_no_digest_can_carry_keeps_its_text(
    tmp_path: Path, value: str, kept: str
) -> None:
    text = (
        '{"benchmarks": [{"name": "BM_a", "run_type": "iteration", "iterations": 1,'
        f' "real_time": 1.5, "cpu_time": 1.0, "time_unit": "ns", "ratio": {value}}}]}}'
    )
    path = tmp_path / "nan.json"
    path.write_text(text, "utf-8")
    bundles, errors = _import(tmp_path, path)
    assert errors == []
    assert metrics(bundles[0]["run"])["ratio"] == kept


def test_a_counter_name_the_schema_cannot_hold_is_kept_under_a_hashed_key(tmp_path: Path) -> None:
    text = (
        '{"benchmarks": [{"name": "BM_a", "iterations": 1, "real_time": 1.5,'
        ' "cpu_time": 1.0, "time_unit": "ns", "bytes per second": 12.5, "Bytes per second": 13}]}'
    )
    path = tmp_path / "spaces.json"
    path.write_text(text, "utf-8")
    bundles, _ = _import(tmp_path, path)
    kept = metrics(bundles[0]["run"])
    odd = {k: v for k, v in kept.items() if k.lower().startswith("bytes_per_second.")}
    assert sorted(odd.values()) == [12.5, 13]
    assert len(odd) == 2


def test_runs_helper_reads_every_line(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    import_into(gbench.import_files, [KERNELS], out)
    assert len(runs(out)) == 11


@pytest.mark.parametrize("unit", [["ns"], {"u": 1}, 5, "minutes"])
def test_a_time_unit_that_is_no_unit_is_the_rows_reason(tmp_path: Path, unit: Any) -> None:
    row = {"name": "BM_a", "iterations": 1, "real_time": 1.0, "cpu_time": 1.0, "time_unit": unit}
    path = tmp_path / "unit.json"
    path.write_text(json.dumps({"benchmarks": [row]}), "utf-8")
    bundles, errors = _import(tmp_path, path)
    assert bundles == []
    assert len(errors) == 1
    assert "/benchmarks/0: time_unit is " in errors[0]


def _rejected_rows(errors: list[str]) -> set[int]:
    """Every row a reason names (its own pointer, and the instance's other rows)."""
    return {int(n) for e in errors for n in re.findall(r"/benchmarks/(\d+)", e)}


@pytest.mark.parametrize(
    "source", sorted(GBENCH.rglob("*.json")), ids=lambda p: p.relative_to(GBENCH).as_posix()
)
def test_every_number_of_every_row_survives_in_a_run(tmp_path: Path, source: Path) -> None:
    """Each row that is not a stated reason has each of its numbers, to the last digit,
    in a run of its instance (at top level, or under its repetition's or aggregate's key):
    so every row became part of a record, or a reason."""
    bundles, errors = _import(tmp_path, source)
    rejected = _rejected_rows(errors)
    kept = [metrics(b["run"]) for b in bundles]
    for i, row in enumerate(_rows(source)):
        if i in rejected:
            continue
        numbers = {
            field: value
            for field, value in row.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)
        }
        # A repetition's index is the key its values are kept under.
        numbers.pop("repetition_index", None)
        assert numbers, i
        for field, value in numbers.items():
            assert any(
                (k == field or k.endswith(f"/{field}")) and v == value
                for run in kept
                for k, v in run.items()
            ), (i, field, value)
