"""Validation: schema choice, problems with pointers and lines, the semantic checks table."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _paths import parent_of
from _schema_strategies import documents
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelindex_sdk as ki
from kernelindex_sdk import validation
from kernelindex_sdk.documents import validate_paths

BAD = Path(__file__).parent / "bad"
EXPECTED = json.loads((Path(__file__).parent / "bad_expected.json").read_text("utf-8"))


def test_bad_corpus_has_at_least_forty_documents() -> None:
    assert len(EXPECTED) >= 40
    assert sorted(p.name for p in BAD.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_document_is_reported_with_its_fragment(name: str) -> None:
    problems = [str(p) for p in validate_paths([BAD / name])]
    assert problems, f"{name} passed validation"
    assert any(EXPECTED[name] in line for line in problems), problems


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.endswith(".json")))
def test_nothing_the_reference_refuses_is_valid(name: str) -> None:
    """The fast validator decides, the strict reference adds detail; neither's refusal passes.

    Where the fast one accepts what the reference refuses (an integral float in an
    integer field, year 0000 on this branch's patterns), validation runs the reference
    anyway or a semantic check refuses it. The reverse, fast refusing and reference
    accepting (a final newline), is reported with the fast validator's own errors.
    """
    value, _, parse_problems = ki._jsontext.parse((BAD / name).read_bytes())
    kind = validation.detect_kind(value)
    if parse_problems or not isinstance(kind, str) or ki._jsontext.scan_value(value).problems:
        return
    reference = validation._reference_validator(kind).is_valid(value)
    fast = validation._fast_is_valid(kind, value)
    if not (reference and fast):
        assert ki.validate(value) != []


def test_fast_and_reference_validators_agree_on_the_example(example: dict[str, Any]) -> None:
    assert validation._fast_is_valid("RecordBundle", example)
    assert validation._reference_validator("RecordBundle").is_valid(example)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(documents("RecordBundle"))
def test_fast_and_reference_validators_agree_on_generated_documents(doc: dict[str, Any]) -> None:
    assert validation._fast_is_valid("RecordBundle", doc)


def test_schema_is_chosen_by_kind(example: dict[str, Any]) -> None:
    assert validation.detect_kind(example) == "RecordBundle"
    assert validation.detect_kind(example["run"]) == "BenchmarkRun"
    assert validation.detect_kind(example["protocol"]) == "BenchmarkProtocol"
    assert ki.validate(example["environment"]) == []


def test_unknown_kind_names_the_supported_ones(example: dict[str, Any]) -> None:
    [problem] = ki.validate({**example["run"], "kind": "Benchmark"})
    assert problem.code == "kind"
    assert "BenchmarkProtocol, BenchmarkRun, ExecutionEnvironment" in problem.message


def test_unknown_api_version_names_the_supported_one(example: dict[str, Any]) -> None:
    [problem] = ki.validate({**example["run"], "apiVersion": "kernelindex.dev/v9"})
    assert problem.pointer == "/apiVersion"
    assert "'kernelindex.dev/v1alpha1'" in problem.message


def test_unknown_key_pointer_names_the_key_itself(example: dict[str, Any]) -> None:
    example["run"]["spec"]["extra"] = 1
    [problem] = ki.validate(example)
    assert problem.pointer == "/run/spec/extra"
    assert problem.code == "additionalProperties"


def test_text_input_gives_lines_and_columns(example: dict[str, Any]) -> None:
    example["run"]["spec"]["timing"]["latencyNs"]["median"] = -5
    text = json.dumps(example, indent=2)
    [problem] = ki.validate(text)
    assert (problem.line, problem.code) == (8, "minimum")
    assert text.splitlines()[problem.line - 1][problem.column - 1 :].startswith("-5")  # type: ignore[index, operator]
    assert str(problem).startswith("8:")


def test_check_raises_with_every_problem(example: dict[str, Any]) -> None:
    example["run"]["spec"]["status"] = "nope"
    example["run"]["metadata"]["name"] = "Nope"
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.check(example)
    assert {p.pointer for p in caught.value.problems} == {"/run/spec/status", "/run/metadata/name"}


def test_nan_in_a_python_value_is_caught(example: dict[str, Any]) -> None:
    example["run"]["spec"]["measurements"][0]["value"] = float("nan")
    assert [p.code for p in ki.validate(example)] == ["non-finite-number"]


def test_digest_mismatch_is_found_only_when_verifying(example: dict[str, Any]) -> None:
    example["protocol"]["spec"]["measurement"]["timer"] = "cuda_graph"
    assert ki.validate(example) == []
    [problem] = ki.validate(example, verify_digests=True)
    assert (problem.pointer, problem.code) == ("/run/spec/protocolDigest", "digest")
    assert "computed 'sha256:" in problem.message


def test_verified_example_is_valid(example: dict[str, Any]) -> None:
    assert ki.validate(example, verify_digests=True) == []


def test_workload_and_implementation_digests_are_checked_when_present(
    example: dict[str, Any],
) -> None:
    example["run"]["spec"]["workload"] = {"operation": "jsd", "pass": "forward", "parameters": {}}
    [problem] = ki.validate(example, verify_digests=True)
    assert problem.pointer == "/run/spec/workloadDigest"
    example["run"]["spec"]["workloadDigest"] = ki.digest.workload_digest(
        example["run"]["spec"]["workload"]
    )
    assert ki.validate(example, verify_digests=True) == []


def test_compare_digests_lists_all_four(example_text: str) -> None:
    comparisons = {c.field: c for c in validation.compare_digests(example_text)}
    assert comparisons["protocolDigest"].matches is True
    assert comparisons["environmentDigest"].matches is True
    assert comparisons["workloadDigest"].matches is None
    assert comparisons["implementationDigest"].computed is None


def test_jsonl_problems_carry_file_lines(tmp_path: Path, example: dict[str, Any]) -> None:
    broken = copy.deepcopy(example)
    broken["run"]["metadata"]["name"] = "other-name"
    broken["run"]["spec"]["status"] = "ok"
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(example) + "\n\n" + json.dumps(broken) + "\n", "utf-8")
    [found] = list(validate_paths([path]))
    assert found.problem.line == 3
    assert str(found).startswith(f"{path}:3:")


def test_duplicate_run_names_across_files(tmp_path: Path, example_text: str) -> None:
    (tmp_path / "a.json").write_text(example_text, "utf-8")
    (tmp_path / "b.json").write_text(example_text, "utf-8")
    [found] = list(validate_paths([tmp_path]))
    assert found.problem.code == "duplicate-name"
    assert "a.json" in found.problem.message


def test_shared_protocol_with_one_content_is_not_a_duplicate(
    tmp_path: Path, example: dict[str, Any]
) -> None:
    other = copy.deepcopy(example)
    other["run"]["metadata"]["name"] = "another-run"
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(example) + "\n" + json.dumps(other) + "\n", "utf-8")
    assert list(validate_paths([path])) == []
    other["protocol"]["spec"]["measurement"]["timer"] = "wall_clock"
    path.write_text(json.dumps(example) + "\n" + json.dumps(other) + "\n", "utf-8")
    [found] = list(validate_paths([path]))
    assert "already names a different BenchmarkProtocol" in found.problem.message


@pytest.mark.slow
def test_a_50_megabyte_file_is_reported_not_crashed_on(
    tmp_path: Path, example: dict[str, Any]
) -> None:
    example["run"]["metadata"]["description"] = "x" * (50 * 2**20)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(example), "utf-8")
    [found] = list(validate_paths([path]))
    assert found.problem.pointer == "/run/metadata/description"
    assert len(str(found)) < 300


def _mutations(doc: dict[str, Any]) -> st.SearchStrategy[Any]:
    junk = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=8)
        | st.just([])
        | st.just({})
    )
    paths = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, (*path, i))

    walk(doc, ())
    return st.tuples(st.sampled_from(paths[1:]), junk, st.sampled_from(["set", "delete", "add"]))


def _apply(doc: dict[str, Any], mutation: tuple[tuple[Any, ...], Any, str]) -> dict[str, Any]:
    path, value, how = mutation
    doc = copy.deepcopy(doc)
    node, last = parent_of(doc, path)
    if how == "delete":
        del node[last]
    elif how == "add" and isinstance(node, dict):
        node[f"{last}x"] = value
    else:
        node[last] = value
    return doc


EXAMPLE = json.loads(
    (Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text("utf-8")
)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(_mutations(EXAMPLE))
def test_mutated_records_validate_or_are_reported_cleanly(
    mutation: tuple[tuple[Any, ...], Any, str],
) -> None:
    doc = _apply(EXAMPLE, mutation)
    problems = ki.validate(doc, verify_digests=True)
    for problem in problems:
        assert problem.pointer == "" or problem.pointer.startswith("/")
        assert problem.message
        assert problem.code
    # As text (NaN written as a literal, which the parser reports) the verdict is the same.
    assert bool(ki.validate(json.dumps(doc), verify_digests=True)) == bool(problems)
    if not problems:
        assert ki.dump(ki.load_record(doc)) == doc


@pytest.mark.parametrize("kind", [["BenchmarkRun"], {"a": 1}, 7, None])
def test_a_kind_of_the_wrong_type_is_reported(example: dict[str, Any], kind: Any) -> None:
    [problem] = ki.validate({**example["run"], "kind": kind})
    assert problem.code == "kind"
