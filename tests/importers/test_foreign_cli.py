"""``kernelindex import nvbench|gbench|pytest-benchmark|tritonbench``: what ``import liger``
does, for every fixture: the same output twice, nothing added twice, bad entries said
with their place while the rest imports, outputs that are inputs refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cli_runner import run_in_process
from _foreign import FIXTURES, copy_with_mtime, records

H100 = "NVIDIA H100 80GB HBM3"
# Every fixture with the options its format needs (TritonBench writes no GPU, its CSV no
# operator).
CASES = [
    *[("nvbench", p, ()) for p in sorted((FIXTURES / "nvbench").glob("*.json"))],
    *[("gbench", p, ()) for p in sorted((FIXTURES / "gbench").glob("*.json"))],
    *[("pytest-benchmark", p, ()) for p in sorted((FIXTURES / "pytest-benchmark").glob("*.json"))],
    ("tritonbench", FIXTURES / "tritonbench" / "gemm.csv", ("--gpu", H100, "--op", "gemm")),
    ("tritonbench", FIXTURES / "tritonbench" / "gemm.json", ("--gpu", H100)),
]
IDS = [f"{fmt}-{path.name[:24]}" for fmt, path, _ in CASES]


@pytest.mark.parametrize(("fmt", "source", "options"), CASES, ids=IDS)
def test_importing_twice_gives_byte_identical_output_and_adds_nothing_twice(
    tmp_path: Path, fmt: str, source: Path, options: tuple[str, ...]
) -> None:
    # A copy with a fixed time: nvbench and TritonBench files carry none of their own.
    copy = copy_with_mtime(source, tmp_path / source.name, 1_700_000_000)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    status, _, err = run_in_process("import", fmt, str(copy), *options, "-o", str(first))
    imported = len(records(first))
    assert imported > 0
    assert err.splitlines()[-1].startswith(f"imported {imported} run(s); ")
    again = run_in_process("import", fmt, str(copy), *options, "-o", str(second))
    assert again[0] == status
    assert first.read_bytes() == second.read_bytes()
    before = first.read_bytes()
    status_3, _, err_3 = run_in_process("import", fmt, str(copy), *options, "-o", str(first))
    assert status_3 == status
    assert first.read_bytes() == before
    rejected = err.splitlines()[-1].split("; ")[1]
    assert err_3.splitlines()[-1] == (
        f"imported 0 run(s); {rejected}; {imported} skipped, already in {first}"
    )


def test_a_bad_entry_exits_1_with_its_place_and_the_rest_imports(tmp_path: Path) -> None:
    source = FIXTURES / "gbench" / "Inputs" / "test3_run0.json"
    out = tmp_path / "out.jsonl"
    status, _, err = run_in_process("import", "gbench", str(source), "-o", str(out))
    assert status == 1
    assert err.splitlines() == [
        f"{source}:10: /benchmarks/0: an aggregate row without aggregate_name",
        f"{source}:32: /benchmarks/3: an aggregate row without aggregate_name",
        f"{source}:40: /benchmarks/4: an aggregate row without aggregate_name",
        "imported 4 run(s); 3 rejected",
    ]
    assert len(records(out)) == 4


def test_provenance_flags_annotate_each_run(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    status, _, _ = run_in_process(
        "import",
        "gbench",
        str(FIXTURES / "gbench" / "kernels.json"),
        "-o",
        str(out),
        "--commit",
        "abc1234",
        "--branch",
        "main",
        "--commit-time",
        "2026-12-01T10:00:00+01:00",
    )
    assert status == 0
    notes = records(out)[0]["run"]["metadata"]["annotations"]
    assert notes["kernelindex.dev/commit"] == "abc1234"
    assert notes["kernelindex.dev/branch"] == "main"
    assert notes["kernelindex.dev/commit-time"] == "2026-12-01T09:00:00.000Z"


def test_an_output_that_is_an_input_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    source = copy_with_mtime(FIXTURES / "nvbench" / "current-writer.json", tmp_path / "x.json", 1)
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    before = source.read_bytes()
    status, _, err = run_in_process("import", "nvbench", str(source), "-o", str(link))
    assert status == 2
    assert "expected an output that is none of the inputs" in err
    assert source.read_bytes() == before


def test_a_missing_or_directory_input_stops_with_nothing_written(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    status, _, err = run_in_process(
        "import", "pytest-benchmark", str(tmp_path / "none.json"), "-o", str(out)
    )
    assert (status, err) == (
        2,
        f"kernelindex: {tmp_path / 'none.json'}: No such file or directory\n",
    )
    status, _, err = run_in_process("import", "nvbench", str(tmp_path), "-o", str(out))
    assert (status, err) == (
        2,
        f"kernelindex: {tmp_path}: is a directory, expected an nvbench JSON file\n",
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("tritonbench", "x.csv"), "the following arguments are required: --gpu"),
        (("tritonbench", "x.csv", "--gpu", " "), "argument --gpu: must not be empty"),
        (
            ("tritonbench", "x.csv", "--gpu", "H100", "--mode", "sideways"),
            "argument --mode: invalid choice",
        ),
        (
            ("tritonbench", "x.csv", "--gpu", "H100", "--param", "bf16"),
            "expected KEY=VALUE, got 'bf16'",
        ),
        (
            ("nvbench", "x.json", "--observed-at", "yesterday"),
            "expected an RFC 3339 timestamp with a zone",
        ),
        (("gbench", "x.json", "--machine", ""), "argument --machine: must not be empty"),
    ],
)
def test_bad_options_are_usage_errors(argv: tuple[str, ...], message: str) -> None:
    status, _, err = run_in_process("import", *argv)
    assert status == 2
    assert message in err


def test_observed_at_sets_the_time_of_files_without_one(tmp_path: Path) -> None:
    source = FIXTURES / "tritonbench" / "gemm.csv"
    out = tmp_path / "out.jsonl"
    status, _, _ = run_in_process(
        "import",
        "tritonbench",
        str(source),
        "--gpu",
        H100,
        "--op",
        "gemm",
        "--observed-at",
        "2026-05-27T19:14:29.5+02:00",
        "-o",
        str(out),
    )
    assert status == 0
    assert {r["run"]["spec"]["observedAt"] for r in records(out)} == {"2026-05-27T17:14:29.500Z"}
    assert os.path.getsize(out) > 0
