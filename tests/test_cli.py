"""The kernelindex command: exit statuses, output forms, no tracebacks for bad input."""

from __future__ import annotations

import io
import json
import os
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


def test_valid_file_exits_zero_with_a_summary_that_quiet_silences() -> None:
    status, out, err = run("validate", "--verify-digests", str(EXAMPLE))
    assert (status, out) == (0, "")
    assert err == "kernelindex: 1 document(s): 1 valid, 0 invalid\n"
    assert run("validate", "-q", "--verify-digests", str(EXAMPLE)) == (0, "", "")


def test_invalid_file_exits_one_with_one_line_per_problem() -> None:
    status, out, err = run("validate", str(BAD / "unknown-key.json"))
    assert status == 1
    assert out.splitlines() == [
        f"{BAD / 'unknown-key.json'}:9:11: /run/spec/timing/latencyNs/medain:"
        " unknown key 'medain'; did you mean 'median'? [additionalProperties]"
    ]
    assert err == "kernelindex: 1 document(s): 0 valid, 1 invalid\n"


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
    assert run("validate", "-q", "--verify-digests", str(out)) == (0, "", "")


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


def test_bench_ends_with_the_summary_table_on_stderr(tmp_path: Path) -> None:
    """The main job shows its answer: medians per implementation and the speedup against
    the first, computed from the records it wrote; --no-summary turns it off."""
    out = tmp_path / "runs.jsonl"
    argv = ("bench", "jsd", "--tokens", "4", "--vocab", "64", "--no-progress", "-o", str(out))
    status, stdout, err = run(*argv)
    assert (status, stdout) == (0, "")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    medians = {
        r["run"]["spec"]["implementation"]["provider"]: r["run"]["spec"]["timing"]["latencyNs"][
            "median"
        ]
        for r in records
    }
    assert set(medians) == {"torch", "triton"}
    lines = err.splitlines()
    header = next(i for i, line in enumerate(lines) if "speedup triton vs torch" in line)
    row = lines[header + 1]
    speedup = medians["torch"] / medians["triton"]
    expected = f"{speedup:.2f}x" if speedup >= 0.1 else f"{speedup:.3g}x"
    assert row.split()[-1] == expected

    out.unlink()
    status, _, err = run(*argv, "--no-summary")
    assert status == 0
    assert "speedup" not in err


def test_bench_refuses_unknown_implementations(tmp_path: Path) -> None:
    status, _, err = run("bench", "jsd", "--impl", "cuda-magic", "-o", str(tmp_path / "x"))
    assert status == 2
    assert err.splitlines() == [
        "kernelindex: --impl: expected some of torch, torch-compile, triton, liger,"
        " got 'cuda-magic'"
    ]


# Issue 10: hostile command lines, streams and files.


def _kernelindex(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", *argv],
        capture_output=True,
        text=True,
        check=False,
        **kwargs,
    )


def _closed(fd: int) -> Any:
    return lambda: os.close(fd)


@pytest.mark.parametrize(
    ("argv", "fd", "status", "stderr"),
    [
        (("schema",), 1, 2, "kernelindex: standard output: Bad file descriptor\n"),
        (("schema",), 0, 0, ""),
        (("validate", "-q", "-"), 0, 2, "kernelindex: <stdin>: Bad file descriptor\n"),
        (("validate", "-q", str(BAD / "negative-latency.json")), 1, 2, None),
    ],
    ids=["schema>&-", "schema<&-", "validate-<&-", "validate-bad>&-"],
)
def test_closed_standard_streams_are_an_io_error(
    argv: tuple[str, ...], fd: int, status: int, stderr: str | None
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", *argv],
        stdout=subprocess.PIPE if fd != 1 else None,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        # The child must start without the stream, as after `>&-` in a shell.
        preexec_fn=_closed(fd),
    )
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    if stderr is not None:
        assert result.stderr == stderr
    else:
        assert result.stderr.count("\n") == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("argv", [("schema", "BenchmarkRun"), ("validate", str(BAD))])
def test_full_disk_on_stdout_is_one_line_and_exit_two(argv: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "kernelindex_sdk", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        "kernelindex: standard output: No space left on device"
    )
    assert "Traceback" not in result.stderr
    assert "Exception ignored" not in result.stderr


def test_a_broken_pipe_keeps_the_verdict() -> None:
    """`kernelindex validate tests/bad | head -1` exits 1, quietly."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelindex_sdk", "validate", "-q", str(BAD)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    status = process.wait()
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert first.startswith(str(BAD).encode())
    assert status == 1
    assert stderr == ""


@pytest.mark.parametrize("target", ["/dev/null", "/dev/stdout"])
def test_import_to_a_device_is_not_an_fsync_failure(target: str) -> None:
    csv = Path(__file__).parent / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
    result = _kernelindex("import", "liger", str(csv), "-o", target)
    assert result.returncode == 0, result.stderr
    assert "imported 236 row(s)" in result.stderr
    if target == "/dev/stdout":
        assert len(result.stdout.splitlines()) == 236


def test_import_of_a_missing_csv_creates_no_output(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    status, _, err = run("import", "liger", str(tmp_path / "missing.csv"), "-o", str(out))
    assert status == 2
    assert "missing.csv" in err
    assert not out.exists()


def test_text_output_escapes_file_names_and_keys(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["run"]["metadata"]["labels"]["x\nforged.json:1:1: /run: fake [json]"] = "v"
    path = tmp_path / "a\rb\nc.json"
    path.write_text(json.dumps(doc))
    status, out, _ = run("validate", str(path))
    assert status == 1
    [line] = out.splitlines()
    # The key is placed in the file (line 1), its control characters escaped.
    assert line.startswith(f"{tmp_path}/a\\rb\\nc.json:1:")
    assert ": /run/metadata/labels/x\\nforged.json" in line


def test_github_output_escapes_properties_and_message(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["run"]["spec"]["status"] = "100%\r\nok"
    path = tmp_path / "a:b,c%d.json"
    path.write_text(json.dumps(doc))
    status, out, _ = run("validate", "--format", "github", str(path))
    assert status == 1
    [line] = out.splitlines()
    assert line.startswith(f"::error file={str(tmp_path).replace(':', '%3A')}/a%3Ab%2Cc%25d.json,")
    message = line.split("::", 2)[2]
    assert "100%25\\r\\nok" in message
    assert "\r" not in line


def test_json_output_with_a_lone_surrogate_is_json(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(EXAMPLE.read_bytes().replace(b'"liger_version"', b'"\\ud800"'))
    for form in ("json", "github", "text"):
        result = _kernelindex("validate", "-q", "--format", form, str(path))
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
    output = _kernelindex("validate", "--format", "json", str(path)).stdout
    # The key's lone surrogate is shown as the text of its escape: strict parsers
    # refuse a lone \ud800 escape in JSON.
    assert '"pointer": "/run/metadata/labels/\\\\ud800"' in output
    [problem] = json.loads(output)
    assert problem["pointer"] == "/run/metadata/labels/\\ud800"
    assert "lone surrogate" in problem["message"]


def test_printed_values_are_capped(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["run"]["spec"]["timing"]["latencyNs"]["k" * 1_000_000] = 1
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    for form in ("text", "github", "json"):
        status, out, _ = run("validate", "--format", form, str(path))
        assert status == 1
        assert len(out) < 2000


def test_unreadable_input_exits_two_and_the_others_are_still_checked() -> None:
    status, out, err = run("validate", "missing.json", str(BAD / "negative-latency.json"))
    assert status == 2
    assert out.startswith(str(BAD / "negative-latency.json"))
    assert err.splitlines() == [
        "kernelindex: missing.json: no such file or directory",
        "kernelindex: 1 document(s): 0 valid, 1 invalid",
    ]


def test_empty_folder_says_so(tmp_path: Path) -> None:
    assert run("validate", str(tmp_path)) == (
        0,
        "",
        f"kernelindex: {tmp_path}: no .json or .jsonl files found\n"
        "kernelindex: 0 document(s): 0 valid, 0 invalid\n",
    )


def test_stdin_given_twice_is_read_once() -> None:
    status, _, err = run("validate", "-", "-", stdin=EXAMPLE.read_bytes())
    assert status == 0
    assert err == "kernelindex: 1 document(s): 1 valid, 0 invalid\n"


def test_deep_first_line_on_stdin_is_a_problem() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n" + EXAMPLE.read_bytes()
    status, out, _ = run("validate", "-", stdin=deep)
    assert status == 1
    assert out.startswith("<stdin>: (document): ")


def test_digest_labels_every_json_lines_record_and_speaks_json(tmp_path: Path) -> None:
    line = json.dumps(json.loads(EXAMPLE.read_text()))
    path = tmp_path / "runs.jsonl"
    path.write_text(line + "\n")
    status, out, _ = run("digest", str(path))
    assert status == 0
    assert out.splitlines()[0] == f"{path}:1"
    status, out, _ = run("digest", "--format", "json", str(path))
    assert status == 0
    [entry] = json.loads(out)
    assert (entry["source"], entry["line"]) == (str(path), 1)
    verdicts = {d["field"]: (d["matches"], d["verdict"]) for d in entry["digests"]}
    assert verdicts["protocolDigest"] == (True, "ok")
    assert verdicts["workloadDigest"][0] is None
    status, out, _ = run("digest", "--format", "json", str(BAD / "negative-latency.json"))
    assert status == 1
    [entry] = json.loads(out)
    [problem] = entry["problems"]
    assert "expected an integer >= 0" in problem["message"]


def test_a_file_name_that_is_not_utf8_prints_in_every_form(tmp_path: Path) -> None:
    name = os.fsdecode(b"bad\xff.json")
    path = tmp_path / name
    path.write_bytes((BAD / "negative-latency.json").read_bytes())
    for argv in (
        ("validate", "--format", "text", str(path)),
        ("validate", "--format", "github", str(path)),
        ("validate", "--format", "json", str(path)),
        ("digest", "--format", "json", str(path)),
        ("digest", str(path)),
    ):
        result = _kernelindex(*argv)
        assert result.returncode == 1, argv
        assert "Traceback" not in result.stderr
        # The byte that is not UTF-8 shows as \xff (in JSON, the text \xff).
        shown = "bad\\\\xff.json" if "json" in argv else "bad\\xff.json"
        assert shown in result.stdout + result.stderr
        assert "udcff" not in result.stdout + result.stderr
