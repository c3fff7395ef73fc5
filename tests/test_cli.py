"""The kernelindex command: exit statuses, output forms, no tracebacks for bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk._cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json"
BAD = Path(__file__).parent / "bad"


def run(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


def test_version_and_help() -> None:
    status, out, _ = run("--version")
    assert status == 0
    assert out.startswith("kernelindex ")
    assert run("--help")[0] == 0


def test_valid_file_exits_zero_silently() -> None:
    assert run("validate", "--verify-digests", str(EXAMPLE)) == (0, "", "")


def test_invalid_file_exits_one_with_one_line_per_problem() -> None:
    status, out, err = run("validate", str(BAD / "unknown-key.json"))
    assert status == 1
    assert out.splitlines() == [
        f"{BAD / 'unknown-key.json'}:9:11: /run/spec/timing/latencyNs/medain:"
        " unknown key 'medain'; did you mean 'median'? [additionalProperties]"
    ]
    assert err == ""


def test_missing_path_is_a_usage_error() -> None:
    status, _, err = run("validate", "does-not-exist.json")
    assert status == 2
    assert "no such file" in err


def test_bad_arguments_are_a_usage_error() -> None:
    assert run("validate")[0] == 2
    assert run("frobnicate")[0] == 2


def test_stdin_json_and_json_lines() -> None:
    text = EXAMPLE.read_bytes()
    assert run("validate", "-", stdin=text)[0] == 0
    one_line = json.dumps(json.loads(text)).encode()
    other = json.loads(text)
    other["run"]["spec"]["status"] = "bad"
    lines = one_line + b"\n" + json.dumps(other).encode() + b"\n"
    status, out, _ = run("validate", "-", stdin=lines)
    assert status == 1
    assert out.startswith("<stdin>:2:")


def test_directories_are_searched_recursively(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "run.json").write_bytes(EXAMPLE.read_bytes())
    (tmp_path / "a" / "notes.txt").write_text("not a record")
    (tmp_path / "bad.jsonl").write_text('{"run": 1}\n')
    status, out, _ = run("validate", str(tmp_path))
    assert status == 1
    assert out.startswith(f"{tmp_path / 'bad.jsonl'}:1:")


def test_json_format(tmp_path: Path) -> None:
    status, out, _ = run("validate", "--format", "json", str(BAD / "negative-latency.json"))
    assert status == 1
    [problem] = json.loads(out)
    assert problem["pointer"] == "/run/spec/timing/latencyNs/median"
    assert problem["code"] == "minimum"
    assert problem["line"] == 8


def test_github_format() -> None:
    status, out, _ = run("validate", "--format", "github", str(BAD / "negative-latency.json"))
    assert status == 1
    assert out.startswith(f"::error file={BAD / 'negative-latency.json'},line=8,col=21::")


def test_whole_bad_corpus_without_a_traceback() -> None:
    """Through a real process: exit 1, messages, and never a Python traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", "validate", str(BAD)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert len(result.stdout.splitlines()) >= 40


def test_digest_shows_declared_and_computed() -> None:
    status, out, _ = run("digest", str(EXAMPLE))
    assert status == 0
    assert out.count("  ok") == 2
    assert out.count("not recomputable") == 2


def test_digest_mismatch_exits_one(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["protocol"]["spec"]["measurement"]["timer"] = "cuda_graph"
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(doc))
    status, out, _ = run("digest", str(path))
    assert status == 1
    assert "MISMATCH" in out


def test_schema_prints_and_writes(tmp_path: Path) -> None:
    status, out, _ = run("schema", "BenchmarkRun")
    assert status == 0
    assert json.loads(out)["title"] == "BenchmarkRun"
    assert "RecordBundle" in run("schema")[1]
    assert run("schema", "--out", str(tmp_path))[0] == 0
    assert {p.name for p in tmp_path.iterdir()} >= {
        "bundle.json",
        "common.json",
        "benchmark-run.json",
    }


def test_pre_commit_hook_definition_runs_the_validator() -> None:
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: kernelindex-validate" in hooks
    assert "entry: kernelindex validate" in hooks


def test_import_liger_writes_valid_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    csv = Path(__file__).parent / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
    status, _, err = run("import", "liger", str(csv), "-o", str(out))
    assert status == 0, err
    assert "imported 236 row(s); 0 rejected" in err
    assert len(out.read_text().splitlines()) == 236
    assert run("validate", "--verify-digests", str(out)) == (0, "", "")


def test_import_liger_reports_bad_rows_and_keeps_the_rest(tmp_path: Path) -> None:
    csv = Path(__file__).parent / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
    lines = csv.read_text().splitlines()
    lines[3] = lines[3].replace(",speed,", ",latency,")
    broken = tmp_path / "broken.csv"
    broken.write_text("\n".join(lines) + "\n")
    out = tmp_path / "records.jsonl"
    status, _, err = run("import", "liger", str(broken), "-o", str(out))
    assert status == 1
    assert f"{broken}:4: unknown metric_name 'latency'" in err
    assert len(out.read_text().splitlines()) == 235


def _bench(tmp_path: Path, name: str, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / name
    status, _, err = run(
        "bench", "jsd", "--tokens", "4", "--vocab", "256", "--no-progress", "-o", str(out), *extra
    )
    assert status == 0, err
    assert "no GPU found" in err
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow
def test_bench_on_the_cpu_twice_gives_valid_records_with_the_same_digests(tmp_path: Path) -> None:
    first = _bench(tmp_path, "a.jsonl")
    second = _bench(tmp_path, "b.jsonl")
    assert len(first) == len(second) == 2
    assert run("validate", "--verify-digests", str(tmp_path))[0] == 0
    fields = ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest")
    for a, b in zip(first, second, strict=True):
        assert a["run"]["spec"]["status"] == "passed"
        assert [a["run"]["spec"][f] for f in fields] == [b["run"]["spec"][f] for f in fields]
        assert a["run"]["metadata"]["name"] != b["run"]["metadata"]["name"]


def test_bench_refuses_unknown_implementations(tmp_path: Path) -> None:
    status, _, err = run("bench", "jsd", "--impl", "cuda-magic", "-o", str(tmp_path / "x"))
    assert status == 2
    assert err.splitlines() == [
        "kernelindex: --impl: expected some of torch, torch-compile, triton, liger,"
        " got 'cuda-magic'"
    ]
