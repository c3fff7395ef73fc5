"""Contradictions between a run's statistics, units and protocol (the red team's list),
digest helpers given the wrong object, models that nest too deep, and dumps' indent."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from _hostile_values import deep, self_containing

import kernelindex_sdk as ki
from kernelindex_sdk import digest
from kernelindex_sdk._base.display import article
from kernelindex_sdk.validation import _semantic

BW = {"unit": "GB/s", "value": 258.872, "metric": "bandwidth", "statistic": "median"}


def _codes(doc: dict[str, Any]) -> list[str]:
    return [p.code for p in ki.validate(doc)]


def _measure(doc: dict[str, Any], *items: dict[str, Any]) -> None:
    doc["run"]["spec"]["measurements"] = list(items)


def _latency(stat: str, value: float, unit: str = "ns") -> dict[str, Any]:
    return {"unit": unit, "value": value, "metric": "latency", "statistic": stat}


# Mean within [min, max].


def test_latency_ns_mean_below_min_is_one_problem(example: dict[str, Any]) -> None:
    example["run"]["spec"]["timing"]["latencyNs"].update(mean=1, min=4056000, max=4060896)
    example["run"]["spec"]["timing"]["latencyNs"]["median"] = 4058000
    _measure(example)
    [problem] = ki.validate(example)
    assert problem.code == "mean-range"
    assert problem.pointer == "/run/spec/timing/latencyNs/mean"
    assert problem.message == (
        "latency mean 1 ns is below its min 4056000 ns; a mean lies between min and max"
    )


def test_mean_above_max_across_units(example: dict[str, Any]) -> None:
    _measure(example, _latency("max", 2.3, "ms"), _latency("mean", 2300001))
    [problem] = ki.validate(example)
    assert problem.code == "mean-range"
    assert "latency mean 2300001 ns is above its max 2.3 ms" in problem.message


@pytest.mark.parametrize(
    "items",
    [
        # Equal in different units: exact decimal arithmetic (1.005 * 10**6 is
        # 1004999.9999999999 in floats, below 1005000).
        [_latency("min", 1005000), _latency("mean", 1.005, "ms")],
        [_latency("min", 2.290081, "ms"), _latency("mean", 2290.081, "us")],
        [_latency("max", 0.3, "ms"), _latency("mean", 300, "us"), _latency("min", 0.1, "ms")],
        # A mean without min or max is not compared; stddev is no bound.
        [_latency("mean", 1.0, "s"), _latency("stddev", 5, "ns")],
    ],
)
def test_mean_within_or_equal_to_its_bounds_is_valid(
    example: dict[str, Any], items: list[dict[str, Any]]
) -> None:
    example["run"]["spec"]["timing"]["latencyNs"] = {"median": 200000}
    _measure(example, *items)
    assert "mean-range" not in _codes(example)


def test_rounded_latency_ns_may_be_half_a_nanosecond_off_a_measurement(
    example: dict[str, Any],
) -> None:
    # All samples 2290080.4 ns: latencyNs.min is 2290080 (rounded), the mean measurement
    # keeps the fraction. Neither is wrong.
    example["run"]["spec"]["timing"]["latencyNs"] = {"median": 2290080, "min": 2290080}
    _measure(example, _latency("mean", 2.2900804, "ms"), _latency("max", 2.2900804, "ms"))
    assert ki.validate(example) == []
    # Beyond half a nanosecond it is a contradiction.
    _measure(example, _latency("mean", 2.2900794, "ms"))
    assert _codes(example) == ["mean-range"]


def test_bandwidth_mean_below_min(example: dict[str, Any]) -> None:
    _measure(
        example,
        {**BW, "statistic": "min", "value": 2},
        {**BW, "statistic": "mean", "value": 1.5},
    )
    assert _codes(example) == ["mean-range"]


def test_quantiles_equal_across_units_are_ordered(example: dict[str, Any]) -> None:
    # p80 and max are adjacent in rank, both measurements: compared without slack.
    example["run"]["spec"]["timing"]["latencyNs"] = {"median": 1000000}
    _measure(example, _latency("p80", 1005000), _latency("max", 1.005, "ms"))
    assert ki.validate(example) == []


# Protocol timer not_applicable and minSamples (only where the input carries the protocol).


def test_timer_not_applicable_with_timing_is_one_problem(example: dict[str, Any]) -> None:
    example["protocol"]["spec"]["measurement"]["timer"] = "not_applicable"
    [problem] = ki.validate(example)
    assert (problem.code, problem.pointer) == ("timer-not-applicable", "/run/spec/timing")


def test_timer_not_applicable_with_a_duration_measurement(example: dict[str, Any]) -> None:
    example["protocol"]["spec"]["measurement"]["timer"] = "not_applicable"
    del example["run"]["spec"]["timing"]
    _measure(example, {"unit": "us", "value": 3, "metric": "step", "statistic": "median"})
    [problem] = ki.validate(example)
    assert problem.code == "timer-not-applicable"
    assert problem.message.startswith("step median is a duration (3 us)")


def test_timer_not_applicable_with_memory_only_is_valid(example: dict[str, Any]) -> None:
    example["protocol"]["spec"]["measurement"]["timer"] = "not_applicable"
    del example["run"]["spec"]["timing"]
    _measure(example, {"unit": "MiB", "value": 12.5, "metric": "memory", "statistic": "max"})
    assert ki.validate(example) == []
    # A run alone cannot be checked against a protocol it does not carry.
    example["run"]["spec"]["timing"] = {"latencyNs": {"median": 5}, "primaryStatistic": "median"}
    assert ki.validate(example["run"]) == []
    assert _codes(example) == ["timer-not-applicable"]


@pytest.mark.parametrize(("samples", "least", "bad"), [(5, 100, True), (100, 100, False)])
def test_samples_below_min_samples(
    example: dict[str, Any], samples: int, least: int, bad: bool
) -> None:
    example["protocol"]["spec"]["measurement"]["minSamples"] = least
    example["run"]["spec"]["timing"]["samples"] = samples
    assert _codes(example) == (["min-samples"] if bad else [])
    assert ki.validate(example["run"]) == []


def test_min_samples_without_samples_is_not_checked(example: dict[str, Any]) -> None:
    example["protocol"]["spec"]["measurement"]["minSamples"] = 100
    assert ki.validate(example) == []


# A failed run carries no measurement of any metric.


@pytest.mark.parametrize(
    "item",
    [
        BW,
        {"unit": "TFLOP/s", "value": 1.0, "metric": "throughput", "statistic": "mean"},
        {"unit": "MiB", "value": 1.0, "metric": "memory", "statistic": "max"},
        {"unit": "ms", "value": 1.0, "metric": "step", "statistic": "mean"},
    ],
)
def test_failed_run_with_any_measurement(example: dict[str, Any], item: dict[str, Any]) -> None:
    spec = example["run"]["spec"]
    spec.update(status="failed", failure={"reason": "error", "message": "CUDA error"})
    del spec["timing"]
    _measure(example, item)
    [problem] = ki.validate(example)
    assert problem.code == "failed-with-measurement"
    assert problem.message.startswith("a failed run has no valid measurement, but carries")


def test_failed_run_may_carry_dimensionless_evidence(example: dict[str, Any]) -> None:
    # The harness records a mismatch's largest errors as dimensionless measurements.
    spec = example["run"]["spec"]
    spec.update(status="failed", failure={"reason": "mismatch", "message": "differs"})
    del spec["timing"]
    error = {"unit": "1", "value": 0.01, "metric": "grad_input_max_rel_error"}
    _measure(example, {**error, "statistic": "max"})
    assert ki.validate(example) == []
    _measure(example, {**error, "statistic": "max"}, {**BW, "unit": "TB/s"})
    assert _codes(example) == ["failed-with-measurement"]


# Units: a dimension per known metric, one dimension per metric.


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ({**BW, "unit": "ms"}, "bandwidth median is in 'ms', a unit of time; expected a bytes/s"),
        ({**BW, "unit": "TFLOP/s"}, "a unit of flop/s; expected a bytes/s unit: 'B/s', 'GB/s'"),
        (
            {"unit": "ns", "value": 3, "metric": "memory", "statistic": "max"},
            "memory max is in 'ns', a unit of time; expected a bytes unit: 'B', 'KiB'",
        ),
        (
            {"unit": "B", "value": 3, "metric": "throughput", "statistic": "median"},
            "throughput median is in 'B', a unit of bytes; expected a flop/s unit",
        ),
        (
            {"unit": "1", "value": 3, "metric": "memory", "statistic": "max"},
            "memory max is in '1', a unit of one; expected a bytes unit",
        ),
    ],
)
def test_known_metric_in_a_unit_of_another_dimension(
    example: dict[str, Any], item: dict[str, Any], fragment: str
) -> None:
    _measure(example, item)
    [problem] = ki.validate(example)
    assert problem.code == "unit-dimension"
    assert problem.pointer == "/run/spec/measurements/0/unit"
    assert fragment in problem.message


@pytest.mark.parametrize(
    "item",
    [
        BW,
        {**BW, "unit": "TB/s"},
        {"unit": "GiB", "value": 3, "metric": "memory", "statistic": "max"},
        {"unit": "GFLOP/s", "value": 3, "metric": "throughput", "statistic": "median"},
        {"unit": "1", "value": 3, "metric": "speedup", "statistic": "median"},
    ],
)
def test_metrics_in_their_dimension_are_valid(
    example: dict[str, Any], item: dict[str, Any]
) -> None:
    _measure(example, item)
    assert ki.validate(example) == []


def test_mixed_dimensions_are_a_unit_problem_not_an_order_one(example: dict[str, Any]) -> None:
    # bandwidth p80 in GiB (bytes) beside a median in GB/s: no "below its median".
    _measure(example, BW, {**BW, "statistic": "p80", "unit": "GiB", "value": 0.5})
    [problem] = ki.validate(example)
    assert problem.code == "unit-dimension"
    assert problem.pointer == "/run/spec/measurements/1/unit"


def test_a_metric_the_schema_does_not_name_keeps_one_dimension(example: dict[str, Any]) -> None:
    step = {"metric": "step", "statistic": "median", "unit": "ms", "value": 3.0}
    _measure(example, step, {**step, "statistic": "p20", "unit": "B", "value": 1})
    [problem] = ki.validate(example)
    assert problem.code == "unit-dimension"
    assert problem.message == (
        "step p20 is in 'B', a unit of bytes; expected a time unit as its median in 'ms' is:"
        " 'ns', 'us', 'ms', 's'"
    )
    _measure(example, step, {**step, "statistic": "p20", "unit": "us", "value": 2900})
    assert ki.validate(example) == []
    _measure(example, step, {**step, "statistic": "p20", "unit": "us", "value": 3100})
    assert _codes(example) == ["quantile-order"]


def test_every_new_check_documents_its_rule() -> None:
    # The docs site lists the checks from their docstrings.
    for check in _semantic.CHECKS:
        assert check.__doc__, check.__name__
        assert len(check.__doc__.split()) > 5, check.__name__


# The fast validator's anyOf message.


@pytest.mark.parametrize("value", ["1e16", "9007199254740992", "-9007199254740993"])
def test_parameter_beyond_two_to_the_53_says_what_is_expected(
    example_text: str, value: str
) -> None:
    text = example_text.replace('"ms_20": 2.2883904933929444', f'"ms_20": {value}')
    [problem] = ki.validate(text)
    assert problem.code == "anyOf"
    assert problem.message.startswith(
        "expected a JSON scalar that can enter a digest: a string, a boolean, or a number"
        " whose integral values stay within +-(2^53 - 1)"
    )
    assert "not valid under any" not in problem.message


# Digest helpers refuse what they cannot stand for.


def test_digest_helpers_refuse_objects_of_another_kind(example: dict[str, Any]) -> None:
    bundle = ki.load_record(example)
    assert bundle.protocol is not None
    refused = [
        (digest.protocol_digest, bundle, "got a RecordBundle"),
        (digest.protocol_digest, example, "got a RecordBundle"),
        (digest.protocol_digest, bundle.environment, "got an ExecutionEnvironment"),
        (digest.protocol_digest, example["environment"], "got an ExecutionEnvironment"),
        (digest.environment_digest, bundle.protocol.spec, "got a ProtocolSpec"),
        (digest.workload_digest, bundle.run, "got a BenchmarkRun"),
        (digest.workload_digest, example["run"], "got a BenchmarkRun"),
        (digest.implementation_digest, bundle.run.spec, "got a RunSpec"),
        (digest.workload_digest, None, "got null"),
        (digest.protocol_digest, None, "got null"),
    ]
    for helper, value, fragment in refused:
        with pytest.raises(ki.ArgumentError) as caught:
            helper(value)
        assert isinstance(caught.value, ki.KernelIndexError)
        assert fragment in str(caught.value), (helper, fragment)


def test_environment_digest_message_uses_an(example: dict[str, Any]) -> None:
    with pytest.raises(ki.ArgumentError, match="an ExecutionEnvironment digest takes an"):
        digest.environment_digest(ki.load_record(example))


@pytest.mark.parametrize("kind", ["Nope", "", "BenchmarkRun", "workload", None, 3])
def test_digest_refuses_unknown_kinds(kind: Any) -> None:
    with pytest.raises(ki.ArgumentError, match=r"^kind: expected one of 'BenchmarkProtocol'"):
        digest.digest(kind, {})
    with pytest.raises(ki.ArgumentError):
        digest.preimage(kind, {})


def test_digest_helpers_still_take_documents_and_specs(example: dict[str, Any]) -> None:
    bundle = ki.load_record(example)
    declared = example["run"]["spec"]["protocolDigest"]
    assert bundle.protocol is not None
    for value in (bundle.protocol, bundle.protocol.spec, example["protocol"]):
        assert digest.protocol_digest(value) == declared
    assert digest.protocol_digest(example["protocol"]["spec"]) == declared
    assert digest.digest("BenchmarkProtocol", example["protocol"]) == declared
    # Any JSON value but null is a spec to digest (the vectors digest a list).
    assert digest.workload_digest([1, 2]).startswith("sha256:")


# Models holding a cycle or a very deep map: a KernelIndexError from every entry point.


@pytest.mark.parametrize("parameters", [self_containing(), deep(100_000)], ids=["cycle", "deep"])
def test_models_holding_a_cycle_or_deep_map_give_kernelindex_errors(
    example: dict[str, Any], parameters: dict[str, Any]
) -> None:
    bundle = ki.load_record(example)
    workload = ki.load_record(json.dumps(_with_workload(example))).run.spec.workload
    assert workload is not None
    workload = attrs.evolve(workload, parameters=parameters)
    run = attrs.evolve(bundle.run, spec=attrs.evolve(bundle.run.spec, workload=workload))
    bad = attrs.evolve(bundle, run=run)
    [problem] = ki.validate(bad)
    assert problem.pointer.startswith("/run/spec/workload/parameters/")
    with pytest.raises(ki.SchemaValidationError):
        ki.check(bad)
    with pytest.raises(ki.CanonicalizationError):
        ki.dumps(bad)
    with pytest.raises(ki.CanonicalizationError):
        ki.dumps(bad, indent=None, validate=False)
    for helper in (digest.workload_digest, digest.canonical_bytes):
        with pytest.raises(ki.CanonicalizationError):
            helper(workload)
    # dump and as_json return the value: the map is copied, what it holds left as it is.
    [(key, inner)] = parameters.items()
    assert ki.dump(workload)["parameters"][key] is inner
    assert ki.as_json(bad)["run"]["spec"]["workload"]["parameters"][key] is inner


def _with_workload(example: dict[str, Any]) -> dict[str, Any]:
    example["run"]["spec"]["workload"] = {
        "operation": "jsd",
        "pass": "forward",
        "parameters": {"vocab": 8},
    }
    return example


# dumps' indent: 2 (published) or None (compact), nothing else.


@pytest.mark.parametrize("indent", ["\t", 4, 0, -1, 1, True, 2.0, "2"])
def test_dumps_refuses_indents_that_are_not_published_forms(
    example: dict[str, Any], indent: Any
) -> None:
    with pytest.raises(ki.ArgumentError) as caught:
        ki.dumps(example, indent=indent)
    assert str(caught.value).startswith(
        "indent: expected 2 (the published form) or None (compact), got"
    )


def test_dumps_published_and_compact_forms(example: dict[str, Any]) -> None:
    assert ki.dumps(example, indent=2) == ki.dumps(example)
    compact = ki.dumps(example, indent=None)
    assert "\n" not in compact
    assert json.loads(compact) == json.loads(ki.dumps(example))


@pytest.mark.parametrize(
    ("noun", "expected"),
    [
        ("ExecutionEnvironment", "an ExecutionEnvironment"),
        ("Implementation", "an Implementation"),
        ("Workload", "a Workload"),
        ("BenchmarkRun", "a BenchmarkRun"),
    ],
)
def test_article(noun: str, expected: str) -> None:
    assert article(noun) == expected


@pytest.mark.parametrize("statistic", ["p20", "min"])
def test_a_quantile_given_twice_is_ordered_against_every_other(
    example: dict[str, Any], statistic: str
) -> None:
    """latencyNs and measurements may both give p20: each is checked against the median,
    not only the one that sorts next to it."""
    doc = example
    doc["run"]["spec"]["timing"]["latencyNs"][statistic] = 10**12
    codes = [p.code for p in ki.validate(doc)]
    assert "quantile-order" in codes
