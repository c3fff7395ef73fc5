"""pytest-benchmark JSON to records: each benchmark a run, its stats kept to the last
digit (the raw rounds too), params the parameters, the timer the protocol, commit_info
the provenance, a dirty save marked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _foreign import FIXTURES, import_into, measurement, metrics, valid_with_digests

from kernelindex_sdk.importers import pytest_benchmark
from kernelindex_sdk.provenance import Provenance

FOLDER = FIXTURES / "pytest-benchmark"
CLEAN = FOLDER / "benchmark.json"
DIRTY = FOLDER / "0001_fixture.json"
OLD = sorted(FOLDER.glob("00*_uncommitted-changes.json"))
ALL = [CLEAN, DIRTY, *OLD]
STATISTICS = {
    "mean": "mean",
    "median": "median",
    "min": "min",
    "max": "max",
    "stddev": "stddev",
    "q1": "p25",
    "q3": "p75",
}


def _bundles(tmp_path: Path, source: Path, **options: Any) -> list[dict[str, Any]]:
    out = tmp_path / f"{source.stem}-{len(list(tmp_path.iterdir()))}.jsonl"
    _, errors = import_into(pytest_benchmark.import_files, [source], out, **options)
    assert errors == []
    assert valid_with_digests(out) == []
    return [json.loads(line) for line in out.read_text().splitlines()]


def _benchmarks(source: Path) -> list[dict[str, Any]]:
    return json.loads(source.read_text("utf-8"))["benchmarks"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("source", ALL, ids=lambda p: p.name[:12])
def test_every_benchmark_becomes_a_run_with_its_stats(tmp_path: Path, source: Path) -> None:
    bundles = _bundles(tmp_path, source)
    benchmarks = _benchmarks(source)
    assert [b["run"]["spec"]["sourceNative"]["externalId"] for b in bundles] == [
        b["fullname"] for b in benchmarks
    ]
    for bundle, bench in zip(bundles, benchmarks, strict=True):
        run = bundle["run"]
        stats = bench["stats"]
        timing = run["spec"]["timing"]
        assert timing["primaryStatistic"] == "median"
        assert timing["samples"] == stats["rounds"]
        for theirs, ours in STATISTICS.items():
            assert measurement(run, "latency", ours) == {
                "metric": "latency",
                "statistic": ours,
                "unit": "s",
                "value": stats[theirs],
            }
            assert timing["latencyNs"][ours] == round(stats[theirs] * 10**9)
        kept = metrics(run)
        for key, value in stats.items():
            if key == "data":
                assert [kept[f"data/{i}"] for i in range(len(value))] == value
            else:
                assert kept[key] == value, key
        for key, value in bench["options"].items():
            if value is not None:
                assert kept[f"options/{key}"] == value


def test_params_become_the_parameters_exactly(tmp_path: Path) -> None:
    bundles = _bundles(tmp_path, CLEAN)
    found = {
        b["run"]["spec"]["sourceNative"]["externalId"]: b["run"]["spec"]["workload"]
        for b in bundles
    }
    assert found["test_kernels.py::test_saxpy[fp32-16]"] == {
        "operation": "test_kernels_py_test_saxpy",
        "pass": "forward",
        "parameters": {"dtype": "fp32", "n": 16},
    }
    # None and a tuple keep their JSON values, never a string that could be a real one.
    assert found["test_kernels.py::test_saxpy[None-16]"]["parameters"] == {
        "dtype/null": True,
        "n": 16,
    }
    assert found["test_kernels.py::test_sum_shape[shape0]"]["parameters"] == {
        "shape/0": 4,
        "shape/1": 8,
    }
    assert found["test_kernels.py::test_sorted_cpu_time"]["parameters"] == {}
    run = bundles[0]["run"]
    assert run["spec"]["implementation"] == {
        "provider": "pbproj",
        "entryPoint": "test_kernels.py::test_saxpy",
    }
    assert metrics(run)["extra_info/elements"] == 16


def test_files_without_params_use_the_id_in_brackets(tmp_path: Path) -> None:
    (bundle,) = _bundles(tmp_path, OLD[0])
    assert bundle["run"]["spec"]["workload"]["parameters"] == {"param": "0"}
    assert (
        bundle["run"]["spec"]["workload"]["operation"]
        == "tests_test_normal_py_test_xfast_parametrized"
    )


def test_each_timer_is_a_protocol_and_calibration_is_part_of_it(tmp_path: Path) -> None:
    bundles = _bundles(tmp_path, CLEAN)
    protocols = {b["run"]["spec"]["sourceNative"]["benchmark"]: b["protocol"] for b in bundles}
    cpu = protocols["test_kernels.py::test_sorted_cpu_time"]["spec"]
    wall = protocols["test_kernels.py::test_saxpy"]["spec"]
    assert cpu["comparability"]["family"] == "pytest_benchmark_process_time"
    assert wall["comparability"]["family"] == "pytest_benchmark_perf_counter"
    assert "CPU-time clock" in cpu["measurement"]["notes"]
    assert "min_time 5e-06" in wall["measurement"]["notes"]
    assert "disable_gc false" in wall["measurement"]["notes"]
    digests = {b["run"]["spec"]["protocolDigest"] for b in bundles}
    assert len(digests) == 2
    # min_rounds and max_time set how long, not how: a pedantic run of 3 rounds keeps
    # the protocol of the others.
    pedantic = protocols["test_kernels.py::test_sleep_pedantic"]
    assert pedantic == protocols["test_kernels.py::test_saxpy"]


def test_two_files_of_one_machine_and_method_share_protocol_and_environment(tmp_path: Path) -> None:
    clean = _bundles(tmp_path, CLEAN)
    dirty = _bundles(tmp_path, DIRTY)
    for a, b in zip(clean, dirty, strict=True):
        for key in (
            "protocolDigest",
            "environmentDigest",
            "workloadDigest",
            "implementationDigest",
        ):
            assert a["run"]["spec"][key] == b["run"]["spec"][key]
        assert a["run"]["spec"]["observedAt"] != b["run"]["spec"]["observedAt"]


def test_machine_info_is_the_environment_and_the_host_an_annotation(tmp_path: Path) -> None:
    bundle = _bundles(tmp_path, CLEAN)[0]
    assert bundle["environment"]["spec"] == {
        "hardware": {
            "vendor": "cpu",
            "product": "AMD EPYC",
            "architecture": "x86_64",
            "multiprocessors": 2,
            "l2CacheBytes": 1048576,
        },
        "software": {
            "python": "CPython 3.11.7",
            "python_compiler": "GCC 12.2.0",
            "system": "Linux 6.18.44-fc-v1300",
        },
    }
    notes = bundle["run"]["metadata"]["annotations"]
    assert notes["pytest-benchmark/machine_info/node"] == "vm"
    assert notes["pytest-benchmark/machine_info/cpu/hz_actual"] == "[2596138000,0]"


def test_commit_info_is_the_provenance_and_comes_before_the_command_line(tmp_path: Path) -> None:
    given = Provenance(commit="feedbeef", branch="other", commit_time="2020-01-01T00:00:00Z")
    run = _bundles(tmp_path, CLEAN, provenance=given)[0]["run"]
    notes = run["metadata"]["annotations"]
    assert notes["kernelindex.dev/commit"] == "739bc18dbd20d1988dba819206bf6ce97dedc3b9"
    assert notes["kernelindex.dev/branch"] == "master"
    assert notes["kernelindex.dev/commit-time"] == "2026-12-07T02:07:44.000Z"
    assert "kernelindex.dev/dirty" not in notes
    # A 2.5.0 save names no branch or time: the command line fills them in.
    old = _bundles(tmp_path, OLD[0], provenance=given)[0]["run"]["metadata"]["annotations"]
    assert old["kernelindex.dev/commit"] == "5b78858eb718649a31fb93d8dc96ca2cee41a4cd"
    assert old["kernelindex.dev/branch"] == "other"


def test_a_save_from_a_dirty_tree_is_marked(tmp_path: Path) -> None:
    for source, dirty in ((DIRTY, True), (CLEAN, False), (OLD[0], True)):
        for bundle in _bundles(tmp_path, source):
            notes = bundle["run"]["metadata"]["annotations"]
            assert (notes.get("kernelindex.dev/dirty") == "true") is dirty


def test_the_group_is_a_label(tmp_path: Path) -> None:
    bundles = _bundles(tmp_path, CLEAN)
    labelled = [b["run"]["metadata"].get("labels") for b in bundles]
    assert {"pytest-benchmark/group": "cpu-time"} in labelled
    assert labelled.count(None) == 6


def test_a_benchmark_without_stats_is_reported_and_the_rest_imports(tmp_path: Path) -> None:
    doc = json.loads(CLEAN.read_text("utf-8"))
    del doc["benchmarks"][1]["stats"]
    doc["benchmarks"][2]["stats"]["median"] = -1.0
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc, indent=4), "utf-8")
    summary, errors = import_into(pytest_benchmark.import_files, [path], tmp_path / "out.jsonl")
    assert (summary.imported, summary.rejected) == (5, 2)
    assert errors[0].endswith("/benchmarks/1: the benchmark has no stats")
    assert errors[1].endswith("/benchmarks/2: stats.median is -1.0; expected a duration >= 0")
