"""The one-body quick pass against the general pieces it stands in front of.

:func:`_quick_checks.passes` decides the common layouts (each metric's measurements side
by side, integer nanoseconds, one unit per metric) itself and hands any other record to
``_plain_values`` and ``_values``. Here it is held to the answer those pieces give on
their own (the pass as it was before the common layouts were taught), and to the table,
on generated records built to hit every rule of the common layouts and their edges.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk.validation import _quick_checks, _semantic

FIXTURES = Path(__file__).parent / "fixtures"


def _reference(run: dict[str, Any], protocol: dict[str, Any] | None) -> bool:  # noqa: PLR0911
    """The quick pass through its general pieces only: status, the calendar, timing
    against the protocol, then ``_plain_values`` or ``_values``."""
    spec = run["spec"]
    if spec["status"] == "failed" or not _semantic._is_instant(spec["observedAt"]):
        return False
    timing = spec.get("timing")
    untimed = False
    if protocol is not None:
        method = protocol["spec"]["measurement"]
        if method["timer"] == "not_applicable":
            if timing is not None:
                return False
            untimed = True
        elif timing is not None:
            least, samples = method.get("minSamples"), timing.get("samples")
            if least is not None and samples is not None and samples < least:
                return False
            if method["primaryStatistic"] != timing["primaryStatistic"]:
                return False
    latency = {} if timing is None else timing["latencyNs"]
    if timing is not None and timing["primaryStatistic"] not in latency:
        return False
    if _quick_checks._plain_values(spec, latency, untimed):
        return True
    values = _quick_checks._values(spec, latency, untimed=untimed)
    return values is not None and all(
        len(found) == 1 or _quick_checks._ordered(found) for found in values.values()
    )


def _problems(run: dict[str, Any], protocol: dict[str, Any] | None) -> list[Any]:
    view = _semantic.RecordView(run=run, protocol=protocol)
    return [p for check in _semantic.CHECKS for p in check(view)]


# Near the edges of the common layouts: ties, 2^52, negatives, bools, floats in ns,
# integers too large for a double, non-finite floats (a library caller's dictionary).
_NUMBERS = [
    0,
    1,
    999,
    1000,
    1001,
    2**52 - 1,
    2**52,
    -1,
    10**400,
    True,
    0.0,
    0.5,
    999.5,
    1000.0,
    1e308,
    -1e308,
    float("inf"),
    float("nan"),
]
# latencyNs holds the schema's NonNegativeSafeInteger.
_SAFE = [0, 1, 999, 1000, 1001, 2**52 - 1, 2**52, 2**53 - 1]
_STATISTICS = ["p20", "p80", "median", "min", "max", "p5", "p99", "mean", "stddev"]
_METRICS = ["latency", "latency", "bandwidth", "memory", "throughput", "errors", "custom"]
_UNITS = ["ns", "ns", "us", "GB/s", "TB/s", "MiB", "B", "TFLOP/s", "1"]

measurement = st.fixed_dictionaries(
    {
        "unit": st.sampled_from(_UNITS),
        "value": st.sampled_from(_NUMBERS),
        "metric": st.sampled_from(_METRICS),
        "statistic": st.sampled_from(_STATISTICS),
    }
)


@st.composite
def common_spec(draw: st.DrawFn) -> dict[str, Any]:
    """A run spec shaped like the harness's, Liger's or the example's, then changed."""
    median = draw(st.sampled_from([1000, 4058656, 2**52 - 1, 0]))
    spread = draw(st.sampled_from([0, 1, 5, -1]))
    spec: dict[str, Any] = {
        "status": draw(st.sampled_from(["passed", "unverified", "failed"])),
        "observedAt": draw(
            st.sampled_from(["2026-11-30T03:01:38.820Z", "2024-02-29T23:59:59.999Z"])
        ),
    }
    layout = draw(st.sampled_from(["harness", "backward", "liger-speed", "memory", "free"]))
    if layout != "memory":
        spec["timing"] = {
            "samples": draw(st.sampled_from([99, 100, 126])),
            "latencyNs": {"median": median},
            "primaryStatistic": "median",
        }
    latency = [
        {"unit": "ns", "value": median - spread, "metric": "latency", "statistic": "p20"},
        {"unit": "ns", "value": median + spread, "metric": "latency", "statistic": "p80"},
    ]
    errors = [
        {"unit": "1", "value": 1.5e-13, "metric": "grad_input_max_abs_error", "statistic": "max"},
        {"unit": "1", "value": 3.4e-07, "metric": "grad_input_max_rel_error", "statistic": "max"},
    ]
    bandwidth = {"unit": "GB/s", "value": 258.872, "metric": "bandwidth", "statistic": "median"}
    memory = [
        {"unit": "MiB", "value": 256.5 + d, "metric": "memory", "statistic": s}
        for s, d in (("median", 0), ("p20", -spread), ("p80", spread))
    ]
    spec["measurements"] = {
        "harness": [*latency, bandwidth],
        "backward": [*errors, *latency, bandwidth],
        "liger-speed": latency,
        "memory": memory,
        "free": draw(st.lists(measurement, max_size=6)),
    }[layout]
    # Then up to three changes anywhere: a field of a measurement, an extra or a moved
    # one, an extra latencyNs statistic.
    for _ in range(draw(st.integers(0, 3))):
        ms = spec["measurements"]
        change = draw(st.sampled_from(["field", "extra", "move", "latencyNs"]))
        if change == "field" and ms:
            m = ms[draw(st.integers(0, len(ms) - 1))]
            key = draw(st.sampled_from(["unit", "value", "metric", "statistic"]))
            pool = {"unit": _UNITS, "value": _NUMBERS, "metric": _METRICS}.get(key, _STATISTICS)
            m[key] = draw(st.sampled_from(pool))
        elif change == "extra":
            ms.insert(draw(st.integers(0, len(ms))), draw(measurement))
        elif change == "move" and len(ms) > 1:
            ms.insert(draw(st.integers(0, len(ms) - 1)), ms.pop())
        elif change == "latencyNs" and "timing" in spec:
            statistic = draw(st.sampled_from(_STATISTICS))
            spec["timing"]["latencyNs"][statistic] = draw(st.sampled_from(_SAFE))
    return spec


protocol = st.none() | st.builds(
    lambda timer, least: {
        "spec": {
            "measurement": {
                "timer": timer,
                "primaryStatistic": "median",
                **({} if least is None else {"minSamples": least}),
            }
        }
    },
    st.sampled_from(["cuda_events", "cuda_events", "not_applicable"]),
    st.sampled_from([None, 100]),
)


@settings(max_examples=5000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=common_spec(), protocol=protocol)
def test_the_quick_pass_answers_as_its_general_pieces(
    spec: dict[str, Any], protocol: dict[str, Any] | None
) -> None:
    """The same answer as the general pieces alone, and "no problem" only where the
    table finds none."""
    run = {"spec": spec}
    quick = _quick_checks.passes(run, protocol)
    assert quick == _reference(run, protocol)
    if quick:
        assert _problems(run, protocol) == []


def test_generated_records_reach_the_common_layouts_and_leave_them() -> None:
    """Not vacuous: the generator makes records the one body decides alone, records it
    hands to the general pieces (valid ones they take, invalid ones they refuse) and
    records it refuses itself."""
    original = _quick_checks._general
    calls: list[bool] = []
    seen = set()

    def general(spec: Any, latency: Any, untimed: bool) -> bool:
        calls.append(True)
        return original(spec, latency, untimed)

    @settings(max_examples=600, deadline=None, database=None)
    @given(spec=common_spec(), protocol=protocol)
    def probe(spec: dict[str, Any], protocol: dict[str, Any] | None) -> None:
        calls.clear()
        run = {"spec": spec}
        answer = _quick_checks.passes(run, protocol)
        route = "general" if calls else "alone"
        seen.add((route, answer, not _problems(run, protocol)))

    patch = pytest.MonkeyPatch()
    patch.setattr(_quick_checks, "_general", general)
    try:
        probe()
    finally:
        patch.undo()
    assert ("alone", True, True) in seen
    assert ("general", True, True) in seen
    assert ("general", False, False) in seen
    assert ("alone", False, False) in seen


def _fixture_records() -> list[dict[str, Any]]:
    lines = (FIXTURES / "h200-jsd-sweep.jsonl").read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines if line]
    records.append(json.loads((FIXTURES / "liger-jsd-forward-torch-b200.json").read_text()))
    return records


def _liger_records(tmp_path: Path) -> list[dict[str, Any]]:
    from kernelindex_sdk.importers import liger

    out = tmp_path / "liger.jsonl"
    liger.import_files([FIXTURES / "liger" / "all_benchmark_data.subset.csv"], out)
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_common_records_are_decided_in_one_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our H200 results (forward, and backward with gradient error metrics), the
    published example and Liger's speed and memory rows never reach the general pieces."""

    def general(spec: Any, latency: Any, untimed: bool) -> bool:
        raise AssertionError(spec)

    monkeypatch.setattr(_quick_checks, "_general", general)
    records = [*_fixture_records(), *_liger_records(tmp_path)]
    metrics = {m["metric"] for doc in records for m in doc["run"]["spec"]["measurements"]}
    assert {"latency", "bandwidth", "memory", "grad_input_max_abs_error"} <= metrics
    for doc in records:
        assert _quick_checks.passes(doc["run"], doc["protocol"])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda ms: ms.append(dict(ms[0])), "a metric and statistic given twice"),
        (lambda ms: ms.insert(0, ms.pop()), "bandwidth before the errors: still fine"),
        (lambda ms: ms.append(dict(ms[0], statistic="min")), "an error metric met again"),
        (lambda ms: ms[4].update(unit="TB/s"), "another unit of the same dimension"),
        (lambda ms: ms[4].update(unit="ms"), "a bandwidth in a time unit"),
        (lambda ms: ms[3].update(value=4065280.0), "a float in ns"),
        (lambda ms: ms[2].update(value=4063169), "p20 above the median"),
        (lambda ms: ms[1].update(statistic="mean"), "a mean of a metric given once"),
    ],
)
def test_hostile_changes_to_a_backward_record(change: Any, reason: str) -> None:
    """Each change to a backward record gets the general pieces' answer."""
    backward = next(
        doc for doc in _fixture_records() if len(doc["run"]["spec"]["measurements"]) == 5
    )
    run, protocol = backward["run"], backward["protocol"]
    change(run["spec"]["measurements"])
    assert _quick_checks.passes(run, protocol) == _reference(run, protocol), reason
    if _quick_checks.passes(run, protocol):
        assert _problems(run, protocol) == [], reason
