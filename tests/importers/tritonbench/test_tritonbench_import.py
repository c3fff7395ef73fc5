"""TritonBench output to records: each provider at each x a run, latency the timing,
TFLOPS, GB/s and speedup measurements of their own, accuracy the status, CSV and JSON
alike."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _foreign import (
    FIXTURES,
    copy_with_mtime,
    import_into,
    measurement,
    metrics,
    valid_with_digests,
)

from kernelindex_sdk.importers import tritonbench

CSV = FIXTURES / "tritonbench" / "gemm.csv"
JSON = FIXTURES / "tritonbench" / "gemm.json"
H100 = "NVIDIA H100 80GB HBM3"


def _bundles(
    tmp_path: Path, source: Path, **options: Any
) -> tuple[list[dict[str, Any]], list[str]]:
    options.setdefault("gpu", H100)
    source = copy_with_mtime(source, tmp_path / source.name, 1_700_000_000)
    out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}.jsonl"
    _, errors = import_into(tritonbench.import_files, [source], out, **options)
    if not out.exists():
        return [], errors
    assert valid_with_digests(out) == []
    return [json.loads(line) for line in out.read_text().splitlines()], errors


def _csv_cells() -> list[dict[str, str]]:
    with CSV.open(newline="") as handle:
        return list(csv.DictReader(handle, delimiter=";"))


def test_each_provider_at_each_x_is_a_run_and_the_average_row_none(tmp_path: Path) -> None:
    bundles, errors = _bundles(tmp_path, CSV, op="gemm")
    assert errors == []
    ids = [b["run"]["spec"]["sourceNative"]["externalId"] for b in bundles]
    providers = ("aten_matmul", "triton_tutorial_matmul", "pt2_cutlass_matmul")
    assert ids == [
        f"tritonbench_gemm_fwd[x_{x}-{p}]"
        for x in ("(256, 256, 256)", "(1024, 1024, 1024)")
        for p in providers
    ]


def test_every_cell_survives_under_its_own_name(tmp_path: Path) -> None:
    bundles, _ = _bundles(tmp_path, CSV, op="gemm")
    rows = [r for r in _csv_cells() if r["(M, N, K)"] != "average"]
    for bundle in bundles:
        run = bundle["run"]
        x, provider = run["spec"]["sourceNative"]["externalId"][
            len("tritonbench_gemm_fwd[x_") : -1
        ].rsplit("-", 1)
        (row,) = [r for r in rows if r["(M, N, K)"] == x]
        for column, text in row.items():
            owner, _, metric = column.rpartition("-")
            if owner != provider or not text:
                continue
            kept = metrics(run)[metric]
            assert (kept == text) if isinstance(kept, str) else (kept == float(text)), column


def test_latency_is_the_median_timing_and_the_rates_are_measurements(tmp_path: Path) -> None:
    bundles, _ = _bundles(tmp_path, CSV, op="gemm")
    run = bundles[1]["run"]
    assert run["spec"]["status"] == "passed"
    assert run["spec"]["timing"] == {"latencyNs": {"median": 11000}, "primaryStatistic": "median"}
    assert measurement(run, "latency", "median") == {
        "metric": "latency",
        "statistic": "median",
        "unit": "ms",
        "value": 0.0110000001,
    }
    assert measurement(run, "throughput", "median")["unit"] == "TFLOP/s"
    assert measurement(run, "bandwidth", "median") == {
        "metric": "bandwidth",
        "statistic": "median",
        "unit": "GB/s",
        "value": 34.2,
    }
    assert measurement(run, "speedup", "median")["value"] == 1.122334435251505
    assert run["spec"]["workload"] == {
        "operation": "gemm",
        "pass": "forward",
        "parameters": {"M": 256, "N": 256, "K": 256},
    }
    assert run["spec"]["implementation"] == {"provider": "triton_tutorial_matmul"}
    # The baseline has no accuracy of its own: nothing checked it.
    assert bundles[0]["run"]["spec"]["status"] == "unverified"


def test_a_wrong_output_and_an_error_are_failed_runs(tmp_path: Path) -> None:
    bundles, _ = _bundles(tmp_path, CSV, op="gemm")
    mismatch, oom = bundles[2]["run"]["spec"], bundles[5]["run"]["spec"]
    assert mismatch["status"] == "failed"
    assert mismatch["failure"]["reason"] == "mismatch"
    assert "timing" not in mismatch
    assert mismatch["sourceNative"]["metrics"]["latency"] == 0.012100000110000002
    assert oom["failure"] == {"reason": "out_of_memory", "message": "CUDA error: out of memory"}


def test_the_json_form_gives_the_records_the_csv_does(tmp_path: Path) -> None:
    from_csv, _ = _bundles(tmp_path, CSV, op="gemm")
    from_json, errors = _bundles(tmp_path, JSON, x_label="(M, N, K)")
    assert errors == []
    for a, b in zip(from_csv, from_json, strict=True):
        spec_a, spec_b = a["run"]["spec"], b["run"]["spec"]
        for key in (
            "workloadDigest",
            "protocolDigest",
            "environmentDigest",
            "implementationDigest",
            "status",
            "timing",
            "measurements",
        ):
            assert spec_a.get(key) == spec_b.get(key), key
    # Without the label, the JSON's tuple is x_val/0, x_val/1, ...
    plain, _ = _bundles(tmp_path, JSON)
    assert plain[0]["run"]["spec"]["workload"]["parameters"] == {
        "x_val/0": 256,
        "x_val/1": 256,
        "x_val/2": 256,
    }


def test_the_gpu_is_the_environment(tmp_path: Path) -> None:
    bundles, _ = _bundles(tmp_path, CSV, op="gemm")
    assert bundles[0]["environment"]["spec"] == {
        "hardware": {"vendor": "nvidia", "product": H100, "architecture": "sm_90"},
        "software": {},
    }
    assert bundles[0]["protocol"]["spec"]["comparability"]["family"] == "tritonbench_do_bench"


def test_a_csv_needs_its_operator_and_a_json_must_agree_with_one_given(tmp_path: Path) -> None:
    bundles, errors = _bundles(tmp_path, CSV)
    assert bundles == []
    assert errors == [
        f"{tmp_path / 'gemm.csv'}:1: a TritonBench CSV does not name its operator; give it (--op)"
    ]
    _, errors = _bundles(tmp_path, JSON, op="addmm")
    assert errors[0].endswith(
        "the file is 'gemm' in mode 'fwd', but 'addmm' in mode 'fwd' was given"
    )


def test_mode_and_extra_parameters_are_identity(tmp_path: Path) -> None:
    bwd, _ = _bundles(tmp_path, CSV, op="gemm", mode="bwd", parameters={"precision": "bf16"})
    workload = bwd[0]["run"]["spec"]["workload"]
    assert workload["pass"] == "backward"  # noqa: S105 - a pass
    assert workload["parameters"]["precision"] == "bf16"
    fwd, _ = _bundles(tmp_path, CSV, op="gemm")
    assert fwd[0]["run"]["spec"]["workloadDigest"] != bwd[0]["run"]["spec"]["workloadDigest"]


def test_an_unknown_gpu_imports_without_architecture_and_says_so(tmp_path: Path) -> None:
    said: list[str] = []
    bundles, _ = _bundles(tmp_path, CSV, op="gemm", gpu="Acme 9000", on_notice=said.append)
    assert bundles[0]["environment"]["spec"]["hardware"] == {
        "vendor": "unknown",
        "product": "Acme 9000",
    }
    assert said == [
        f"{tmp_path / 'gemm.csv'}: unknown GPU 'Acme 9000': imported without architecture"
    ]


def test_a_hashes_row_becomes_each_providers_annotation(tmp_path: Path) -> None:
    text = CSV.read_text("utf-8").replace("average;", "hashes;abc123;def456;0f0f0f\naverage;", 1)
    path = tmp_path / "hashed.csv"
    path.write_text(text, "utf-8")
    bundles, errors = _bundles(tmp_path, path, op="gemm")
    assert errors == []
    notes = [
        b["run"]["metadata"].get("annotations", {}).get("tritonbench/kernel_source_hash")
        for b in bundles
    ]
    assert notes == ["abc123", "def456", "0f0f0f"] * 2


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("(64, 64, 64);1_000" + ";" * 12, "aten_matmul-latency is not a CSV number: '1_000'"),
        ("(64, 64, 64)" + ";" * 13, "no value for provider 'aten_matmul' at x '(64, 64, 64)'"),
        ("(64, 64, 64)" + ";" * 14, "expected 14 fields as in the header, found 15"),
    ],
)
def test_a_bad_row_is_reported_with_its_line(tmp_path: Path, row: str, reason: str) -> None:
    text = CSV.read_text("utf-8").replace("average;", row + "\naverage;", 1)
    path = tmp_path / "bad.csv"
    path.write_text(text, "utf-8")
    bundles, errors = _bundles(tmp_path, path, op="gemm")
    assert len(bundles) == 6
    assert errors[0].startswith(f"{tmp_path / 'bad.csv'}:4: ")
    assert reason in errors[0]
