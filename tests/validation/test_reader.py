"""The one reader of records in files: every command reads through it, it alone chooses
its fast path, and ``KERNELINDEX_STRICT_READ=1`` turns that path off."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from _cli_runner import run_in_process
from _records import bundle, write_jsonl

from kernelindex_sdk import validation
from kernelindex_sdk.documents import check_documents
from kernelindex_sdk.validation import _fast, _registry
from kernelindex_sdk.validation._fast import admission, bundles, checks, text

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each text the one reader reads, from now on."""
    seen: list[str] = []
    read = validation.RecordReader.read

    def counted(self: validation.RecordReader, data: str | bytes, where: str) -> Any:
        seen.append(where)
        return read(self, data, where)

    monkeypatch.setattr(validation.RecordReader, "read", counted)
    return seen


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{}"],
        ["digest", "{}"],
        ["compare", "{}", "{}"],
        ["report", "{}"],
        ["merge", "{}", "-o", "{out}"],
        ["ingest", "--db", "{db}", "{}"],
    ],
)
def test_every_command_reads_records_through_the_one_reader(
    command: list[str], reads: list[str], tmp_path: Path
) -> None:
    """validate, digest, compare, report, merge and ingest (which the dashboard reads)."""
    lines = SWEEP.read_text("utf-8").splitlines()[:5]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    out, db = tmp_path / "merged.jsonl", tmp_path / "s.sqlite3"
    argv = [a.format(path, out=out, db=db) for a in command]
    status, _, err = run_in_process(*argv)
    assert status == 0, err
    per_path = argv.count(str(path))
    assert reads == [f"{path}:{i}" for _ in range(per_path) for i in range(1, 6)]


def test_quick_is_deprecated_and_ignored(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(SWEEP.read_text("utf-8"), "utf-8")
    plain = [(r.problems, r.value) for r in check_documents([path])]
    for quick in (True, False):
        with pytest.warns(DeprecationWarning, match="quick=.* is deprecated and ignored"):
            found = [(r.problems, r.value) for r in check_documents([path], quick=quick)]
        assert found == plain
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(check_documents([path]))


def test_the_switch_sends_every_record_down_the_plain_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No step of the fast path runs: the bundle reader, orjson's reading, the one-walk
    checks, the admission of known bundles, jsonschema-rs's rewritten patterns."""
    monkeypatch.setenv(_fast.STRICT_READ, "1")

    def must_not_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a fast path ran")

    monkeypatch.setattr(bundles.BundleReader, "read", must_not_run)
    monkeypatch.setattr(text, "quick_value", must_not_run)
    monkeypatch.setattr(_fast, "passes", must_not_run)
    monkeypatch.setattr(checks, "passes", must_not_run)
    monkeypatch.setattr(admission, "known_bundle", must_not_run)
    monkeypatch.setattr(_fast.patterns, "for_speed", must_not_run)
    _registry._rs_schemas.cache_clear()
    try:
        path = tmp_path / "runs.jsonl"
        path.write_text(SWEEP.read_text("utf-8"), "utf-8")
        results = list(check_documents([path], for_store=True))
        assert len(results) == 64
        assert all(r.valid for r in results)
        assert validation.validate(json.loads(SWEEP.read_text("utf-8").splitlines()[0])) == []
    finally:
        _registry._rs_schemas.cache_clear()


@pytest.mark.parametrize("strict", [False, True], ids=["fast", "strict"])
def test_the_store_s_rules_are_applied_for_the_store_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict: bool
) -> None:
    """A latency past the store's 64-bit columns is valid (``validate`` takes it) and
    refused for the store, on the fast path (a line after one with its tail) and the
    plain one alike."""
    if strict:
        monkeypatch.setenv(_fast.STRICT_READ, "1")
    else:
        monkeypatch.delenv(_fast.STRICT_READ, raising=False)
    fine = bundle(params={"tokens": 1, "dtype": "fp32"})
    big = bundle(params={"tokens": 2, "dtype": "fp32"}, p20=90_000, p80=10**19)
    path = write_jsonl(tmp_path / "big.jsonl", [fine, big])
    assert all(r.valid for r in check_documents([path]))
    found = [[str(p.problem) for p in r.problems] for r in check_documents([path], for_store=True)]
    assert found[0] == []
    (problem,) = found[1]
    assert problem.endswith(
        "/run/spec: latency p80 of 10000000000000000000 ns does not fit the store's 64-bit"
        " integer column (at most 9223372036854775807 ns) [store-range]"
    )


def test_merge_s_repeats_are_told_by_the_reader(tmp_path: Path) -> None:
    lines = SWEEP.read_text("utf-8").splitlines()[:3]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join([*lines, lines[1]]) + "\n", "utf-8")
    found = [(r.valid, r.repeat) for r in check_documents([path], repeats=True)]
    assert found == [(True, False)] * 3 + [(True, True)]
    (*_, last) = check_documents([path])
    assert [p.problem.code for p in last.problems] == ["duplicate-name"]


def test_digest_reads_each_document_on_its_own(tmp_path: Path) -> None:
    """The same run in two files is one run twice for validate, and its digests twice
    for digest."""
    line = SWEEP.read_text("utf-8").splitlines()[0] + "\n"
    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path in paths:
        path.write_text(line, "utf-8")
    assert [r.valid for r in check_documents(paths)] == [True, False]
    assert [r.valid for r in check_documents(paths, one_input=False)] == [True, True]


def test_a_reading_shares_its_protocol_with_the_lines_before(tmp_path: Path) -> None:
    """What DocumentResult.value's callers are told: records read by the fast path share
    their protocol and environment objects."""
    path = tmp_path / "runs.jsonl"
    path.write_text(SWEEP.read_text("utf-8"), "utf-8")
    values = [r.value for r in check_documents([path])]
    if _fast.enabled():
        assert values[1]["protocol"] is values[2]["protocol"]
    assert values[1]["protocol"] == values[2]["protocol"]
