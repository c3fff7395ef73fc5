"""The converter: strict, wire-named, and a byte-for-byte round trip of the published form."""

from __future__ import annotations

import copy
import json
import math
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pytest
import rfc8785
from _hostile_values import deep, self_containing
from _paths import set_at
from _schema_strategies import documents
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernelindex_sdk as ki
from kernelindex_sdk._json import published as _published
from kernelindex_sdk.errors import CanonicalizationError, TimestampError
from kernelindex_sdk.models import (
    BenchmarkRun,
    EnvironmentSpec,
    ExecutionEnvironment,
    Hardware,
    ObjectMeta,
    RecordBundle,
)

ROUND_TRIP = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def test_published_example_round_trips_byte_for_byte(example_text: str) -> None:
    assert ki.dumps(ki.load_record(example_text)) == example_text


def test_dump_of_loaded_example_equals_the_input(example: dict[str, Any]) -> None:
    assert ki.dump(ki.load_record(example)) == example


def test_load_record_accepts_dict_str_and_bytes(example_text: str) -> None:
    from_text = ki.load_record(example_text)
    assert isinstance(from_text, RecordBundle)
    assert from_text == ki.load_record(example_text.encode())
    assert from_text == ki.load_record(json.loads(example_text))


def test_attributes_are_snake_case_and_wire_names_camel_case(example: dict[str, Any]) -> None:
    bundle = ki.load_record(example)
    assert bundle.run.spec.timing is not None
    assert bundle.run.spec.timing.latency_ns.median == 2290080
    assert bundle.run.spec.source_native is not None
    assert bundle.run.spec.source_native.external_id.startswith("jsd/forward/torch")  # type: ignore[union-attr]
    assert "latencyNs" in ki.dump(bundle.run.spec.timing)


def test_observed_at_is_an_aware_utc_datetime(example: dict[str, Any]) -> None:
    observed = ki.load_record(example).run.spec.observed_at
    assert observed == datetime(2026, 5, 27, 17, 14, 29, tzinfo=timezone.utc)


def test_observed_at_is_written_in_utc_with_milliseconds(example: dict[str, Any]) -> None:
    run = ki.load_record(example).run
    plus_two = timezone(timedelta(hours=2))
    moment = datetime(2026, 5, 27, 19, 14, 29, 123999, tzinfo=plus_two)
    moved = ki.dump(_evolve_observed_at(run, moment))
    assert moved["spec"]["observedAt"] == "2026-05-27T17:14:29.123Z"


def test_naive_observed_at_is_refused_when_set(example: dict[str, Any]) -> None:
    run = ki.load_record(example).run
    with pytest.raises(TimestampError, match="timezone-aware") as caught:
        _evolve_observed_at(run, datetime(2026, 5, 27))
    assert isinstance(caught.value, ki.KernelIndexError)


def test_observed_at_is_normalized_to_utc_milliseconds_when_set(example: dict[str, Any]) -> None:
    run = ki.load_record(example).run
    plus_two = timezone(timedelta(hours=2))
    moved = _evolve_observed_at(run, datetime(2026, 5, 27, 19, 14, 29, 123999, tzinfo=plus_two))
    assert moved.spec.observed_at == datetime(2026, 5, 27, 17, 14, 29, 123000, tzinfo=timezone.utc)
    assert moved.spec.observed_at.tzinfo is timezone.utc


def test_truncation_never_moves_an_instant_into_the_next_year(example: dict[str, Any]) -> None:
    run = ki.load_record(example).run
    late = datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
    assert ki.dump(_evolve_observed_at(run, late))["spec"]["observedAt"] == (
        "2026-12-31T23:59:59.999Z"
    )


def test_record_built_with_now_round_trips(example: dict[str, Any]) -> None:
    """A producer's `datetime.now(timezone.utc)` keeps microseconds; the model does not."""
    bundle = ki.load_record(example)
    built = attrs.evolve(bundle, run=_evolve_observed_at(bundle.run, datetime.now(timezone.utc)))
    assert ki.load_record(ki.dumps(built)) == built
    assert ki.load_record(ki.dumps(built, indent=None)) == built


def _evolve_observed_at(run: BenchmarkRun, moment: datetime) -> BenchmarkRun:
    return attrs.evolve(run, spec=attrs.evolve(run.spec, observed_at=moment))


def test_unknown_keys_are_reported_at_their_wire_path(example: dict[str, Any]) -> None:
    example["run"]["spec"]["timing"]["latencyNs"]["medain"] = 5
    example["protocol"]["spec"]["harness"]["url"] = "x"
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(example)
    pointers = [p.pointer for p in caught.value.problems]
    assert pointers == ["/protocol/spec/harness/url", "/run/spec/timing/latencyNs/medain"]
    assert "did you mean 'median'?" in str(caught.value)


def test_unknown_key_in_text_has_line_and_column(example: dict[str, Any]) -> None:
    example["run"]["spec"]["timing"]["latencyNs"]["medain"] = 5
    text = json.dumps(example, indent=2)
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(text)
    [problem] = caught.value.problems
    line = text.splitlines()[problem.line - 1]  # type: ignore[operator]
    assert line[problem.column - 1 :].startswith('"medain"')  # type: ignore[operator]


def test_without_schema_validation_the_converter_still_reports_wire_paths(
    example: dict[str, Any],
) -> None:
    example["run"]["spec"]["timing"]["latencyNs"]["medain"] = 5
    example["run"]["spec"]["measurements"][1]["value"] = "5"
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(example, validate=False)
    pointers = sorted(p.pointer for p in caught.value.problems)
    assert pointers == [
        "/run/spec/measurements/1/value",
        "/run/spec/timing/latencyNs/medain",
    ]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("run", "spec", "timing", "latencyNs", "median"), "2290080"),
        (("run", "spec", "timing", "latencyNs", "median"), 2290080.5),
        (("run", "spec", "timing", "latencyNs", "median"), True),
        (("run", "metadata", "name"), 5),
        (("run", "metadata", "title"), None),
        (("run", "metadata", "labels", "liger_version"), 8),
        (("run", "spec", "measurements", 0, "value"), "2288390"),
        (("run", "spec", "sourceNative", "metrics", "ms_20"), None),
        (("run", "spec", "sourceNative", "metrics", "ms_20"), [1]),
        (("environment", "spec", "software"), None),
    ],
)
@pytest.mark.parametrize("validate", [True, False], ids=["validated", "converter-only"])
def test_no_coercion_and_no_null(
    example: dict[str, Any], path: tuple[str | int, ...], value: Any, validate: bool
) -> None:
    set_at(example, path, value)
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(example, validate=validate)
    assert [p.pointer for p in caught.value.problems] == ["/" + "/".join(map(str, path))]


def test_integers_stay_integers_where_the_schema_says_number(example: dict[str, Any]) -> None:
    example["run"]["spec"]["sourceNative"]["metrics"]["count"] = 3
    example["run"]["spec"]["measurements"][0]["value"] = 2288390
    dumped = ki.dump(ki.load_record(example))
    assert type(dumped["run"]["spec"]["sourceNative"]["metrics"]["count"]) is int
    assert type(dumped["run"]["spec"]["measurements"][0]["value"]) is int


def test_absent_optional_fields_stay_absent(example: dict[str, Any]) -> None:
    dumped = ki.dump(ki.load_record(example))
    assert "workload" not in dumped["run"]["spec"]
    assert "annotations" not in dumped["run"]["metadata"]
    assert dumped["environment"]["spec"]["software"] == {}


def test_several_errors_are_reported_together(example: dict[str, Any]) -> None:
    broken = copy.deepcopy(example)
    broken["run"]["spec"]["status"] = "ok"
    broken["run"]["metadata"]["name"] = "Bad Name"
    broken["environment"]["spec"]["hardware"]["vendor"] = 7
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(broken)
    assert len(caught.value.problems) == 3
    assert len(str(caught.value).splitlines()) == 3


def test_per_kind_loaders_return_their_model(example: dict[str, Any]) -> None:
    assert ki.load_run(example["run"]).kind == "BenchmarkRun"
    assert ki.load_protocol(example["protocol"]).kind == "BenchmarkProtocol"
    assert ki.load_environment(example["environment"]).kind == "ExecutionEnvironment"


def test_a_loader_refuses_another_kind(example: dict[str, Any]) -> None:
    with pytest.raises(ki.SchemaValidationError, match="expected a BenchmarkRun"):
        ki.load_run(example["protocol"])


def test_dumps_orders_keys_as_jsonb_does() -> None:
    text = ki.dumps({"bb": 1, "a": 2, "ccc": {"é": 1, "z": 2, "ab": 3}}, validate=False)
    assert list(json.loads(text)) == ["a", "bb", "ccc"]
    # "z" is one UTF-8 byte, "é" two: the shorter key first, as jsonb stores them.
    assert list(json.loads(text)["ccc"]) == ["z", "ab", "é"]


VECTORS = json.loads(
    (Path(__file__).parent / "vectors" / "published.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["description"] for v in VECTORS])
def test_published_form_vector(vector: dict[str, str]) -> None:
    value = json.loads(vector["input"])
    assert ki.dumps(value, validate=False) == vector["published"]
    assert ki.dumps(value, indent=None, validate=False) == vector["compact"]

    # Both forms are JSON of the same value, as a reader of doubles sees it.
    def as_doubles(text: str) -> Any:
        return json.loads(text, parse_int=float)

    assert as_doubles(vector["published"]) == as_doubles(vector["compact"])
    assert as_doubles(vector["compact"]) == as_doubles(vector["input"])


@pytest.mark.parametrize("vector", VECTORS, ids=[v["description"] for v in VECTORS])
def test_own_writer_matches_every_vector(vector: dict[str, str]) -> None:
    """The fallback writer, used when a number's Python text differs, is checked directly."""
    value = json.loads(vector["input"])
    assert _published._own_text(value, indent=2) == vector["published"]
    assert _published._own_text(value, indent=None) == vector["compact"]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8")),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(codec="utf-8"), max_size=4), children, max_size=4
        )
    ),
    max_leaves=20,
)


@ROUND_TRIP
@given(JSON_VALUES)
def test_stdlib_path_and_own_writer_agree(value: Any) -> None:
    for indent in (2, None):
        assert _published.published_text(value, indent=indent) == _published._own_text(
            value, indent=indent
        )


def test_published_vectors_cover_the_number_grammar() -> None:
    compact = "".join(v["compact"] for v in VECTORS)
    for text in ("0.000001", "1e-7", "1e+21", "26624}", '"v":0}', "1.5e+300"):
        assert text in compact


@ROUND_TRIP
@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53) + 1, 2**53 - 1))
def test_number_text_is_rfc8785s_and_reads_back_equal(number: float) -> None:
    text = ki.dumps([number], indent=None, validate=False)
    assert text == "[" + rfc8785.dumps(number).decode() + "]"
    # A double of 2^53 or more is written without a fraction: a reader of doubles (every
    # JSON reader but Python's) gets the same number back.
    assert json.loads(text, parse_int=float) == [number]


def test_a_large_integral_double_reads_back_equal(example: dict[str, Any]) -> None:
    example["protocol"]["spec"]["measurement"]["repetitionMs"] = 2.060777027522825e16
    bundle = ki.load_record(example)
    assert '"repetitionMs": 20607770275228250' in ki.dumps(bundle)
    assert ki.load_record(ki.dumps(bundle)) == bundle


def _minimal_environment(**changes: Any) -> ExecutionEnvironment:
    return ExecutionEnvironment(
        metadata=ObjectMeta(name="h200"),
        spec=EnvironmentSpec(
            hardware=Hardware(vendor="nvidia", product="NVIDIA H200", **changes), software={}
        ),
    )


def test_api_version_and_kind_default_and_are_written_first() -> None:
    env = _minimal_environment()
    assert env.api_version == ki.API_VERSION
    assert env.kind == "ExecutionEnvironment"
    assert list(ki.dump(env)) == ["apiVersion", "kind", "metadata", "spec"]
    assert ki.load_environment(ki.dumps(env)) == env


@pytest.mark.parametrize("validate", [True, False], ids=["validated", "converter-only"])
def test_constants_are_still_checked_on_load(example: dict[str, Any], validate: bool) -> None:
    example["protocol"]["kind"] = "BenchmarkRun"
    example["environment"]["apiVersion"] = "kernelindex.dev/v1"
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(example, validate=validate)
    pointers = {p.pointer for p in caught.value.problems}
    assert pointers & {"/protocol/kind", "/protocol", ""}
    assert pointers & {"/environment/apiVersion", "/environment", ""}


def test_schema_key_is_kept_by_the_round_trip_and_ignored_by_digests(
    example: dict[str, Any],
) -> None:
    example["$schema"] = "https://kernelindex.dev/schemas/v1alpha1/bundle.json"
    example["run"]["$schema"] = "https://kernelindex.dev/schemas/v1alpha1/benchmark-run.json"
    bundle = ki.load_record(example, verify_digests=True)
    assert bundle.schema == example["$schema"]
    assert ki.dump(bundle) == example
    assert ki.load_record(ki.dumps(bundle)) == bundle
    assert json.loads(ki.dumps(bundle))["$schema"] == example["$schema"]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/run/spec/measurements/0/statistic", "median50"),
        ("/run/spec/measurements/0/value", "5"),
        ("/run/metadata/name", "Not A Name"),
        ("/run/spec/observedAt", "2026-02-30T00:00:00.000Z"),
    ],
)
def test_dumps_validates_first(example: dict[str, Any], path: str, value: Any) -> None:
    bundle = ki.load_record(example)
    set_at(example, path, value)
    broken = ki.load_record(example, validate=False) if path.endswith("name") else None
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.dumps(broken if broken is not None else example)
    assert path in {p.pointer for p in caught.value.problems}
    assert ki.dumps(bundle)  # the valid original still writes


def test_dumps_validates_models_built_by_hand() -> None:
    env = _minimal_environment(architecture="SM 90")
    with pytest.raises(ki.SchemaValidationError, match="/spec/hardware/architecture"):
        ki.dumps(env)
    assert ki.dumps(env, validate=False)


@pytest.mark.parametrize(
    ("value", "pointer", "reason"),
    [
        ({"v": math.nan}, "/v", "not a JSON number"),
        ({"v": [math.inf]}, "/v/0", "not a JSON number"),
        ({"v": -math.inf}, "/v", "not a JSON number"),
        ({"\ud800": 1}, "/\\ud800", "lone surrogate"),
        ({"v": "a\udfff"}, "/v", "lone surrogate"),
        ({1: "v"}, "", "expected string keys"),
        ({"v": Decimal("1.5")}, "/v", "got a Decimal"),
        (self_containing(), "/a/1", "contains itself"),
        (deep(100_000), "/a" * 128, "nested deeper than 128 levels"),
        ({"v": 10**5000}, "/v", "too long"),
    ],
    ids=[
        "nan",
        "inf",
        "-inf",
        "surrogate-key",
        "surrogate",
        "int-key",
        "decimal",
        "cycle",
        "deep",
        "huge-int",
    ],
)
@pytest.mark.parametrize("validate", [True, False], ids=["validated", "unvalidated"])
def test_dumps_refuses_what_json_cannot_carry(
    value: Any, pointer: str, reason: str, validate: bool
) -> None:
    with pytest.raises(CanonicalizationError, match=reason) as caught:
        ki.dumps(value, validate=validate)
    assert caught.value.pointer == pointer
    assert isinstance(caught.value, ki.KernelIndexError)


def test_a_value_reached_twice_is_not_a_cycle() -> None:
    shared = [1, 2]
    assert ki.dumps({"a": shared, "b": shared}, indent=None, validate=False) == (
        '{"a":[1,2],"b":[1,2]}'
    )


@pytest.mark.parametrize(
    ("path", "value", "expected_pointer"),
    [
        ("/run/spec/timing/latencyNs/median", 2290080.0, "/run/spec/timing/latencyNs/median"),
        ("/run/spec/timing/samples", 4.0, "/run/spec/timing/samples"),
    ],
)
def test_load_errors_on_text_carry_line_and_column(
    example: dict[str, Any], path: str, value: Any, expected_pointer: str
) -> None:
    set_at(example, path, value)
    text = json.dumps(example, indent=2)
    for validate in (True, False):
        with pytest.raises(ki.SchemaValidationError) as caught:
            ki.load_record(text, validate=validate)
        [problem] = [p for p in caught.value.problems if p.pointer == expected_pointer]
        assert problem.line is not None
        assert problem.column is not None
        line = text.splitlines()[problem.line - 1]
        assert line[problem.column - 1 :].startswith(f'"{path.rsplit("/", 1)[1]}"') or line[
            problem.column - 1 :
        ].startswith(repr(value))


@pytest.mark.parametrize(
    "text",
    [
        '{"run": {}, "\\ud800": 1}',
        '{"run": {"kind": "a\\udc00"}}',
        "[" * 100_000,
        '{"run": ' * 100_000,
        b"\xff\xfe{}",
        "1" * 5000,
    ],
    ids=["surrogate-key", "surrogate", "deep-array", "deep-object", "utf16", "long-int"],
)
def test_load_errors_on_hostile_text_are_printable_kernelindex_errors(text: str | bytes) -> None:
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(text)
    str(caught.value).encode("utf-8")  # printable: no lone surrogate reaches the message


def test_load_errors_on_python_values_are_kernelindex_errors() -> None:
    for doc in (deep(100_000), self_containing(), {"run": math.nan}):
        with pytest.raises(ki.SchemaValidationError):
            ki.load_record(doc)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/run/spec/observedAt", "0000-05-27T17:14:29.000Z"),
        ("/run/spec/observedAt", "2026-05-27T17:14:29.000Z\n"),
        ("/run/spec/observedAt", "2026-02-30T17:14:29.000Z"),
        ("/run/metadata/name", "liger-run\n"),
        ("/run/spec/protocolDigest", "sha256:" + "0" * 64 + "\n"),
        ("/run/spec/timing/latencyNs/median", 2290080.0),
    ],
)
def test_validate_and_load_record_agree(example: dict[str, Any], path: str, value: Any) -> None:
    """Either both refuse a document or both accept it (here: both refuse)."""
    set_at(example, path, value)
    text = json.dumps(example)
    assert ki.validate(text)
    with pytest.raises(ki.SchemaValidationError) as caught:
        ki.load_record(text)
    assert all(p.line is not None for p in caught.value.problems)


# Generated documents need not pass the semantic checks (ordered quantiles...),
# which are not the converter's business; they must pass the schema.
SEMANTIC_CODES = {
    "quantile-order",
    "median-mismatch",
    "primary-statistic",
    "duplicate-measurement",
    "failed-with-measurement",
    "timer-not-applicable",
    "min-samples",
    "mean-range",
    "unit-dimension",
    "out-of-range",
    "observed-at",
    "sampled-range",
}


def _assert_round_trip(doc: dict[str, Any], kind: str) -> None:
    assert {p.code for p in ki.validate(doc)} <= SEMANTIC_CODES
    loader = {
        "RecordBundle": ki.load_record,
        "BenchmarkRun": ki.load_run,
        "BenchmarkProtocol": ki.load_protocol,
        "ExecutionEnvironment": ki.load_environment,
    }[kind]
    model = loader(doc, validate=False)
    assert ki.dump(model) == doc
    text = ki.dumps(model, validate=False)
    assert loader(text, validate=False) == model
    # A reader of doubles sees the same value (Python reads 2^53 and above as ints).
    assert json.loads(text, parse_int=float) == doc


@ROUND_TRIP
@given(documents("BenchmarkRun"))
def test_generated_runs_round_trip(doc: dict[str, Any]) -> None:
    _assert_round_trip(doc, "BenchmarkRun")


@ROUND_TRIP
@given(documents("BenchmarkProtocol"))
def test_generated_protocols_round_trip(doc: dict[str, Any]) -> None:
    _assert_round_trip(doc, "BenchmarkProtocol")


@ROUND_TRIP
@given(documents("ExecutionEnvironment"))
def test_generated_environments_round_trip(doc: dict[str, Any]) -> None:
    _assert_round_trip(doc, "ExecutionEnvironment")


@ROUND_TRIP
@given(documents("RecordBundle"))
def test_generated_bundles_round_trip(doc: dict[str, Any]) -> None:
    _assert_round_trip(doc, "RecordBundle")
