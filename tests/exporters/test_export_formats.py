"""Records to Bencher's BMF and github-action-benchmark's JSON: from a records file
(``kernelindex convert``) and from the store (``export --format``), streamed, one value
per benchmark, what cannot be held said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import run_in_process
from _foreign import FIXTURES, copy_with_mtime, records

from kernelindex_sdk.errors import ArgumentError
from kernelindex_sdk.exporters import FORMATS, export_chunks
from kernelindex_sdk.exporters.bmf import measure_slug

EXAMPLE = FIXTURES / "liger-jsd-forward-torch-b200.json"


@pytest.fixture
def gbench_records(tmp_path: Path) -> Path:
    out = tmp_path / "gbench.jsonl"
    status, _, _ = run_in_process(
        "import", "gbench", str(FIXTURES / "gbench" / "kernels.json"), "-o", str(out)
    )
    assert status == 0
    return out


def _bmf(values: list[Any], notes: list[str] | None = None) -> dict[str, Any]:
    text = "".join(
        export_chunks(values, "bmf", on_notice=(notes.append if notes is not None else None))
    )
    return json.loads(text)  # type: ignore[no-any-return]


def test_the_published_example_in_bmf(example: dict[str, Any]) -> None:
    """It carries only the digests of its workload and implementation: they name it."""
    spec = example["run"]["spec"]
    workload, implementation = spec["workloadDigest"][7:19], spec["implementationDigest"][7:19]
    assert _bmf([example]) == {
        f"{workload}/{implementation}@liger_kernel_bench (NVIDIA B200)": {
            "latency": {"value": 2290080.0, "lower_value": 2288390.0, "upper_value": 2290630.0}
        }
    }


def test_bmf_values_are_the_primary_statistic_and_its_bounds_in_base_units(
    gbench_records: Path,
) -> None:
    bmf = _bmf(records(gbench_records))
    runs = {r["run"]["spec"]["sourceNative"]["externalId"]: r for r in records(gbench_records)}
    fill = runs["BM_fill/rows:8/cols:64/min_time:0.010/repeats:3"]["run"]
    cpu = "CPU: 2 CPUs, L1d 32 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB"
    name = f"bm_fill/forward/kernels[cols=64,rows=8,threads=1]@google_benchmark ({cpu})"
    mean = next(
        m["value"]
        for m in fill["spec"]["measurements"]
        if m["metric"] == "latency" and m["statistic"] == "mean"
    )
    cpu = next(
        m["value"]
        for m in fill["spec"]["measurements"]
        if m["metric"] == "cpu_time" and m["statistic"] == "mean"
    )
    assert bmf[name] == {"latency": {"value": mean}, "cpu-time": {"value": cpu}}
    # Failed runs measured nothing: no benchmark of theirs.
    assert not [k for k in bmf if k.startswith(("bm_fails/", "bm_skipped/"))]
    assert len(bmf) == 9


def test_bmf_bounds_come_from_the_spread_the_run_carries(tmp_path: Path) -> None:
    out = tmp_path / "pb.jsonl"
    run_in_process(
        "import",
        "pytest-benchmark",
        str(FIXTURES / "pytest-benchmark" / "benchmark.json"),
        "-o",
        str(out),
    )
    bundle = records(out)[0]
    (measures,) = _bmf([bundle]).values()
    stats = {m["statistic"]: m["value"] for m in bundle["run"]["spec"]["measurements"]}
    assert measures["latency"] == {
        "value": stats["median"] * 1e9,
        "lower_value": stats["p25"] * 1e9,
        "upper_value": stats["p75"] * 1e9,
    }


def test_a_second_run_of_one_benchmark_is_left_out_and_said(gbench_records: Path) -> None:
    once = records(gbench_records)
    notes: list[str] = []
    twice = _bmf(once + once, notes)
    assert twice == _bmf(once)
    assert len(notes) == 9
    assert notes[0].startswith(f"run {once[0]['run']['metadata']['name']!r} left out: ")


def test_single_documents_name_the_runs_that_follow(example: dict[str, Any]) -> None:
    """The store exports a protocol that came alone before the runs that refer to it."""
    run = dict(example["run"])
    named = _bmf([example["protocol"], example["environment"], run])
    bare = _bmf([run])
    assert list(named) == [
        next(iter(bare)).replace(f"@{run['spec']['protocolDigest'][7:19]}", "@liger_kernel_bench")
        + " (NVIDIA B200)"
    ]


def test_github_action_benchmark_keeps_what_smaller_is_better(tmp_path: Path) -> None:
    source = copy_with_mtime(FIXTURES / "tritonbench" / "gemm.csv", tmp_path / "gemm.csv", 1)
    out = tmp_path / "tb.jsonl"
    run_in_process(
        "import",
        "tritonbench",
        str(source),
        "--gpu",
        "NVIDIA H100 80GB HBM3",
        "--op",
        "gemm",
        "-o",
        str(out),
    )
    text = "".join(export_chunks(records(out), "github-action-benchmark"))
    entries = json.loads(text)
    # Latency only: TFLOPS, GB/s and the speedup are better when larger; failed runs none.
    assert [e["unit"] for e in entries] == ["ns"] * 4
    first = entries[0]
    point = "gemm/forward/aten_matmul[K=256,M=256,N=256]@tritonbench_do_bench"
    assert first["name"] == f"{point} (NVIDIA H100 80GB HBM3)"
    assert first["value"] == pytest.approx(0.0123456789 * 1e6)
    assert first["extra"].splitlines()[1:] == ["median", "NVIDIA H100 80GB HBM3"]


def test_an_empty_input_is_an_empty_document() -> None:
    assert "".join(export_chunks([], "bmf")) == "{}\n"
    assert "".join(export_chunks([], "github-action-benchmark")) == "[]\n"


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ArgumentError, match="expected one of bmf, github-action-benchmark"):
        export_chunks([], "csv")
    assert FORMATS == ("bmf", "github-action-benchmark")
    assert measure_slug("cpu_time") == "cpu-time"


def test_convert_writes_a_json_file_and_reports_invalid_records(
    gbench_records: Path, tmp_path: Path
) -> None:
    lines = gbench_records.read_text().splitlines()
    lines.insert(1, '{"run": {"kind": "BenchmarkRun"}}')
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(lines) + "\n")
    out = tmp_path / "bmf.json"
    status, _, err = run_in_process("convert", "bmf", str(mixed), "-o", str(out))
    assert status == 1
    assert f"{mixed}:2:" in err
    assert json.loads(out.read_text()) == _bmf(records(gbench_records))
    status, _, err = run_in_process(
        "convert", "bmf", str(gbench_records), "-o", str(gbench_records)
    )
    assert status == 2
    status, _, err = run_in_process(
        "convert", "bmf", str(gbench_records), "-o", str(tmp_path / "x.jsonl")
    )
    assert (status, err.strip()) == (
        2,
        f"kernelindex: {tmp_path / 'x.jsonl'}: expected a .json file, got '.jsonl'",
    )


def test_export_format_reads_the_store(gbench_records: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    assert run_in_process("ingest", str(gbench_records), "--db", str(db))[0] == 0
    status, out, err = run_in_process("export", "--db", str(db), "--format", "bmf")
    assert status == 0
    assert json.loads(out) == _bmf(records(gbench_records))
    assert err == "exported the records as bmf to standard output\n"
    target = tmp_path / "gab.json"
    status, _, _ = run_in_process(
        "export", "--db", str(db), "--format", "github-action-benchmark", "-o", str(target)
    )
    assert status == 0
    assert json.loads(target.read_text()) == json.loads(
        "".join(export_chunks(records(gbench_records), "github-action-benchmark"))
    )
