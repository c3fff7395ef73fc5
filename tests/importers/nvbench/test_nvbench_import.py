"""nvbench JSON to records: every state a run per measurement (or a stated reason), every
number kept, the device the environment, the cold and batch methods apart."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from _foreign import (
    FIXTURES,
    copy_with_mtime,
    import_into,
    measurement,
    metrics,
    runs,
    valid_with_digests,
)

from kernelindex_sdk.errors import UnsupportedSourceError
from kernelindex_sdk.importers import nvbench

TEST_REF = FIXTURES / "nvbench" / "test_ref.json"
CURRENT = FIXTURES / "nvbench" / "current-writer.json"
METHODS = ("cold", "batch", "cpu_only")


def _value(item: dict[str, str]) -> Any:
    text = item["value"]
    return {"int64": int, "float64": float, "string": str}[item["type"]](text)


def _summaries(state: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for summary in state.get("summaries") or ():
        for item in summary.get("data", ()):
            key = summary["tag"] if item["name"] == "value" else f"{summary['tag']}/{item['name']}"
            found[key] = _value(item)
    return found


def _expected(path: Path) -> list[tuple[str, str, str, dict[str, Any], dict[str, Any]]]:
    """(benchmark, state, method, state object, summaries) per run the file should give,
    read straight from the file."""
    doc = json.loads(path.read_text("utf-8"))
    found = []
    for bench in doc["benchmarks"]:
        for state in bench["states"]:
            summaries = _summaries(state)
            methods = [m for m in METHODS if any(k.startswith(f"nv/{m}/") for k in summaries)]
            found.extend(
                (bench["name"], state["name"], method, state, summaries)
                for method in methods or ["cold"]
            )
    return found


def _import_runs(source: Path, folder: Path) -> list[dict[str, Any]]:
    out = folder / "runs.jsonl"
    summary, errors = import_into(nvbench.import_files, [source], out)
    assert errors == []
    assert summary.rejected == 0
    assert valid_with_digests(out) == []
    return runs(out)


@pytest.fixture(scope="module")
def test_ref(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return _import_runs(TEST_REF, tmp_path_factory.mktemp("nvbench"))


def _as_kept(value: Any) -> Any:
    """A value as sourceNative.metrics keeps it: a non-finite float as its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


@pytest.mark.parametrize("source", [TEST_REF, CURRENT], ids=["test_ref", "current-writer"])
def test_every_state_and_value_of_each_fixture_survives(tmp_path: Path, source: Path) -> None:
    imported = _import_runs(source, tmp_path)
    expected = _expected(source)
    assert [r["spec"]["sourceNative"]["externalId"] for r in imported] == [
        f"{b}/{s}/{m}" for b, s, m, _, _ in expected
    ]
    for run, (_, _, method, state, summaries) in zip(imported, expected, strict=True):
        kept = metrics(run)
        others = ("nv/cold/", "nv/batch/", "nv/cpu_only/")
        for key, value in summaries.items():
            if key.startswith(f"nv/{method}/") or not key.startswith(others):
                stored = next(
                    v
                    for k, v in kept.items()
                    if k == key or k.startswith(key.replace(":", "_") + ".")
                )
                assert stored == _as_kept(value), key
        assert run["spec"]["workload"]["parameters"] == {
            a["name"]: _value(a) for a in state["axis_values"] or ()
        }
        if run["spec"]["status"] != "failed":
            seconds = summaries[f"nv/{method}/time/{'cpu' if method == 'cpu_only' else 'gpu'}/mean"]
            assert measurement(run, "latency", "mean")["value"] == seconds
            assert measurement(run, "latency", "mean")["unit"] == "s"


def test_every_state_of_nvbenchs_own_file_becomes_a_run_per_measurement(
    test_ref: list[dict[str, Any]],
) -> None:
    expected = _expected(TEST_REF)
    assert len(expected) == 214  # 88 measured states x (cold, batch) + 38 skipped
    got = [r["spec"]["sourceNative"]["externalId"] for r in test_ref]
    assert got == [f"{b}/{s}/{m}" for b, s, m, _, _ in expected]


def test_every_summary_value_survives_to_the_last_digit(test_ref: list[dict[str, Any]]) -> None:
    for run, (_, _, method, state, summaries) in zip(test_ref, _expected(TEST_REF), strict=True):
        kept = metrics(run)
        own = {
            k: v
            for k, v in summaries.items()
            if k.startswith(f"nv/{method}/") or not k.startswith(("nv/cold/", "nv/batch/"))
        }
        for key, value in own.items():
            assert kept[key] == value, key
            assert type(kept[key]) is type(value), key
        for key in ("min_samples", "min_time", "max_noise", "skip_time", "timeout"):
            assert kept[f"state/{key}"] == state[key]


def test_the_gpu_mean_is_the_timing_in_seconds_and_nanoseconds(
    test_ref: list[dict[str, Any]],
) -> None:
    for run, (_, _, method, _, summaries) in zip(test_ref, _expected(TEST_REF), strict=True):
        if run["spec"]["status"] == "failed":
            continue
        seconds = summaries[f"nv/{method}/time/gpu/mean"]
        assert measurement(run, "latency", "mean") == {
            "metric": "latency",
            "statistic": "mean",
            "unit": "s",
            "value": seconds,
        }
        assert run["spec"]["timing"]["latencyNs"]["mean"] == round(seconds * 10**9)
        assert run["spec"]["timing"]["samples"] == summaries[f"nv/{method}/sample_size"]


def test_axes_become_the_workload_parameters_with_their_types(
    test_ref: list[dict[str, Any]],
) -> None:
    for run, (bench, _, _, state, _) in zip(test_ref, _expected(TEST_REF), strict=True):
        workload = run["spec"]["workload"]
        assert run["spec"]["sourceNative"]["benchmark"] == bench
        assert workload["operation"] == bench
        assert workload["parameters"] == {a["name"]: _value(a) for a in state["axis_values"] or ()}


def test_the_device_becomes_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    import_into(nvbench.import_files, [TEST_REF], out)
    bundles = [json.loads(line) for line in out.read_text().splitlines()]
    hardware = {b["environment"]["spec"]["hardware"]["product"]: b["environment"] for b in bundles}
    assert hardware["Quadro GV100"]["spec"] == {
        "hardware": {
            "vendor": "nvidia",
            "product": "Quadro GV100",
            "architecture": "sm_70",
            "memoryBytes": 34086060032,
            "multiprocessors": 80,
            "l2CacheBytes": 6291456,
        },
        "software": {},
    }
    assert hardware["Quadro GP100"]["spec"]["hardware"]["architecture"] == "sm_60"
    run = bundles[0]["run"]
    notes = run["metadata"]["annotations"]
    assert notes["nvbench/device/sm_default_clock_rate"] == "1627000000"
    assert notes["nvbench/device/ecc_state"] == "false"
    assert (
        notes["nvbench/meta/version/nvbench/git_sha"] == "348acbd6eb752a87e15c28fe1ad1cb827eaaadec"
    )


def test_a_skipped_state_is_a_failed_run_with_nvbenchs_reason(
    test_ref: list[dict[str, Any]],
) -> None:
    skipped = [
        (run, state)
        for run, (_, _, _, state, _) in zip(test_ref, _expected(TEST_REF), strict=True)
        if state["is_skipped"]
    ]
    assert len(skipped) == 38
    for run, state in skipped:
        assert run["spec"]["status"] == "failed"
        assert run["spec"]["failure"] == {"reason": "unsupported", "message": state["skip_reason"]}
        assert "timing" not in run["spec"]
        assert "measurements" not in run["spec"]


def _bundles(path: Path, **options: Any) -> list[dict[str, Any]]:
    out = path.parent / f"{path.stem}-{len(options)}.jsonl"
    out.unlink(missing_ok=True)
    _, errors = import_into(nvbench.import_files, [path], out, **options)
    assert errors == []
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_cold_batch_and_cpu_only_never_share_a_protocol(tmp_path: Path) -> None:
    bundles = _bundles(copy_with_mtime(CURRENT, tmp_path / "current.json", 1_700_000_000))
    by_method: dict[str, set[str]] = {}
    for bundle in bundles:
        method = bundle["run"]["spec"]["sourceNative"]["externalId"].rsplit("/", 1)[1]
        by_method.setdefault(method, set()).add(bundle["run"]["spec"]["protocolDigest"])
    assert set(by_method) == set(METHODS)
    assert all(len(digests) == 1 for digests in by_method.values())
    assert len(set().union(*by_method.values())) == 3
    families = {b["protocol"]["spec"]["comparability"]["family"] for b in bundles}
    assert families == {"nvbench_cold", "nvbench_batch", "nvbench_cpu_only"}
    cold = next(
        b["protocol"]["spec"]
        for b in bundles
        if b["protocol"]["metadata"]["name"] == "nvbench-cold"
    )
    assert cold["measurement"]["timer"] == "cuda_events"
    assert cold["measurement"]["l2Flush"] == {"policy": "buffer_write"}


def test_two_files_of_one_machine_and_method_share_protocol_and_environment(
    tmp_path: Path,
) -> None:
    first = _bundles(copy_with_mtime(TEST_REF, tmp_path / "monday.json", 1_700_000_000))
    second = _bundles(copy_with_mtime(TEST_REF, tmp_path / "tuesday.json", 1_700_086_400))
    for a, b in zip(first, second, strict=True):
        assert a["run"]["spec"]["observedAt"] != b["run"]["spec"]["observedAt"]
        for key in (
            "protocolDigest",
            "environmentDigest",
            "workloadDigest",
            "implementationDigest",
        ):
            assert a["run"]["spec"][key] == b["run"]["spec"][key]


def test_the_current_writers_statistics_fill_the_timing(tmp_path: Path) -> None:
    bundles = _bundles(copy_with_mtime(CURRENT, tmp_path / "current.json", 1_700_000_000))
    cold = bundles[0]["run"]
    assert cold["spec"]["sourceNative"]["externalId"] == "copy/Device=0 T=F32 Elements=2^20/cold"
    assert cold["spec"]["timing"]["latencyNs"] == {
        "mean": 8001,
        "median": 7900,
        "min": 7500,
        "max": 13100,
        "stddev": 310,
        "p25": 7800,
        "p75": 8100,
    }
    assert measurement(cold, "host_latency", "mean")["value"] == 0.000011234
    assert measurement(cold, "bandwidth", "mean") == {
        "metric": "bandwidth",
        "statistic": "mean",
        "unit": "B/s",
        "value": 2097152000000,
    }
    # Declared memory traffic is the work's bytes: reads plus writes.
    assert cold["spec"]["workload"]["bytesMoved"] == 8388608
    # The clock and the sample-times file are kept, under nvbench's names.
    assert metrics(cold)["nv/cold/sm_clock_rate/mean"] == 1755000000
    sidecar = [
        k for k in metrics(cold) if k.startswith("nv/json/bin_nv/cold/sample_times/filename")
    ]
    assert [metrics(cold)[k] for k in sidecar] == ["current-writer.json-bin/0.bin"]
    assert metrics(cold)["my/launch/policy"] == "vectorized"


def test_an_infinite_stdev_stays_as_text_and_out_of_the_timing(tmp_path: Path) -> None:
    bundles = _bundles(copy_with_mtime(CURRENT, tmp_path / "current.json", 1_700_000_000))
    (once,) = [
        b["run"] for b in bundles if b["run"]["spec"]["sourceNative"]["benchmark"] == "copy once"
    ]
    assert metrics(once)["nv/cold/time/gpu/stdev/absolute"] == "Infinity"
    assert "stddev" not in once["spec"]["timing"]["latencyNs"]
    assert once["spec"]["timing"]["samples"] == 1


def test_a_cold_measurement_without_samples_is_a_timeout(tmp_path: Path) -> None:
    bundles = _bundles(copy_with_mtime(CURRENT, tmp_path / "current.json", 1_700_000_000))
    (throttled,) = [
        b["run"] for b in bundles if b["run"]["spec"]["sourceNative"]["benchmark"] == "throttled"
    ]
    assert throttled["spec"]["status"] == "failed"
    assert throttled["spec"]["failure"]["reason"] == "timeout"
    assert metrics(throttled)["nv/cold/walltime"] == 0.5123456


def test_observed_at_defaults_to_the_files_time_and_can_be_given(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    source = copy_with_mtime(CURRENT, tmp_path / "current.json", 1_700_000_000.25)
    assert _bundles(source)[0]["run"]["spec"]["observedAt"] == "2023-11-14T22:13:20.250Z"
    given = datetime(2026, 5, 27, 17, 14, 29, tzinfo=timezone.utc)
    assert _bundles(source, observed_at=given)[0]["run"]["spec"]["observedAt"] == (
        "2026-05-27T17:14:29.000Z"
    )


def _broken(tmp_path: Path) -> Path:
    doc = json.loads(TEST_REF.read_text("utf-8"))
    doc["benchmarks"][0]["states"][1]["summaries"][0]["data"][0]["value"] = "many"
    doc["benchmarks"][2]["states"][0]["device"] = 7
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc, indent=2), "utf-8")
    return path


def test_a_bad_state_is_reported_with_its_place_and_the_rest_imports(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    broken = _broken(tmp_path)
    lines = broken.read_text("utf-8").splitlines()
    # The state's "{" is the line above its first "Device=1" name.
    state_line = next(i for i, line in enumerate(lines) if '"name": "Device=1"' in line)
    summary, errors = import_into(nvbench.import_files, [broken], out)
    assert summary.rejected == 2
    assert summary.imported == 214 - 2 - 2
    assert errors[0].endswith(
        "/benchmarks/0/states/1: summaries/0 (nv/cold/sample_size): 'many' is no int64"
    )
    assert errors[0].startswith(f"{broken}:{state_line}: ")
    assert errors[1].endswith("/benchmarks/2/states/0: device 7 is not in /devices")


def test_without_on_error_the_first_bad_state_raises(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedSourceError, match="is no int64"):
        list(nvbench.read(_broken(tmp_path)))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"benchmarks": {}}', "not an nvbench JSON file: no 'benchmarks' list"),
        ("[1, 2]", "not an nvbench JSON file: no 'benchmarks' list"),
        ('{"a": 1, "a": 2}', "not JSON: key 'a' appears twice in one object"),
        ('{"benchmarks": [\n  oops]}', "not JSON: Expecting value (column 3)"),
        ("", "the file is empty"),
        (
            '{"meta": {"version": {"json": {"major": 2}}}, "benchmarks": []}',
            "nvbench JSON version 2; this importer reads version 1",
        ),
    ],
)
def test_a_file_that_is_not_nvbench_json_is_one_line(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, "utf-8")
    summary, errors = import_into(nvbench.import_files, [path], tmp_path / "out.jsonl")
    assert summary.imported == 0
    line = 2 if "oops" in text else 1
    assert errors == [f"{path}:{line}: {reason}"]
    assert not (tmp_path / "out.jsonl").exists()


def test_the_relative_noise_sentinel_never_becomes_a_statistic(tmp_path: Path) -> None:
    """nvbench writes its relative noise as a fraction: it stays a metric, never a stddev."""
    bundles = _bundles(copy_with_mtime(TEST_REF, tmp_path / "ref.json", 1_700_000_000))
    for bundle in bundles:
        latency = bundle["run"]["spec"].get("timing", {}).get("latencyNs", {})
        assert "stddev" not in latency
        for value in metrics(bundle["run"]).values():
            assert not (isinstance(value, float) and math.isnan(value))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"summaries": 3}, "summaries is 3, expected an array"),
        ({"axis_values": {"a": 1}}, "axis_values is {'a': 1}, expected an array"),
        ({"device": [0]}, "device [0] is not in /devices"),
        ({"device": True}, "device true is not in /devices"),
    ],
)
def test_a_state_of_the_wrong_shape_is_one_reason(
    tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    doc = json.loads(CURRENT.read_text("utf-8"))
    doc["benchmarks"][1]["states"][0].update(change)
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc), "utf-8")
    summary, errors = import_into(nvbench.import_files, [path], tmp_path / "out.jsonl")
    assert summary.imported == 5
    assert len(errors) == 1
    assert errors[0].endswith(f"/benchmarks/1/states/0: {reason}")


def test_compare_pairs_one_method_across_files_never_two_methods(tmp_path: Path) -> None:
    from _cli_runner import run_in_process

    monday = copy_with_mtime(CURRENT, tmp_path / "monday.json", 1_700_000_000)
    tuesday = copy_with_mtime(CURRENT, tmp_path / "tuesday.json", 1_700_086_400)
    for source in (monday, tuesday):
        import_into(nvbench.import_files, [source], tmp_path / f"{source.stem}.jsonl")
    lines = {
        day: (tmp_path / f"{day}.jsonl").read_text().splitlines() for day in ("monday", "tuesday")
    }

    def method(line: str, name: str) -> bool:
        return f'/{name}"' in json.loads(line)["run"]["spec"]["sourceNative"]["externalId"] + '"'

    (tmp_path / "cold.jsonl").write_text(
        "\n".join(x for x in lines["monday"] if method(x, "cold")) + "\n"
    )
    (tmp_path / "batch.jsonl").write_text(
        "\n".join(x for x in lines["tuesday"] if method(x, "batch")) + "\n"
    )
    status, out, _ = run_in_process(
        "compare", str(tmp_path / "cold.jsonl"), str(tmp_path / "batch.jsonl")
    )
    assert status == 0
    assert out.startswith("no pairs")
    assert "comparability.family 'nvbench_cold' vs 'nvbench_batch'" in out
    status, out, _ = run_in_process(
        "compare",
        str(tmp_path / "monday.jsonl"),
        str(tmp_path / "tuesday.jsonl"),
        "--format",
        "json",
    )
    assert status == 0
    pairs = json.loads(out)
    # Every run pairs with its own method's run of the other day (6 runs, 6 pairs).
    assert len(pairs) == 6
    ids = {
        r["run"]["metadata"]["name"]: r["run"]["spec"]["sourceNative"]["externalId"]
        for day in lines.values()
        for r in map(json.loads, day)
    }
    assert all(ids[p["base"]["run"]] == ids[p["new"]["run"]] for p in pairs)
