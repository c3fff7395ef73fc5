"""Errors that reach a library caller are KernelIndexErrors, and still the builtin they were.

The CLI catches KernelIndexError; a library caller that caught ValueError or RuntimeError
before still does. The kernel entry points (torch) are in reference_kernels/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import compare, errors, report
from kernelindex_sdk.errors import ArgumentError, KernelIndexError, StateError
from kernelindex_sdk.importers._csvfile import CsvFile
from kernelindex_sdk.sharding import Launch, Shard, partition


def _unused_csv_records() -> Any:
    # A generator: the check runs at the first next().
    return next(CsvFile(str(Path(__file__)), ["a"]).records())


CASES: list[tuple[str, Callable[[], Any], type[KernelIndexError], type[Exception], str]] = [
    (
        "partition-count",
        lambda: partition(["x"], 0, cost=lambda _: 1.0),
        ArgumentError,
        ValueError,
        "count: expected at least one shard, got 0",
    ),
    (
        "partition-cost",
        lambda: partition(["x"], 2, cost=lambda _: -1.0),
        ArgumentError,
        ValueError,
        "cost: expected a finite cost >= 0, got -1.0 for 'x'",
    ),
    (
        "launch-select-cost",
        lambda: Launch(shard=Shard(0, 1, "test")).select(["x"], cost=lambda _: float("nan")),
        ArgumentError,
        ValueError,
        "cost: expected a finite cost >= 0, got nan for 'x'",
    ),
    (
        "report-render-format",
        lambda: report.render([], "html"),
        ArgumentError,
        ValueError,
        "format: expected one of text, markdown, got 'html'",
    ),
    (
        "compare-render-format",
        lambda: compare.render(compare.compare([], []), "html"),
        ArgumentError,
        ValueError,
        "format: expected one of text, markdown, json, csv, got 'html'",
    ),
    (
        "compare-threshold",
        lambda: compare.compare([], [], threshold=-0.1),
        ArgumentError,
        ValueError,
        "threshold: expected a finite number >= 0, got -0.1",
    ),
    (
        "compare-threshold-nan",
        lambda: compare.compare([], [], threshold=float("nan")),
        ArgumentError,
        ValueError,
        "threshold: expected a finite number >= 0, got nan",
    ),
    (
        "pair-without-runs",
        lambda: compare.Pair(None, None).run,
        ArgumentError,
        ValueError,
        "base: a pair without runs (base and new are None)",
    ),
    (
        "csv-records-outside-with",
        _unused_csv_records,
        StateError,
        RuntimeError,
        "CsvFile.records(): called outside its with block",
    ),
]


@pytest.mark.parametrize(
    ("call", "kind", "builtin", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_errors_reaching_callers_are_kernel_index_errors_and_their_old_builtin(
    call: Callable[[], Any], kind: type[KernelIndexError], builtin: type[Exception], message: str
) -> None:
    with pytest.raises(KernelIndexError) as caught:
        call()
    assert type(caught.value) is kind
    assert isinstance(caught.value, builtin)
    assert str(caught.value) == message


def test_state_error_is_exported_and_carries_its_facts() -> None:
    assert "StateError" in errors.__all__
    err = StateError(call="f()", reason="not now\n")
    assert (err.call, err.reason) == ("f()", "not now\n")
    assert str(err) == "f(): not now\\n"  # one printable line
    assert isinstance(err, KernelIndexError)
    assert isinstance(err, RuntimeError)
