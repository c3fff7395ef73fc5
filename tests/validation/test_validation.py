"""Validation: schema choice, problems with pointers and lines, the semantic checks table."""

from __future__ import annotations

import copy
import json
import math
from decimal import Decimal
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest
from _paths import parent_of
from _schema_strategies import documents
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelindex_sdk as ki
from kernelindex_sdk import validation
from kernelindex_sdk._json import text as _jsontext
from kernelindex_sdk.documents import validate_paths
from kernelindex_sdk.validation import _registry

BAD = Path(__file__).parents[1] / "bad"
EXPECTED = json.loads((Path(__file__).parents[1] / "bad_expected.json").read_text("utf-8"))


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
    value, _, parse_problems = _jsontext.parse((BAD / name).read_bytes())
    kind = validation.detect_kind(value)
    if parse_problems or not isinstance(kind, str) or _jsontext.scan_value(value).problems:
        return
    reference = _registry.reference_validator(kind).is_valid(value)
    fast = _registry.fast_is_valid(kind, value)
    if not (reference and fast):
        assert ki.validate(value) != []


def test_fast_and_reference_validators_agree_on_the_example(example: dict[str, Any]) -> None:
    assert _registry.fast_is_valid("RecordBundle", example)
    assert _registry.reference_validator("RecordBundle").is_valid(example)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(documents("RecordBundle"))
def test_fast_and_reference_validators_agree_on_generated_documents(doc: dict[str, Any]) -> None:
    assert _registry.fast_is_valid("RecordBundle", doc)


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
    by_name, by_digest = list(validate_paths([path]))
    assert "already names a different BenchmarkProtocol" in by_name.problem.message
    # The run still declares the first spec's digest: it stands for two specs now.
    assert by_digest.problem.code == "digest-clash"
    assert by_digest.problem.pointer == "/protocol/spec"


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
    (Path(__file__).parents[1] / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text(
        "utf-8"
    )
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


# Issue 10/11: the API on values JSON has no form for, models, and agreement with loading.


class _Str(str):
    __slots__ = ()


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda d: d["run"]["metadata"]["labels"].__setitem__(1, "x"), "expected string keys"),
        (lambda d: d["run"]["metadata"]["labels"].__setitem__(("a",), "x"), "got tuple"),
        (
            lambda d: d["run"]["spec"]["measurements"][0].__setitem__("value", Decimal("1.5")),
            "Decimal",
        ),
        (lambda d: d["run"]["spec"]["measurements"].__setitem__(0, (1, 2)), "got tuple"),
        (lambda d: d["run"]["spec"].__setitem__("status", _Str("passed")), "got _Str"),
        (
            lambda d: d["run"]["spec"]["timing"]["latencyNs"].__setitem__(
                "median", IntEnum("E", "A").A
            ),
            "got E",
        ),
        (lambda d: d["run"]["metadata"].__setitem__("name", "a\ud800"), "lone surrogate U+D800"),
        (
            lambda d: d["run"]["spec"]["measurements"][0].__setitem__("value", math.inf),
            "inf is not valid JSON",
        ),
    ],
)
def test_python_values_json_cannot_carry_are_problems(
    example: dict[str, Any], make: Any, fragment: str
) -> None:
    make(example)
    problems = ki.validate(example)
    assert problems
    assert any(
        fragment in p.message and p.code in ("json-value", "non-finite-number") for p in problems
    )
    with pytest.raises(ki.SchemaValidationError):
        ki.load_record(example)


def test_a_value_that_contains_itself_is_a_problem_not_a_hang(example: dict[str, Any]) -> None:
    example["run"]["metadata"]["labels"]["self"] = example
    [problem] = ki.validate(example)
    assert problem.pointer == "/run/metadata/labels/self"
    assert "contains itself" in problem.message


def test_a_shared_value_is_not_a_cycle(example: dict[str, Any]) -> None:
    example["environment"]["metadata"]["labels"] = example["run"]["metadata"]["labels"]
    assert ki.validate(example) == []


def test_a_100000_deep_value_is_a_problem_not_a_recursion_error() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(100_000):
        node["a"] = {}
        node = node["a"]
    [problem] = ki.validate({"run": deep})
    assert "nested deeper than 128 levels" in problem.message


def test_integral_floats_are_refused_only_in_integer_fields(example: dict[str, Any]) -> None:
    example["run"]["spec"]["measurements"][0]["value"] = 2288390.0
    example["run"]["spec"]["sourceNative"]["metrics"]["ms_50"] = 2.0
    assert ki.validate(example) == []
    example["run"]["spec"]["timing"]["latencyNs"]["median"] = 2290080.0
    [problem] = ki.validate(example)
    assert problem.pointer == "/run/spec/timing/latencyNs/median"
    assert problem.message.endswith("; write an integer without a fractional part")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/run/spec/timing/latencyNs/median", 2290080.0),
        ("/run/spec/observedAt", "0000-05-27T17:14:29.000Z"),
        ("/run/spec/observedAt", "2026-05-27T17:14:29.000Z\n"),
        ("/run/spec/observedAt", "2026-02-29T17:14:29.000Z"),
        ("/run/metadata/name", "liger\n"),
    ],
)
def test_validate_and_load_record_give_one_answer(
    example: dict[str, Any], path: str, value: Any
) -> None:
    node, key = parent_of(example, path)
    node[key] = value
    problems = ki.validate(example)
    assert problems
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(json.dumps(example))
    assert [p.pointer for p in caught.value.problems] == [p.pointer for p in problems]
    assert all(p.line is not None for p in caught.value.problems)


def test_validators_disagreeing_report_the_fast_verdict(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were the reference to find nothing where jsonschema-rs refuses, it is not a pass."""

    class Lenient:
        def iter_errors(self, _: Any) -> list[Any]:
            return []

    monkeypatch.setattr(_registry, "reference_validator", lambda kind: Lenient())
    example["run"]["metadata"]["name"] = "liger\n"
    [problem] = ki.validate(example)
    assert problem.pointer == "/run/metadata/name"
    assert problem.code == "pattern"
    assert "(ends with a newline)" in problem.message


def test_pattern_messages_show_the_regex_as_the_schema_writes_it(
    example: dict[str, Any],
) -> None:
    example["protocol"]["spec"]["harness"]["repository"] = "not a url"
    [problem] = ki.validate(example)
    assert "\\\\" not in problem.message
    assert "/^https?:" in problem.message


def test_bundle_without_run_says_run_is_required(example: dict[str, Any]) -> None:
    del example["run"]
    [problem] = ki.validate(example)
    assert (problem.pointer, problem.code) == ("", "required")
    assert problem.message == "'run' is a required property"


def test_models_are_validated_like_their_json(example: dict[str, Any]) -> None:
    bundle = ki.load_record(example)
    assert ki.validate(bundle) == []
    ki.check(bundle.run)
    assert [c.matches for c in validation.compare_digests(bundle)][:2] == [True, True]


@pytest.mark.parametrize(
    ("unit", "fragment"),
    [
        ("B", "latency p20 is in 'B', a unit of bytes; expected a time unit"),
        ("GB/s", "latency p20 is in 'GB/s', a unit of bytes/s"),
        ("GiB", "latency p20 is in 'GiB', a unit of bytes"),
        ("1", "latency p20 is in '1', a unit of one"),
    ],
)
def test_latency_in_a_unit_that_is_not_time_is_one_precise_problem(
    example: dict[str, Any], unit: str, fragment: str
) -> None:
    example["run"]["spec"]["measurements"][0]["unit"] = unit
    [problem] = ki.validate(example)
    assert problem.code == "unit-dimension"
    assert fragment in problem.message


def test_failed_run_with_latency_measurements_is_a_contradiction(
    example: dict[str, Any],
) -> None:
    spec = example["run"]["spec"]
    spec.update(status="failed", failure={"reason": "timeout", "message": "took too long"})
    del spec["timing"]
    problems = ki.validate(example)
    assert [p.code for p in problems] == ["failed-with-measurement"] * 2
    del spec["measurements"]
    assert ki.validate(example) == []


@pytest.mark.parametrize(
    ("unit", "value", "fragment"),
    [
        ("s", 1e308, "1e+308 s overflows a double when converted to ns"),
        ("s", 1.7e308, "when converted to ns"),
        ("ns", 10**400, "ns overflows a double"),
        ("ns", -(10**400), "ns overflows a double"),
    ],
)
def test_measurement_overflowing_a_double_is_a_problem(
    example: dict[str, Any], unit: str, value: float, fragment: str
) -> None:
    example["run"]["spec"]["measurements"][1].update(unit=unit, value=value)
    problems = ki.validate(example)
    assert problems
    assert problems[0].code in ("out-of-range", "minimum")
    if value > 0:
        [problem] = problems
        assert fragment in problem.message


def test_a_value_sharing_at_every_level_is_refused_not_walked_forever() -> None:
    """2^100 paths through 100 shared lists: too large, said at once."""
    shared: list[Any] = [1]
    for _ in range(100):
        shared = [shared, shared]
    [problem] = ki.validate({"run": shared})
    assert "too large to check" in problem.message


def test_the_strict_fast_copy_refuses_an_integral_float_without_the_reference(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """jsonschema-rs's strict copy decides; the reference only explains."""

    class Lenient:
        def iter_errors(self, _: Any) -> list[Any]:
            return []

    monkeypatch.setattr(_registry, "reference_validator", lambda kind: Lenient())
    example["protocol"]["spec"]["measurement"]["minSamples"] = 100.0
    assert _registry.fast_is_valid("RecordBundle", example)
    assert not _registry.fast_is_valid("RecordBundle", example, strict=True)
    [problem] = ki.validate(example)
    assert problem.pointer == "/protocol/spec/measurement/minSamples"
    assert "without a fraction" in problem.message


@pytest.mark.parametrize("key", ["bad\nkey", "tab\tkey", "nul\x00key", 'quote"key', "é\\key"])
def test_a_problem_under_a_key_with_escapes_keeps_its_line_and_column(
    example: dict[str, Any], key: str
) -> None:
    """The source map keeps keys as written (escapes and all); problems name the key itself."""
    example["run"]["metadata"]["labels"] = {key: "v"}
    text = json.dumps(example, indent=2)
    problems = [p for p in ki.validate(text) if p.code == "propertyNames"]
    assert problems
    assert all(p.line is not None and p.column is not None for p in problems)
