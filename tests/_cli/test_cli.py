"""The kernelindex command: exit statuses, output forms, no tracebacks for bad input or
hostile conditions (files that are not files, closed or full streams, odd names)."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import documents, merge
from kernelindex_sdk._base.files import replace_file
from kernelindex_sdk._base.schemas import export_schemas
from kernelindex_sdk._cli import main
from kernelindex_sdk._cli._common import ints, names
from kernelindex_sdk.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = Path(__file__).parents[1] / "fixtures" / "liger-jsd-forward-torch-b200.json"
BAD = Path(__file__).parents[1] / "bad"


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
    csv = Path(__file__).parents[1] / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
    status, _, err = run("import", "liger", str(csv), "-o", str(out))
    assert status == 0, err
    assert "imported 236 row(s); 0 rejected" in err
    assert len(out.read_text().splitlines()) == 236
    assert run("validate", "-q", "--verify-digests", str(out)) == (0, "", "")


def test_import_liger_reports_bad_rows_and_keeps_the_rest(tmp_path: Path) -> None:
    csv = Path(__file__).parents[1] / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
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
    csv = Path(__file__).parents[1] / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
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


# Hostile input: symlinks, devices, FIFOs and folders where a file is expected; closed,
# full or departing standard streams; loose list options; names that are not UTF-8.

FIXTURES = Path(__file__).parents[1] / "fixtures"
CSV = FIXTURES / "liger" / "all_benchmark_data.subset.csv"
BAD_ROW = (
    "cross_entropy,liger,forward,speed,ms,V,vocab size,4096,abc,0.5,0.6,"
    '"{""B"": 8, ""T"": 2048}",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n'
)


def command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "kernelindex_sdk", *argv]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSON Lines file of a few hundred records: more than a pipe's buffer holds."""
    out = tmp_path_factory.mktemp("records") / "records.jsonl"
    assert run("import", "liger", str(CSV), "-o", str(out))[0] == 0
    assert out.stat().st_size > 2**17
    return out


# --- One writer that replaces files: through symlinks, never over a device ------------


def test_write_json_writes_through_a_symlink_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "target.json"
    target.write_text("{}")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to("target.json")
    record = json.loads(EXAMPLE.read_text())
    documents.write_json(link, record)
    assert link.is_symlink()
    assert json.loads(target.read_text()) == record
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "target.json"]


def test_write_json_through_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    (tmp_path / "link.json").symlink_to("made.json")
    record = json.loads(EXAMPLE.read_text())
    documents.write_json(tmp_path / "link.json", record)
    assert json.loads((tmp_path / "made.json").read_text()) == record
    assert (tmp_path / "link.json").is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "folder", "devnull"])
def test_writers_refuse_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path(os.devnull)
    before = os.stat(path).st_mode
    for write in (
        lambda: documents.write_json(path, json.loads(EXAMPLE.read_text())),
        lambda: replace_file(path, ["x"]),
    ):
        with pytest.raises(InputError, match="expected a regular file to replace"):
            write()
    assert os.stat(path).st_mode == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if kind == "devnull" else ["out.json"])


def test_a_failing_chunk_leaves_the_earlier_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text("old\n")

    def chunks() -> object:
        yield "new\n"
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        replace_file(path, chunks())  # type: ignore[arg-type]
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_merge_writes_through_a_symlink(tmp_path: Path, records: Path) -> None:
    target = tmp_path / "target.jsonl"
    target.write_text("x\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    status, _, err = run("merge", str(records), "-o", str(link))
    assert status == 0, err
    assert link.is_symlink()
    _, merged, _ = run("merge", str(records))
    assert target.read_text() == merged


def test_merge_refuses_a_folder_in_one_line(tmp_path: Path, records: Path) -> None:
    (tmp_path / "d.jsonl").mkdir()
    status, out, err = run("merge", str(records), "-o", str(tmp_path / "d.jsonl"))
    assert (status, out) == (2, "")
    reason = "is a directory, expected a regular file to replace"
    assert err == f"kernelindex: {tmp_path / 'd.jsonl'}: {reason}\n"


def test_merge_streams_to_dev_null_and_a_fifo(tmp_path: Path, records: Path) -> None:
    status, _, err = run("merge", str(records), "-o", os.devnull)
    assert status == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert run("merge", str(records), "-o", str(fifo))[0] == 0
    reader.join(timeout=60)
    _, merged, _ = run("merge", str(records))
    assert got == [merged.encode()]


def test_schema_export_refuses_a_fifo_in_the_folder(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "bundle.json")
    with pytest.raises(InputError, match=r"bundle\.json: is a FIFO"):
        export_schemas(tmp_path, "RecordBundle")


@pytest.mark.parametrize("kind", ["file", "device"])
def test_schema_out_that_is_not_a_folder_says_so(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "afile" if kind == "file" else Path("/dev/full")
    if kind == "file":
        out.write_text("")
    status, stdout, err = run("schema", "--out", str(out))
    assert (status, stdout) == (2, "")
    what = "a file" if kind == "file" else "a character device"
    assert err.splitlines() == [f"kernelindex: {out}: is {what}, not a directory"]


# --- Importing into a FIFO ---------------------------------------------------------


def test_import_into_a_fifo_with_a_reader_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "ff.jsonl"
    os.mkfifo(fifo)
    got = tmp_path / "got.jsonl"
    with got.open("wb") as sink:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=sink)
        result = subprocess.run(
            command("import", "liger", str(CSV), "-o", str(fifo)),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        reader.wait(timeout=60)
    assert result.returncode == 0, result.stderr
    assert len(got.read_bytes().splitlines()) > 100


# --- Standard streams: full, closed, or read by a reader that goes away --------------


def test_a_full_stderr_does_not_change_the_status(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        ok = subprocess.run(command("validate", str(EXAMPLE)), stderr=full, check=False)
        missing = subprocess.run(
            command("validate", str(tmp_path / "missing.json")), stderr=full, check=False
        )
        usage = subprocess.run(command("merge"), stderr=full, check=False)
    assert (ok.returncode, missing.returncode, usage.returncode) == (0, 2, 2)


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
@pytest.mark.parametrize("flag", ["--version", "--help", "validate --help"])
def test_help_and_version_to_a_closed_or_full_stdout_exit_2(redirect: str, flag: str) -> None:
    script = f'"$0" -m kernelindex_sdk {flag} {redirect}'
    result = subprocess.run(
        ["sh", "-c", script, sys.executable], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("kernelindex: standard output: ")


def _head(argv: list[str]) -> tuple[int, str]:
    """Run ``argv``, read 10 bytes of its output, close the pipe; its status and stderr."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    assert child.stderr is not None
    assert len(child.stdout.read(10)) == 10
    child.stdout.close()
    err = child.stderr.read().decode()
    return child.wait(timeout=120), err


def test_a_reader_going_away_keeps_merge_verdict(records: Path) -> None:
    status, err = _head(command("merge", str(records)))
    assert status == 0, err
    assert "Broken pipe" not in err


def test_a_reader_going_away_keeps_import_verdict(tmp_path: Path) -> None:
    status, err = _head(command("import", "liger", str(CSV)))
    assert status == 0, err
    # A row rejected before the reader went away keeps its exit status 1.
    lines = CSV.read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.csv"
    bad.write_text(lines[0] + BAD_ROW + "".join(lines[1:]))
    status, err = _head(command("import", "liger", str(bad)))
    assert status == 1, err
    assert f"{bad}:2:" in err


# --- Usage errors: one line ----------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["merge"],
        ["compare", "a"],
        ["schema", "Bogus"],
        ["validate", "--format", "xml", "x.json"],
        ["bench", "jsd", "--tokens", "abc"],
        ["bench", "jsd", "--tokens", "1,,2"],
        ["bench", "jsd", "--tokens", "1_024"],
        ["bench", "jsd", "--vocab", "\u0664"],
        ["bench", "jsd", "--vocab", "8,8"],
        ["bench", "jsd", "--impl", "torch,torch"],
        ["bench", "jsd", "--dtype", "fp32,"],
        ["compare", "a", "b", "--threshold", "x"],
    ],
)
def test_usage_errors_are_one_line(argv: list[str]) -> None:
    status, out, err = run(*argv)
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1, err
    assert err.startswith("kernelindex")
    assert err.rstrip().endswith("--help')")


@pytest.mark.parametrize(
    "text", ["", " ", "1,,2", ",1", "1,", "1_024", "\u0664", "\uff11", "-1", "+1", "1.0", "0x10"]
)
def test_ints_take_ascii_digits_only(text: str) -> None:
    with pytest.raises(Exception, match="expected comma-separated integers"):
        ints(text)


def test_ints_and_names_refuse_repeats() -> None:
    assert ints("4, 8,016") == (4, 8, 16)
    assert names("torch, triton") == ("torch", "triton")
    with pytest.raises(Exception, match="given twice"):
        ints("16,016")
    with pytest.raises(Exception, match="given twice"):
        names("torch,triton,torch")


# --- bench: sizes a record can hold; -o checked before the sweep runs ----------------


@pytest.mark.parametrize("out", ["nodir/x.jsonl", "/dev/full", "folder.jsonl"])
def test_bench_checks_its_output_before_the_sweep(tmp_path: Path, out: str) -> None:
    pytest.importorskip("torch")
    (tmp_path / "folder.jsonl").mkdir()
    argv = ["bench", "jsd", "--impl", "torch", "--tokens", "4", "--vocab", "8", "--no-progress"]
    result = subprocess.run(
        command(*argv, "-o", out), cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout) == (2, "")
    # One line: nothing ran (no device line, no progress) and nothing was created.
    assert result.stderr.startswith(f"kernelindex: {out}: ")
    assert len(result.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.jsonl"]


def test_bench_output_check_creates_nothing(tmp_path: Path) -> None:
    writer = documents.JSONLinesWriter(tmp_path / "x.jsonl")
    writer.check()
    assert list(tmp_path.iterdir()) == []


# --- Where problems are: lines of JSON Lines, stdin, file names ----------------------


def test_a_problem_without_a_column_keeps_its_json_lines_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text(
        EXAMPLE.read_text().replace("\n", "") + "\n" + "[" * 100_000 + "]" * 100_000 + "\n"
    )
    status, out, _ = run("validate", str(deep))
    assert status == 1
    [line] = out.splitlines()
    assert line.startswith(f"{deep}:2: (document): ")
    status, out, _ = run("validate", "--format", "json", str(deep))
    [problem] = json.loads(out)
    assert (problem["line"], problem["column"]) == (2, None)
    status, out, _ = run("validate", "--format", "github", str(deep))
    assert "line=2::" in out
    status, _, err = run("merge", str(deep))
    assert status == 1
    assert err.startswith(f"{deep}:2: (document): ")
    status, _, err = run("digest", str(deep))
    assert status == 1
    assert f"{deep}:2: (document): " in err


def test_digest_of_empty_stdin_has_no_stray_space() -> None:
    status, _, err = run("digest", "-", stdin=b"")
    assert status == 1
    assert err.splitlines()[0] == "<stdin>:1:1: (document): empty document [json]"


def test_a_name_clash_is_placed_alike_by_validate_and_merge(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_bytes(EXAMPLE.read_bytes())
    doc = json.loads(EXAMPLE.read_text())
    doc["run"]["spec"]["timing"]["latencyNs"]["median"] += 1
    second.write_text(json.dumps(doc))
    _, out, _ = run("validate", str(first), str(second))
    _, _, err = run("merge", str(first), str(second))
    assert f"at {first} [duplicate-name]" in out
    assert f"at {first} [duplicate-name]" in err


def test_a_file_name_that_is_not_utf8_is_never_a_lone_surrogate(tmp_path: Path) -> None:
    folder = tmp_path / "names"
    folder.mkdir()
    (folder / os.fsdecode(b"bad-\xff.json")).write_text("{}")
    status, out, _ = run("validate", "--format", "json", str(folder))
    assert status == 1
    [problem] = json.loads(out)
    assert problem["source"] == f"{folder}/bad-\\xff.json"
    problem["source"].encode("utf-8")  # no lone surrogate
    for form in ("text", "github"):
        _, out, _ = run("validate", "--format", form, str(folder))
        assert "bad-\\xff.json" in out
    missing = os.fsdecode(b"gone-\xfe.json")
    _, _, err = run("validate", str(tmp_path / missing))
    assert "gone-\\xfe.json: no such file" in err


# --- What a searched folder holds that is not a file -----------------------------------


def test_dangling_symlinks_and_fifos_in_a_folder_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_bytes(EXAMPLE.read_bytes())
    (tmp_path / "gone.json").symlink_to("nowhere.json")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "other.txt").symlink_to("nowhere.txt")  # not a record name: ignored
    status, out, err = run("validate", str(tmp_path))
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        f"kernelindex: {tmp_path / 'gone.json'}: dangling symbolic link",
        f"kernelindex: {tmp_path / 'pipe.jsonl'}: is a FIFO, expected a file",
        "kernelindex: 1 document(s): 1 valid, 0 invalid",
    ]
    with pytest.raises(InputError, match="dangling symbolic link"):
        list(documents.iter_documents([tmp_path]))
    with pytest.raises(InputError, match="dangling symbolic link"):
        merge.merge_paths([tmp_path])


def test_a_reader_going_away_keeps_validate_verdict_in_json_form() -> None:
    child = subprocess.Popen(
        command("validate", "-q", "--format", "json", str(EXAMPLE)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, _ = child.communicate(timeout=60)
    assert (child.returncode, out) == (0, b"[]\n")
    # A reader that reads nothing and goes away does not make a pass a failure.
    script = f'"$0" -m kernelindex_sdk validate -q --format json {EXAMPLE} | true'
    result = subprocess.run(
        ["bash", "-c", script + "; exit ${PIPESTATUS[0]}", sys.executable],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_schema_out_through_a_dangling_symlink_says_so(tmp_path: Path) -> None:
    (tmp_path / "out").symlink_to("nowhere")
    with pytest.raises(InputError, match="dangling symbolic link, not a directory"):
        export_schemas(tmp_path / "out")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    written = export_schemas(tmp_path / "link", "RecordBundle")
    assert "bundle.json" in {p.name for p in written}
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == sorted(p.name for p in written)


def test_help_to_a_departing_reader_exits_0() -> None:
    script = '"$0" -m kernelindex_sdk validate --help | true; exit ${PIPESTATUS[0]}'
    result = subprocess.run(
        ["bash", "-c", script, sys.executable], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")
