"""The converter: strict, wire-named, and a byte-for-byte round trip of the published form."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _paths import set_at
from _schema_strategies import documents
from hypothesis import HealthCheck, given, settings

import kernelindex_sdk as ki
from kernelindex_sdk.models import BenchmarkRun, RecordBundle

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


def test_naive_observed_at_is_refused_on_dump(example: dict[str, Any]) -> None:
    run = _evolve_observed_at(ki.load_record(example).run, datetime(2026, 5, 27))
    with pytest.raises(ValueError, match="timezone-aware"):
        ki.dump(run)


def _evolve_observed_at(run: BenchmarkRun, moment: datetime) -> BenchmarkRun:
    import attrs

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
    text = ki.dumps({"bb": 1, "a": 2, "ccc": {"é": 1, "z": 2, "ab": 3}})
    assert list(json.loads(text)) == ["a", "bb", "ccc"]
    # "z" is one UTF-8 byte, "é" two: the shorter key first, as jsonb stores them.
    assert list(json.loads(text)["ccc"]) == ["z", "ab", "é"]


# Generated documents need not pass the semantic checks (ordered quantiles...),
# which are not the converter's business; they must pass the schema.
SEMANTIC_CODES = {
    "quantile-order",
    "median-mismatch",
    "primary-statistic",
    "duplicate-measurement",
    "failed-with-timing",
    "unit-dimension",
    "out-of-range",
    "observed-at",
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
    assert json.loads(ki.dumps(model)) == doc


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
