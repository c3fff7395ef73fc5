"""Valid records that a store's columns cannot take as they are: refused with one of our
problems, or kept in a form the store can hold, never a bare OverflowError or
UnicodeEncodeError (found by a review of 0.5.1's change)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cli_runner import RunCli
from _records import bundle, write_jsonl
from _sql import query

from kernelindex_sdk.store import Store


@pytest.mark.parametrize("p80", [10**19, 1e19, 2**63])
def test_a_latency_past_64_bits_refuses_its_file_with_a_store_range_problem(
    store: Store, tmp_path: Path, p80: float
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [bundle()])
    path = write_jsonl(tmp_path / "big.jsonl", [bundle(p20=90_000, p80=p80)])
    report = store.ingest([good, path])
    assert report.added == 1
    assert report.refused == 1
    [problem] = report.problems
    assert problem.problem.code == "store-range"
    assert problem.problem.pointer == "/run/spec"
    assert problem.problem.message == (
        f"latency p80 of {round(p80)} ns does not fit the store's 64-bit integer column"
        " (at most 9223372036854775807 ns)"
    )
    assert len(store.rows()) == 1


def test_the_largest_latency_that_fits_is_stored(store: Store, tmp_path: Path) -> None:
    # 2**63 - 1 is not a double: 9223372036854774784 (the largest double below 2**63) is.
    top = 9223372036854774784
    path = write_jsonl(tmp_path / "top.jsonl", [bundle(p20=90_000, p80=float(top))])
    report = store.ingest([path])
    assert report.added == 1, report.problems
    [row] = store.rows()
    assert row.p80_ns == top


def test_ingest_of_a_latency_past_64_bits_is_one_line_and_exit_1(
    run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "big.jsonl", [bundle(p20=90_000, p80=10**19)])
    code, out, err = run_cli("ingest", "--db", str(tmp_path / "s.db"), str(path))
    assert code == 1
    assert "Traceback" not in err
    lines = [line for line in (out + err).splitlines() if "store-range" in line]
    assert len(lines) == 1
    assert "does not fit the store's 64-bit integer column" in lines[0]


def test_a_file_name_that_is_not_utf8_is_stored_as_shown(store: Store, tmp_path: Path) -> None:
    path = Path(os.fsdecode(os.fsencode(tmp_path) + b"/runs-\xff.jsonl"))
    write_jsonl(path, [bundle()])
    report = store.ingest([path])
    assert report.added == 1
    assert not report.problems
    [(source,)] = query(store, "SELECT source FROM runs")
    assert source.endswith("/runs-\\xff.jsonl:1")
