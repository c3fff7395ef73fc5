"""Merging record sets: duplicates once, clashes refused with both places, stable bytes."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import load_record
from kernelindex_sdk._cli import main
from kernelindex_sdk.convert import dumps
from kernelindex_sdk.errors import InputError, RecordSetError
from kernelindex_sdk.merge import merge_paths, merge_records, write_records
from kernelindex_sdk.sharding import partition

ROOT = Path(__file__).resolve().parent.parent
# A real sweep: 64 records of `kernelindex bench jsd` on an H200, digests recomputable.
SWEEP = ROOT / "tests" / "fixtures" / "h200-jsd-sweep.jsonl"
EXAMPLE = Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json"


def sweep_lines() -> list[str]:
    return [line for line in SWEEP.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(b""))
    return status, out.getvalue(), err.getvalue()


def merged_text(*paths: Path, **kwargs: Any) -> str:
    out = io.StringIO()
    write_records("-", merge_paths(paths, **kwargs).records, stream=out)
    return out.getvalue()


def test_merge_of_the_shards_equals_the_plain_sweep(tmp_path: Path) -> None:
    lines = sweep_lines()
    by_line = {line: json.loads(line)["run"]["spec"]["workload"]["bytesMoved"] for line in lines}
    shards = partition(lines, 3, cost=by_line.__getitem__)
    files = [write_lines(tmp_path / f"runs-{i}.jsonl", s) for i, s in enumerate(shards)]
    merged = merge_paths(files, verify_digests=True)
    plain = merge_paths([SWEEP], verify_digests=True)
    assert merged.records == plain.records
    assert len(plain.records) == len(lines) == 64
    assert sorted(dumps(r, indent=None) for r in merged.records) == sorted(
        dumps(json.loads(line), indent=None) for line in lines
    )


def test_same_inputs_in_any_order_give_the_same_bytes(tmp_path: Path) -> None:
    lines = sweep_lines()
    a = write_lines(tmp_path / "a.jsonl", lines[:40])
    b = write_lines(tmp_path / "b.jsonl", list(reversed(lines[20:])))
    first = merged_text(a, b)
    assert first == merged_text(b, a)
    assert first == merged_text(SWEEP)
    names = [json.loads(line)["run"]["metadata"]["name"] for line in first.splitlines()]
    assert names == sorted(names)


def test_identical_records_appear_once_whatever_their_formatting(tmp_path: Path) -> None:
    line = sweep_lines()[0]
    again = write_lines(tmp_path / "again.jsonl", [line, line])
    # The same record as an indented JSON file, keys in another order.
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(line), indent=4, sort_keys=True), encoding="utf-8")
    merged = merge_paths([SWEEP, again, pretty])
    assert len(merged.records) == 64
    assert (merged.read, merged.duplicates) == (67, 3)


def test_two_records_under_one_name_are_refused_naming_both_places(tmp_path: Path) -> None:
    lines = sweep_lines()
    doc = json.loads(lines[5])
    doc["run"]["spec"]["timing"]["latencyNs"]["median"] += 1000
    for m in doc["run"]["spec"]["measurements"]:
        if m["statistic"] == "p80":
            m["value"] += 1000
    other = write_lines(tmp_path / "other.jsonl", [lines[0], json.dumps(doc)])
    with pytest.raises(RecordSetError) as caught:
        merge_paths([SWEEP, other])
    [problem] = caught.value.problems
    name = doc["run"]["metadata"]["name"]
    assert problem.source == str(other)
    assert (problem.problem.line, problem.problem.pointer) == (2, "/run/metadata/name")
    assert problem.problem.code == "duplicate-name"
    assert f"name {name!r} already names a run at {SWEEP}:6" in str(problem)


def _renamed(line: str, suffix: str) -> dict[str, Any]:
    doc = json.loads(line)
    doc["run"]["metadata"]["name"] += suffix
    return doc


def test_a_protocol_name_with_two_specs_is_refused(tmp_path: Path) -> None:
    doc = _renamed(sweep_lines()[0], "-b")
    doc["protocol"]["spec"]["measurement"]["notes"] += " (changed)"
    bad = write_lines(tmp_path / "bad.jsonl", [json.dumps(doc)])
    with pytest.raises(RecordSetError) as caught:
        merge_paths([SWEEP, bad])
    messages = [str(p) for p in caught.value.problems]
    protocol_name = doc["protocol"]["metadata"]["name"]
    assert any(
        m.startswith(f"{bad}:1:")
        and "/protocol/metadata/name: name" in m
        and f"{protocol_name!r} already names a different BenchmarkProtocol at {SWEEP}:1" in m
        for m in messages
    )


def test_equal_protocol_digests_must_carry_equal_specs(tmp_path: Path) -> None:
    """Without --verify-digests a record may claim another spec's digest: merge catches it."""
    doc = _renamed(sweep_lines()[0], "-b")
    doc["protocol"]["metadata"]["name"] += "-b"
    doc["protocol"]["spec"]["measurement"]["warmupMs"] = 50.0
    bad = write_lines(tmp_path / "bad.jsonl", [json.dumps(doc)])
    with pytest.raises(RecordSetError) as caught:
        merge_paths([SWEEP, bad])
    [problem] = caught.value.problems
    assert (problem.problem.pointer, problem.problem.code) == ("/protocol/spec", "digest-clash")
    digest = doc["run"]["spec"]["protocolDigest"]
    assert f"digest {digest!r} already stands for a different BenchmarkProtocol at" in str(problem)
    # With --verify-digests the same record is already invalid on its own.
    with pytest.raises(RecordSetError) as verified:
        merge_paths([bad], verify_digests=True)
    assert {p.problem.code for p in verified.value.problems} == {"digest"}


def test_equal_environment_digests_must_carry_equal_specs(tmp_path: Path) -> None:
    doc = _renamed(sweep_lines()[0], "-b")
    doc["environment"]["metadata"]["name"] += "-b"
    doc["environment"]["spec"]["hardware"]["product"] = "NVIDIA H100"
    bad = write_lines(tmp_path / "bad.jsonl", [json.dumps(doc)])
    with pytest.raises(RecordSetError) as caught:
        merge_paths([SWEEP, bad])
    assert [p.problem.code for p in caught.value.problems] == ["digest-clash"]
    assert caught.value.problems[0].problem.pointer == "/environment/spec"


def test_invalid_documents_are_reported_with_file_and_line(tmp_path: Path) -> None:
    lines = sweep_lines()
    doc = _renamed(lines[0], "-b")
    doc["run"]["spec"]["timing"]["latencyNs"]["median"] = -5
    bad = write_lines(tmp_path / "bad.jsonl", [lines[1], json.dumps(doc), "{"])
    with pytest.raises(RecordSetError) as caught:
        merge_paths([bad])
    lines_found = [(p.problem.line, p.problem.pointer) for p in caught.value.problems]
    assert (2, "/run/spec/timing/latencyNs/median") in lines_found
    assert any(line == 3 for line, _ in lines_found)
    assert all(p.source == str(bad) for p in caught.value.problems)


def test_models_merge_like_their_files() -> None:
    lines = sweep_lines()
    models = [load_record(line) for line in lines + lines[:3]]
    merged = merge_records(reversed(models))
    assert merged.records == merge_paths([SWEEP]).records
    assert merged.duplicates == 3


def test_models_that_clash_are_named_by_position() -> None:
    lines = sweep_lines()
    doc = json.loads(lines[0])
    changed = copy.deepcopy(doc)
    changed["run"]["metadata"]["title"] = "another title"
    with pytest.raises(RecordSetError, match=r"records\[1\].*already names a run at records\[0\]"):
        merge_records([load_record(doc), changed])


def test_standalone_protocols_merge_by_name(tmp_path: Path) -> None:
    protocol = json.loads(EXAMPLE.read_text(encoding="utf-8"))["protocol"]
    first = write_lines(tmp_path / "p.jsonl", [json.dumps(protocol), json.dumps(protocol)])
    merged = merge_paths([first, EXAMPLE])
    assert [r.get("kind", "bundle") for r in merged.records] == ["BenchmarkProtocol", "bundle"]
    changed = copy.deepcopy(protocol)
    changed["metadata"]["title"] = "renamed harness"
    clash = write_lines(tmp_path / "q.jsonl", [json.dumps(changed)])
    with pytest.raises(RecordSetError, match="already names a different BenchmarkProtocol"):
        merge_paths([first, clash])


def test_cli_writes_the_merge_and_replaces_the_output(tmp_path: Path) -> None:
    lines = sweep_lines()
    (tmp_path / "in" / "sub").mkdir(parents=True)
    write_lines(tmp_path / "in" / "a.jsonl", lines[:30])
    write_lines(tmp_path / "in" / "sub" / "b.jsonl", lines[20:])
    out = tmp_path / "merged.jsonl"
    out.write_text("old content that must go\n", encoding="utf-8")
    status, stdout, stderr = run("merge", str(tmp_path / "in"), "-o", str(out))
    assert (status, stdout) == (0, "")
    assert stderr == (
        f"kernelindex: merged 64 records from 74 documents (10 duplicates dropped) into {out}\n"
    )
    assert out.read_text(encoding="utf-8") == merged_text(SWEEP)
    assert run("validate", "-q", "--verify-digests", str(out)) == (0, "", "")
    # No temporary file is left beside the output.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "merged.jsonl"]


def test_cli_writes_standard_output_by_default() -> None:
    status, stdout, _ = run("merge", str(SWEEP))
    assert status == 0
    assert stdout == merged_text(SWEEP)


def test_cli_clash_exits_one_and_writes_nothing(tmp_path: Path) -> None:
    doc = json.loads(sweep_lines()[0])
    doc["run"]["metadata"]["labels"]["extra"] = "x"
    clash = write_lines(tmp_path / "clash.jsonl", [json.dumps(doc)])
    out = tmp_path / "merged.jsonl"
    status, stdout, stderr = run("merge", str(SWEEP), str(clash), "-o", str(out))
    assert (status, stdout) == (1, "")
    assert stderr.count("\n") == 1
    assert stderr.startswith(f"{clash}:1:")
    assert f"already names a run at {SWEEP}:1 [duplicate-name]" in stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["merge", "missing.jsonl"], "missing.jsonl: no such file or directory"),
        (["merge", str(SWEEP), "-o", "merged.json"], "expected a .jsonl path"),
        (["merge", str(SWEEP), "-o", "no/such/dir/merged.jsonl"], "no/such/dir/merged.jsonl"),
        (["merge"], "the following arguments are required"),
    ],
)
def test_cli_usage_and_io_errors_exit_two(argv: list[str], fragment: str) -> None:
    status, _, stderr = run(*argv)
    assert status == 2
    assert fragment in stderr
    assert "Traceback" not in stderr


def test_write_records_refuses_a_non_jsonl_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"expected a \.jsonl path"):
        write_records(tmp_path / "x.json", [])
