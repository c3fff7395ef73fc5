"""One verdict everywhere: what validate refuses across records, compare, report and merge
refuse in the same words (one shared check, kernelindex_sdk.validation._input_rules)."""

from __future__ import annotations

import copy
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _records import bundle, write_jsonl
from hypothesis import given
from hypothesis import strategies as st

from kernelindex_sdk import digest
from kernelindex_sdk._cli import main
from kernelindex_sdk.compare import compare, load_runs
from kernelindex_sdk.documents import validate_paths
from kernelindex_sdk.errors import RecordSetError, SchemaValidationError
from kernelindex_sdk.merge import merge_paths, merge_records
from kernelindex_sdk.report import families
from kernelindex_sdk.validation import InputRules
from kernelindex_sdk.validation._input_rules import same_json


def _same_name(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(median=200_000)
    second["run"]["metadata"]["name"] = first["run"]["metadata"]["name"]
    return second


def _protocol_name(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(timer="wall_clock")
    second["protocol"]["metadata"]["name"] = first["protocol"]["metadata"]["name"]
    return second


def _protocol_digest(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(timer="wall_clock")
    second["run"]["spec"]["protocolDigest"] = first["run"]["spec"]["protocolDigest"]
    return second


def _environment_name(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(product="NVIDIA B200")
    second["environment"]["metadata"]["name"] = first["environment"]["metadata"]["name"]
    return second


def _environment_digest(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(product="NVIDIA B200")
    second["run"]["spec"]["environmentDigest"] = first["run"]["spec"]["environmentDigest"]
    return second


def _workload_digest(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(params={"tokens": 2048, "dtype": "fp32"})
    second["run"]["spec"]["workloadDigest"] = first["run"]["spec"]["workloadDigest"]
    return second


def _implementation_digest(first: dict[str, Any]) -> dict[str, Any]:
    second = bundle(provider="liger")
    spec = second["run"]["spec"]
    spec["implementationDigest"] = first["run"]["spec"]["implementationDigest"]
    return second


CASES: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], str, str]] = {
    "run-name": (_same_name, "/run/metadata/name", "already names a run at"),
    "protocol-name": (
        _protocol_name,
        "/protocol/metadata/name",
        "already names a different BenchmarkProtocol at",
    ),
    "protocol-digest": (
        _protocol_digest,
        "/protocol/spec",
        "already stands for a different BenchmarkProtocol at",
    ),
    "environment-name": (
        _environment_name,
        "/environment/metadata/name",
        "already names a different ExecutionEnvironment at",
    ),
    "environment-digest": (
        _environment_digest,
        "/environment/spec",
        "already stands for a different ExecutionEnvironment at",
    ),
    "workload-digest": (
        _workload_digest,
        "/run/spec/workload",
        "already stands for a different workload at",
    ),
    "implementation-digest": (
        _implementation_digest,
        "/run/spec/implementation",
        "already stands for a different implementation at",
    ),
}


def _layouts(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, Path]:
    """The records in one file, and one file each in one folder."""
    folder = tmp_path / "folder"
    folder.mkdir()
    for i, doc in enumerate(docs):
        write_jsonl(folder / f"{i}.jsonl", [doc])
    return {"file": write_jsonl(tmp_path / "one.jsonl", docs), "folder": folder}


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_compare_report_and_merge_refuse_in_the_same_words(
    tmp_path: Path, case: str
) -> None:
    make, pointer, words = CASES[case]
    first = bundle()
    docs = [first, make(first)]
    for layout, path in _layouts(tmp_path, docs).items():
        validated = [str(p) for p in validate_paths([path])]
        assert len(validated) == 1, (layout, validated)
        assert words in validated[0]
        assert f": {pointer}: " in validated[0]
        runs = load_runs([path])
        assert [str(p) for p in runs.problems] == validated, layout
        assert runs.invalid == 1
        # The record left out is the second: the first still pairs and reports.
        assert [r.name for r in runs.runs] == [first["run"]["metadata"]["name"]]
        with pytest.raises(RecordSetError) as merged:
            merge_paths([path])
        assert [str(p) for p in merged.value.problems] == validated, layout


@pytest.mark.parametrize("case", sorted(CASES))
def test_records_given_as_values_are_refused_too(case: str) -> None:
    make, _, words = CASES[case]
    first = bundle()
    docs = [first, make(first)]
    for call in (
        lambda: compare(docs, [first]),
        lambda: compare([first], docs),
        lambda: families(docs),
    ):
        with pytest.raises(SchemaValidationError, match=words) as caught:
            call()
        assert caught.value.source == "record 1"
    with pytest.raises(RecordSetError, match=words):
        merge_records(docs)


def test_the_cli_reports_the_clash_and_exits_1(tmp_path: Path) -> None:
    first = bundle()
    path = write_jsonl(tmp_path / "r.jsonl", [first, _protocol_digest(first)])
    for argv in (["validate", str(path)], ["compare", str(path), str(path)], ["report", str(path)]):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, stdout=out, stderr=err) == 1, argv
        # validate prints its problems on stdout, compare and report theirs on stderr.
        said = out.getvalue() + err.getvalue()
        assert "already stands for a different BenchmarkProtocol" in said, argv


def test_a_repeated_run_is_refused_by_validate_and_compare_and_dropped_by_merge(
    tmp_path: Path,
) -> None:
    first = bundle()
    path = write_jsonl(tmp_path / "r.jsonl", [first, copy.deepcopy(first)])
    [problem] = list(validate_paths([path]))
    assert "already names a run at" in str(problem)
    assert [str(p) for p in load_runs([path]).problems] == [str(problem)]
    merged = merge_paths([path])
    assert (len(merged.records), merged.duplicates) == (1, 1)


def test_true_and_1_are_different_values() -> None:
    """Python calls True equal to 1; a digest of one cannot stand for the other."""
    first = bundle(params={"flag": True})
    second = bundle(params={"flag": 1})
    second["run"]["spec"]["workloadDigest"] = first["run"]["spec"]["workloadDigest"]
    rules = InputRules()
    assert rules.admit(first, "a").problems == ()
    [problem] = rules.admit(second, "b").problems
    assert problem.code == "digest-clash"
    assert not same_json({"x": True}, {"x": 1})
    assert not same_json([False], [0])
    assert not same_json({"x": 1}, {"x": True})
    assert not same_json({"x": [2, {"y": 0.0}]}, {"x": [2, {"y": False}]})
    assert same_json({"x": [2, "a"]}, {"x": [2.0, "a"]})
    assert not same_json({"x": [2, "a"]}, {"x": [2, "b"]})
    # RFC 8785: 1 and 1.0 are one number, so one digest.
    assert same_json({"x": 1}, {"x": 1.0})
    assert digest.canonical_bytes({"x": 1}) == digest.canonical_bytes({"x": 1.0})


def test_one_protocol_in_many_bundles_is_fine(tmp_path: Path) -> None:
    docs = [bundle(params={"tokens": t, "dtype": "fp32"}) for t in (1, 2, 3)]
    path = write_jsonl(tmp_path / "r.jsonl", docs)
    assert list(validate_paths([path])) == []
    assert len(load_runs([path]).runs) == 3


_LEAVES = st.sampled_from([True, False, 0, 1, 0.0, 1.0, 2, 2.0, -0.0, None, "a", "1"])
_TREES = st.recursive(
    _LEAVES,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3)
    ),
    max_leaves=8,
)


def _swap(leaf: Any) -> Any:
    """What a leaf may become in the other value: a number Python calls equal to it."""
    if type(leaf) is bool:
        return int(leaf)
    if type(leaf) in (int, float) and leaf in (0, 1):
        return bool(leaf)
    return float(leaf) if type(leaf) is int else leaf


def _swapped(node: Any, choices: list[bool]) -> Any:
    if isinstance(node, dict):
        # In reverse order: key order is no part of a JSON value.
        return {k: _swapped(node[k], choices) for k in reversed(list(node))}
    if isinstance(node, list):
        return [_swapped(v, choices) for v in node]
    return _swap(node) if choices and choices.pop() else node


@given(tree=_TREES, choices=st.lists(st.booleans(), max_size=8))
def test_same_json_is_rfc_8785_equality(tree: Any, choices: list[bool]) -> None:
    other = _swapped(tree, choices)
    expected = digest.canonical_bytes(tree) == digest.canonical_bytes(other)
    assert same_json(tree, other) == expected
    assert same_json(other, tree) == expected


def test_a_repeat_matched_by_its_text_is_the_same_json_value() -> None:
    """A repeat is matched by orjson's text first, which is one text only for one JSON
    value: NaN or an infinity (which orjson writes as null) never matches null, nor true
    1; keys in another order and 1 against 1.0 are still decided as before."""
    from kernelindex_sdk.validation._input_rules import same_json

    nan, inf = float("nan"), float("inf")
    assert same_json({"x": [1, "a", None]}, {"x": [1, "a", None]})
    assert same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same_json({"x": None}, {"x": nan})
    assert not same_json({"x": None}, {"x": -inf})
    assert not same_json({"x": nan}, {"x": None})
    assert not same_json({"x": 1}, {"x": True})
    assert same_json({"x": 1}, {"x": 1.0})
