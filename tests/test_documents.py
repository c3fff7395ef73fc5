"""Records in files: finding, reading once, size limits, and the writers' rules."""

from __future__ import annotations

import io
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import documents
from kernelindex_sdk._base.display import display_path
from kernelindex_sdk.documents import (
    JSONLinesWriter,
    check_documents,
    iter_documents,
    validate_paths,
    write_json,
)
from kernelindex_sdk.errors import InputError, SchemaValidationError


def _one_line(doc: dict[str, Any]) -> str:
    return json.dumps(doc) + "\n"


def test_same_file_reached_four_ways_is_read_once(tmp_path: Path, example_text: str) -> None:
    """A path twice, a folder and a file in it, and a symlink into it: one document."""
    folder = tmp_path / "records"
    folder.mkdir()
    record = folder / "run.json"
    record.write_text(example_text, "utf-8")
    (tmp_path / "link.json").symlink_to(record)
    paths = [folder, record, record, tmp_path / "link.json", folder / ".." / "records"]
    found = list(iter_documents(paths))
    assert [d.source for d in found] == [str(record)]
    assert list(validate_paths(paths)) == []


def test_upper_case_suffixes_are_found_and_read_by_suffix(
    tmp_path: Path, example: dict[str, Any], example_text: str
) -> None:
    (tmp_path / "A.JSON").write_text(example_text, "utf-8")
    other = json.loads(example_text)
    other["run"]["metadata"]["name"] = "another"
    (tmp_path / "b.JsonL").write_text(_one_line(other) + _one_line(example), "utf-8")
    found = list(iter_documents([tmp_path]))
    assert [(Path(d.source).name, d.line, d.json_lines) for d in found] == [
        ("A.JSON", 1, False),
        ("b.JsonL", 1, True),
        ("b.JsonL", 2, True),
    ]
    [problem] = validate_paths([tmp_path])
    assert problem.problem.code == "duplicate-name"


def test_unreadable_subfolder_is_an_input_error_and_the_rest_is_read(
    tmp_path: Path, example_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """os.walk's errors are reported (root can read a mode-000 folder, so fake one)."""
    (tmp_path / "run.json").write_text(example_text, "utf-8")
    real_walk = os.walk

    def walk(top: Any, onerror: Any = None, followlinks: bool = False) -> Any:
        onerror(PermissionError(13, "Permission denied", str(tmp_path / "locked")))
        yield from real_walk(top, onerror=onerror, followlinks=followlinks)

    monkeypatch.setattr(documents.os, "walk", walk)
    with pytest.raises(InputError, match="locked: Permission denied"):
        list(iter_documents([tmp_path]))
    errors: list[InputError] = []
    found = list(iter_documents([tmp_path], on_error=errors.append))
    assert [e.source for e in errors] == [str(tmp_path / "locked")]
    assert [Path(d.source).name for d in found] == ["run.json"]


def test_folder_without_records_is_a_notice_not_a_warning(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a record")
    notices: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(iter_documents([tmp_path], on_notice=notices.append)) == []
        # Without a listener nothing is said, and nothing is raised.
        assert list(iter_documents([tmp_path])) == []
    assert notices == [f"{tmp_path}: no .json or .jsonl files found"]


def test_symlinked_folders_are_not_entered(tmp_path: Path, example_text: str) -> None:
    """A symlink loop ends; the files it leads to are found once, where they are."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "run.json").write_text(example_text, "utf-8")
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert [d.source for d in iter_documents([tmp_path])] == [str(tmp_path / "a" / "run.json")]


@pytest.mark.parametrize("blank", [b"\f", b"\v", b" \f ", b"\x1c"])
def test_json_lines_line_of_non_json_whitespace_is_an_error(
    tmp_path: Path, example: dict[str, Any], blank: bytes
) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(_one_line(example).encode() + b"\r\n \t\r\n" + blank + b"\n")
    [found] = validate_paths([path])
    assert (found.problem.line, found.problem.code) == (4, "json")


def test_stdin_named_twice_is_read_once(example_text: str) -> None:
    stdin = io.BytesIO(example_text.encode())
    results = list(check_documents(["-", "-"], stdin=stdin))
    assert [(r.document.source, r.valid) for r in results] == [("<stdin>", True)]


def test_stdin_is_json_lines_when_its_first_line_is_a_document(
    example: dict[str, Any],
) -> None:
    other = json.loads(json.dumps(example))
    other["run"]["metadata"]["name"] = "another"
    stdin = io.BytesIO(b"\n" + (_one_line(example) + "\n" + _one_line(other)).encode())
    found = list(iter_documents(["-"], stdin=stdin))
    assert [(d.line, d.json_lines, d.label) for d in found] == [
        (2, True, "<stdin>:2"),
        (4, True, "<stdin>:4"),
    ]


def test_stdin_with_a_deep_first_line_is_one_document() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    [result] = check_documents(["-"], stdin=io.BytesIO(deep + b"\n{}\n"))
    [problem] = result.problems
    assert problem.problem.code == "json"


def test_documents_past_the_size_limit_stop_with_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_text: str
) -> None:
    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_text(" " * 1001)
    endless = tmp_path / "endless.jsonl"
    endless.write_text("x" * 5000)
    errors: list[InputError] = []
    found = list(
        iter_documents(
            [big, endless, "-"], stdin=io.BytesIO(b"[" + b" " * 2000), on_error=errors.append
        )
    )
    assert found == []
    assert [e.source for e in errors] == [str(big), f"{endless}:1", "<stdin>:1"]
    assert all("larger than the limit of 1000 bytes" in e.reason for e in errors)


def test_dev_zero_stops_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unbounded device (no size to check first) is read only up to the limit."""
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 2**20)
    with pytest.raises(InputError, match="larger than the limit"):
        list(iter_documents(["/dev/zero"]))


def test_missing_and_unreadable_paths_do_not_stop_the_others(
    tmp_path: Path, example_text: str
) -> None:
    good = tmp_path / "good.json"
    good.write_text(example_text, "utf-8")
    errors: list[InputError] = []
    found = list(
        iter_documents(
            [tmp_path / "missing.json", "x" * 5000 + ".json", good], on_error=errors.append
        )
    )
    assert [d.source for d in found] == [str(good)]
    assert len(errors) == 2
    assert errors[0].reason == "no such file or directory"


def test_printed_problems_are_one_line_starting_with_their_file(
    tmp_path: Path, example: dict[str, Any]
) -> None:
    example["run"]["metadata"]["labels"]["k\n/forged: x [pattern]\r\x1b"] = "v"
    example["run"]["spec"]["timing"]["latencyNs"]["y" * 1_000_000] = 1
    path = tmp_path / "evil\nname.json"
    path.write_text(json.dumps(example), "utf-8")
    lines = [str(p) for p in validate_paths([path])]
    assert len(lines) == 2
    for line in lines:
        assert "\n" not in line
        assert "\r" not in line
        assert "\x1b" not in line
        assert line.startswith("evil\\nname.json") or line.startswith(str(tmp_path))
        assert len(line) < 1000


def test_json_form_of_a_problem_cuts_long_keys(example: dict[str, Any]) -> None:
    example["run"]["spec"]["timing"]["latencyNs"]["k" * 100_000] = 1
    [result] = check_documents(["-"], stdin=io.BytesIO(json.dumps(example).encode()))
    [problem] = result.problems
    as_dict = problem.as_dict()
    assert len(as_dict["pointer"]) < 200
    assert as_dict["pointer"].startswith("/run/spec/timing/latencyNs/kkk")
    assert len(as_dict["message"]) <= documents.MAX_MESSAGE


# The writers.


def test_writer_creates_nothing_before_the_first_record(
    tmp_path: Path, example: dict[str, Any]
) -> None:
    out = tmp_path / "out.jsonl"
    with JSONLinesWriter(out):
        pass
    assert not out.exists()
    with JSONLinesWriter(out) as writer:
        writer.open()
    assert out.read_bytes() == b""
    with JSONLinesWriter(out) as writer:
        writer.write(example)
    assert json.loads(out.read_text("utf-8")) == example


def test_writer_ends_a_last_line_that_lacks_its_newline(
    tmp_path: Path, example: dict[str, Any]
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps(example))
    with JSONLinesWriter(out) as writer:
        writer.write(example)
    lines = out.read_text("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [example, example]


@pytest.mark.parametrize("bad", [math.nan, math.inf, "\ud800"])
def test_writers_refuse_what_is_not_json(
    tmp_path: Path, example: dict[str, Any], bad: object
) -> None:
    example["run"]["spec"]["sourceNative"]["metrics"]["ms_50"] = bad
    out = tmp_path / "out.jsonl"
    with pytest.raises(SchemaValidationError), JSONLinesWriter(out) as writer:
        writer.write(example)
    assert not out.exists()
    with pytest.raises(SchemaValidationError):
        write_json(tmp_path / "out.json", example)
    assert list(tmp_path.iterdir()) == []


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file descriptors documents syncs from now on (each sync still made)."""
    synced: list[int] = []
    fsync = os.fsync

    def counted(fd: int) -> None:
        synced.append(fd)
        fsync(fd)

    monkeypatch.setattr(documents.os, "fsync", counted)
    return synced


def test_writer_to_a_device_does_not_fsync(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """/dev/null refuses fsync and has nothing to keep: it is not synced, as a regular
    file is."""
    synced = _fsyncs(monkeypatch)
    with JSONLinesWriter("/dev/null") as writer:
        writer.write(example)
    assert synced == []
    with JSONLinesWriter(tmp_path / "runs.jsonl") as writer:
        writer.write(example)
    assert len(synced) == 1


def test_writer_to_a_pipe_does_not_fsync(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _fsyncs(monkeypatch)
    read, write = os.pipe()
    try:
        with JSONLinesWriter(f"/dev/fd/{write}") as writer:
            writer.write(example)
        assert json.loads(os.read(read, 2**16)) == example
    finally:
        os.close(read)
        os.close(write)
    assert synced == []


def test_writer_to_a_full_disk_is_an_input_error(example: dict[str, Any]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    writer = JSONLinesWriter("/dev/full")
    with pytest.raises(InputError, match="/dev/full: No space left on device"):
        writer.write(example)
    writer.close()


def test_write_json_removes_its_temporary_file_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example: dict[str, Any]
) -> None:
    target = tmp_path / "out.json"
    target.write_text("earlier")

    def fail(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(documents.os, "fsync", fail)
    with pytest.raises(InputError, match="No space left on device"):
        write_json(target, example)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    assert target.read_text() == "earlier"


@pytest.mark.parametrize(
    "name", ["runs.jsonl", "r\u00e9sum\u00e9.jsonl", os.fsdecode(b"bad\xff.jsonl")]
)
def test_a_repeated_run_names_the_first_place_as_the_full_check_does(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The place the reader gives a line (the file's shown name, made once, and the
    line) is the one the plain path gives (``KERNELINDEX_STRICT_READ=1``)."""
    line = (
        (Path(__file__).parent / "fixtures" / "h200-jsd-sweep.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()[0]
    )
    path = tmp_path / name
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    monkeypatch.delenv("KERNELINDEX_STRICT_READ", raising=False)
    fast = [p.problem.message for r in check_documents([path]) for p in r.problems]
    monkeypatch.setenv("KERNELINDEX_STRICT_READ", "1")
    full = [p.problem.message for r in check_documents([path]) for p in r.problems]
    assert fast == full
    assert len(fast) == 1
    assert fast[0].endswith(f"already names a run at {display_path(f'{path}:1')}")
