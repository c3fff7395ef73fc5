"""Messages people read: values cut to a line, and sentences that parse."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk import validation
from kernelindex_sdk._base.display import MAX_VALUE, short_repr
from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import Problem

VECTORS = Path(__file__).parents[1] / "vectors"
RUN = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun"}


@pytest.mark.parametrize(
    "value",
    [
        [{"k" * 80: "v" * 80, "a": [1, 2], "b": {"c": 1}}] * 50,
        {f"key{i}": "x" * 500 for i in range(100)},
        "s" * 10_000,
        [[[[[1]]]]],
        list(range(10**4)),
        10**300,
    ],
    ids=["list-of-dicts", "wide-dict", "long-string", "deep", "long-list", "huge-int"],
)
def test_short_repr_is_one_short_line(value: Any) -> None:
    text = short_repr(value)
    assert len(text) <= MAX_VALUE
    assert "\n" not in text


def test_short_repr_says_how_many_items_a_cut_container_has() -> None:
    assert short_repr(list(range(31))) == "[0, 1, 2, 3, ...] (31 items)"
    assert short_repr([{"a": [1]}] * 6) == "[{...}, {...}, {...}, {...}, ...] (6 items)"
    assert short_repr({"a": 1}) == "{'a': 1}"
    assert short_repr([1, 2]) == "[1, 2]"
    assert short_repr(None) == "null"


def test_validate_prints_one_short_line_per_file_of_vectors() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(VECTORS)], stdout=out, stderr=err) == 1
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    for line in lines:
        assert len(line) < 200, line
        assert "expected a JSON object, got [{...}" in line


@pytest.mark.parametrize(
    ("doc", "pointer", "message"),
    [
        (
            {"kind": "BenchmarkRun", "metadata": {}},
            "",
            "'apiVersion' is a required property; supported: 'kernelindex.dev/v1alpha1'",
        ),
        (
            {**RUN, "apiVersion": None},
            "/apiVersion",
            "unsupported apiVersion null; supported: 'kernelindex.dev/v1alpha1'",
        ),
        (
            {**RUN, "apiVersion": "v2"},
            "/apiVersion",
            "unsupported apiVersion 'v2'; supported: 'kernelindex.dev/v1alpha1'",
        ),
        (
            {"apiVersion": "kernelindex.dev/v1alpha1"},
            "",
            "'kind' is a required property; supported: BenchmarkProtocol, BenchmarkRun,"
            " ExecutionEnvironment, or a bundle {run, ...}",
        ),
        (
            {**RUN, "kind": None},
            "/kind",
            "unsupported kind null; supported: BenchmarkProtocol, BenchmarkRun,"
            " ExecutionEnvironment, or a bundle {run, ...}",
        ),
    ],
    ids=["no-api-version", "null-api-version", "other-api-version", "no-kind", "null-kind"],
)
def test_kind_and_api_version_messages_read_as_sentences(
    doc: dict[str, Any], pointer: str, message: str
) -> None:
    problem = validation.detect_kind(doc)
    assert isinstance(problem, Problem)
    assert (problem.pointer, problem.message) == (pointer, message)
    assert "unsupported no " not in problem.message
