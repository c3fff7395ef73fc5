"""The one rule that calls a run degraded, from the state it recorded."""

from __future__ import annotations

from typing import Any

import pytest
from _records import bundle

from kernelindex_sdk import validation
from kernelindex_sdk.conditions import (
    DEGRADED_CLOCK_FRACTION,
    DEGRADED_OTHERS_BUSY_FRACTION,
    SETTING_REASONS,
    degraded_reason,
)


def _spec(**gpu: Any) -> dict[str, Any]:
    return {"status": "passed", "conditions": {"gpu": {"samples": 12, **gpu}}}


def _clock(low: float, high: float) -> dict[str, float]:
    return {"min": low, "median": high, "max": high}


def test_a_run_that_recorded_no_state_is_not_degraded() -> None:
    assert degraded_reason({"status": "passed"}) is None
    assert degraded_reason({"conditions": {}}) is None


def test_a_steady_unthrottled_run_is_not_degraded() -> None:
    assert degraded_reason(_spec(smClockMhz=_clock(1980, 1980), throttleReasons=[])) is None


def test_an_idle_reason_alone_is_not_degraded() -> None:
    assert degraded_reason(_spec(throttleReasons=["GpuIdle"])) is None


@pytest.mark.parametrize("reason", sorted(SETTING_REASONS))
def test_a_setting_that_holds_the_clocks_is_not_degraded(reason: str) -> None:
    """Applications (or display) clocks hold the clocks on purpose: a steady state."""
    assert degraded_reason(_spec(throttleReasons=[reason, "GpuIdle"])) is None
    both = degraded_reason(_spec(throttleReasons=[reason, "SwPowerCap"]))
    assert both == "throttled (SwPowerCap)"


def test_any_other_throttle_reason_degrades_and_is_named() -> None:
    reason = degraded_reason(_spec(throttleReasons=["SwPowerCap", "GpuIdle", "HwSlowdown"]))
    assert reason == "throttled (HwSlowdown, SwPowerCap)"


def test_a_clock_drop_below_the_fraction_degrades_with_its_numbers() -> None:
    reason = degraded_reason(_spec(smClockMhz=_clock(1410, 1980)))
    assert reason == "SM clock 1410-1980 MHz, its smallest 71% of its largest (below 90%)"


@pytest.mark.parametrize(
    ("low", "degraded"),
    [(DEGRADED_CLOCK_FRACTION * 2000, False), (DEGRADED_CLOCK_FRACTION * 2000 - 1, True)],
    ids=["at-the-fraction", "just-below"],
)
def test_the_clock_fraction_is_the_edge(low: float, degraded: bool) -> None:
    assert (degraded_reason(_spec(smClockMhz=_clock(low, 2000))) is not None) is degraded


def test_both_causes_are_said() -> None:
    reason = degraded_reason(_spec(smClockMhz=_clock(1000, 2000), throttleReasons=["HwSlowdown"]))
    assert reason is not None
    assert reason.startswith("throttled (HwSlowdown); SM clock 1000-2000 MHz")


def test_a_record_with_conditions_is_valid_and_its_digests_do_not_change() -> None:
    """Conditions are an observation: the run's four digests ignore them."""
    plain = bundle()
    with_state = bundle()
    with_state["run"]["spec"]["conditions"] = {
        "gpu": {
            "samples": 40,
            "smClockMhz": {"min": 1755, "median": 1980, "max": 1980},
            "memoryClockMhz": {"min": 2619, "median": 2619, "max": 2619},
            "maxSmClockMhz": 1980,
            "powerW": {"min": 120.5, "median": 410.0, "max": 598.2},
            "powerLimitW": 700,
            "temperatureC": {"min": 41, "median": 52, "max": 55},
            "throttleReasons": ["SwPowerCap"],
        }
    }
    assert validation.validate(with_state) == []
    for key in ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest"):
        assert with_state["run"]["spec"][key] == plain["run"]["spec"][key]


def test_the_schema_refuses_an_unknown_state_field_and_a_lowercase_reason() -> None:
    record = bundle()
    record["run"]["spec"]["conditions"] = {"gpu": {"samples": 1, "fanSpeed": 3}}
    assert validation.validate(record)
    record["run"]["spec"]["conditions"] = {"gpu": {"samples": 1, "throttleReasons": ["hw slow"]}}
    assert validation.validate(record)


def test_a_sampled_range_out_of_order_is_refused_with_its_pointer() -> None:
    record = bundle()
    record["run"]["spec"]["conditions"] = {
        "gpu": {"samples": 3, "smClockMhz": {"min": 2000, "median": 1000, "max": 1500}}
    }
    problems = validation.validate(record)
    assert [(p.pointer, p.code) for p in problems] == [
        ("/run/spec/conditions/gpu/smClockMhz", "sampled-range")
    ]


def _cpu(others: float, cpus: int = 2, **more: Any) -> dict[str, Any]:
    state = {"availableCpus": cpus, "windowMs": 250.0, "othersBusyFraction": others, **more}
    return {"status": "passed", "conditions": {"cpu": state}}


def test_a_cpu_timing_others_shared_degrades_with_its_numbers() -> None:
    reason = degraded_reason(_cpu(0.48))
    assert reason == (
        "CPU shared: other processes used 48% of 2 CPUs during the timed loop (limit 10%)"
    )
    assert degraded_reason(_cpu(0.5, cpus=1)) == (
        "CPU shared: other processes used 50% of 1 CPU during the timed loop (limit 10%)"
    )


@pytest.mark.parametrize(
    ("others", "degraded"),
    [
        (0.0, False),
        (DEGRADED_OTHERS_BUSY_FRACTION, False),
        (DEGRADED_OTHERS_BUSY_FRACTION + 1e-3, True),
    ],
    ids=["idle", "at-the-limit", "just-above"],
)
def test_the_others_busy_limit_is_the_edge(others: float, degraded: bool) -> None:
    assert (degraded_reason(_cpu(others)) is not None) is degraded


def test_a_share_just_above_the_limit_is_not_written_as_the_limit() -> None:
    reason = degraded_reason(_cpu(0.104))
    assert reason is not None
    assert "used 10.4% of 2 CPUs" in reason


def test_a_gpu_and_a_cpu_cause_are_both_said() -> None:
    spec = _cpu(0.9)
    spec["conditions"]["gpu"] = {"samples": 2, "throttleReasons": ["HwSlowdown"]}
    assert degraded_reason(spec) == (
        "throttled (HwSlowdown); CPU shared: other processes used 90% of 2 CPUs during the timed"
        " loop (limit 10%)"
    )


@pytest.mark.parametrize("value", [None, "0.5", True, float("nan")], ids=repr)
def test_a_cpu_share_that_is_not_a_number_degrades_nothing(value: Any) -> None:
    """degraded_reason reads unvalidated values too (a store row): only numbers count."""
    assert degraded_reason(_cpu(value)) is None


def test_a_record_with_cpu_conditions_is_valid_and_its_digests_do_not_change() -> None:
    plain = bundle()
    with_state = bundle()
    with_state["run"]["spec"]["conditions"] = _cpu(
        0.48,
        onlineCpus=4,
        ownBusyFraction=0.5,
        loadAverage1mAtStart=2.5,
        loadAverage1mAtEnd=3.0,
    )["conditions"]
    assert validation.validate(with_state) == []
    for key in ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest"):
        assert with_state["run"]["spec"][key] == plain["run"]["spec"][key]


@pytest.mark.parametrize(
    ("state", "pointer"),
    [
        ({"availableCpus": 2, "windowMs": 250, "othersBusyFraction": 1.2}, "/othersBusyFraction"),
        ({"availableCpus": 2, "windowMs": 250, "othersBusyFraction": -0.1}, "/othersBusyFraction"),
        ({"availableCpus": 0, "windowMs": 250, "othersBusyFraction": 0.1}, "/availableCpus"),
        ({"availableCpus": 2, "windowMs": 0, "othersBusyFraction": 0.1}, "/windowMs"),
        (
            {"availableCpus": 2, "windowMs": 1, "othersBusyFraction": 0, "ownBusyFraction": 2},
            "/ownBusyFraction",
        ),
        ({"availableCpus": 2, "windowMs": 250}, ""),
        ({"availableCpus": 2, "windowMs": 250, "othersBusyFraction": 0, "steal": 1}, "/steal"),
    ],
    ids=["above-1", "negative", "no-cpus", "no-window", "own-above-1", "no-share", "unknown"],
)
def test_the_schema_refuses_a_cpu_state_out_of_range(state: dict[str, Any], pointer: str) -> None:
    record = bundle()
    record["run"]["spec"]["conditions"] = {"cpu": state}
    problems = validation.validate(record)
    assert [p.pointer for p in problems] == ["/run/spec/conditions/cpu" + pointer]
