"""The command line and the file writers under hostile conditions.

Symlinks, devices, FIFOs and folders where a file is expected; standard streams that
are closed, full or whose reader goes away; loose list options; file names that are
not UTF-8. Each gives one clear line and the documented exit status.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kernelindex_sdk import documents, merge
from kernelindex_sdk._base.files import replace_file
from kernelindex_sdk._base.schemas import export_schemas
from kernelindex_sdk._cli import main
from kernelindex_sdk._cli._common import ints, names
from kernelindex_sdk.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLE = FIXTURES / "liger-jsd-forward-torch-b200.json"
CSV = FIXTURES / "liger" / "all_benchmark_data.subset.csv"
BAD_ROW = (
    "cross_entropy,liger,forward,speed,ms,V,vocab size,4096,abc,0.5,0.6,"
    '"{""B"": 8, ""T"": 2048}",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n'
)


def run(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


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
