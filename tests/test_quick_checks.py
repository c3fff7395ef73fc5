"""The one-pass semantic check: it says "no problem" only where the table finds none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk import validation
from kernelindex_sdk._base.units import UNITS
from kernelindex_sdk.validation import BundleReader, _quick_checks, _semantic

FIXTURES = Path(__file__).parent / "fixtures"

_STATISTICS = ["min", "p5", "p20", "median", "p80", "max", "mean", "stddev"]
# Values that meet at the edges: equal across units, half a nanosecond apart, huge.
_VALUES = [
    0,
    1,
    1005000,
    1004999.5,
    1005000.5,
    1.005,
    1005,
    2290.081,
    2.290081,
    2290081,
    4058656,
    4058656.4,
    4058657,
    0.5,
    1e308,
    10**400,
]


def _problems(run: dict[str, Any], protocol: dict[str, Any] | None) -> list[Any]:
    view = _semantic.RecordView(run=run, protocol=protocol)
    return [p for check in _semantic.CHECKS for p in check(view)]


measurement = st.fixed_dictionaries(
    {
        "metric": st.sampled_from(["latency", "memory", "bandwidth", "throughput", "errors"]),
        "statistic": st.sampled_from(_STATISTICS),
        "unit": st.sampled_from(sorted(UNITS)),
        "value": st.sampled_from(_VALUES),
    }
)
timing = st.fixed_dictionaries(
    {
        "latencyNs": st.dictionaries(
            st.sampled_from(_STATISTICS),
            st.sampled_from([v for v in _VALUES if type(v) is int and v < 2**53]),
        ),
        "primaryStatistic": st.sampled_from(["median", "p20", "mean"]),
    },
    optional={"samples": st.sampled_from([1, 99, 100, 1000])},
)
protocol = st.none() | st.fixed_dictionaries(
    {
        "spec": st.fixed_dictionaries(
            {
                "measurement": st.fixed_dictionaries(
                    {
                        "timer": st.sampled_from(["cuda_events", "not_applicable"]),
                        "primaryStatistic": st.sampled_from(["median", "p20"]),
                    },
                    optional={"minSamples": st.sampled_from([1, 100])},
                )
            }
        )
    }
)
run_spec = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["passed", "unverified", "failed"]),
        "observedAt": st.sampled_from(
            [
                "2026-05-27T17:14:29.000Z",
                "2026-02-29T00:00:00.000Z",
                "2024-02-29T23:59:59.999Z",
                "2026-05-27T24:00:00.000Z",
                "2026-05-27T17:60:29.000Z",
                "0000-01-01T00:00:00.000Z",
            ]
        ),
    },
    optional={"timing": timing, "measurements": st.lists(measurement, max_size=5)},
)


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=run_spec, protocol=protocol)
def test_a_run_passed_has_no_problem_in_the_table(
    spec: dict[str, Any], protocol: dict[str, Any] | None
) -> None:
    run = {"spec": spec}
    if _quick_checks.passes(run, protocol):
        assert _problems(run, protocol) == []


def _records() -> list[dict[str, Any]]:
    lines = (FIXTURES / "h200-jsd-sweep.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def test_common_records_take_the_quick_pass(example: dict[str, Any]) -> None:
    """The published example and our H200 results: the pass is not always False."""
    records = [example, *_records()]
    assert len(records) > 10
    for doc in records:
        assert _quick_checks.passes(doc["run"], doc.get("protocol"))
        assert _quick_checks.passes(doc["run"], None)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("timing.latencyNs.p20", 10**12),
        ("timing.primaryStatistic", "p80"),
        ("observedAt", "2026-02-30T00:00:00.000Z"),
        ("observedAt", "2026-05-27T17:14:60.000Z"),
        ("status", "failed"),
    ],
)
def test_a_problem_is_left_to_the_table(example: dict[str, Any], where: str, value: Any) -> None:
    spec = example["run"]["spec"]
    *parents, key = where.split(".")
    for part in parents:
        spec = spec[part]
    spec[key] = value
    assert not _quick_checks.passes(example["run"], example["protocol"])


def test_a_new_check_turns_the_pass_off(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _quick_checks.passes(example["run"], example["protocol"])
    monkeypatch.setattr(_semantic, "CHECKS", (*_semantic.CHECKS, _semantic.check_digests))
    assert not _quick_checks.passes(example["run"], example["protocol"])


def test_instants_are_those_of_the_calendar() -> None:
    """The one regular expression accepts exactly the instants datetime() does: every
    year's edge days (29 February decides the leap years, 0000 is no year), every month
    and day (in range or not) of each kind of year, and the time of day's edges."""
    edges = ["01-01", "01-31", "01-32", "02-28", "02-29", "02-30", "04-30", "04-31"]
    edges += ["00-01", "12-31", "13-01", "01-00", "12-32", "11-30", "11-31", "09-31"]
    texts = [f"{year:04}-{day}T00:00:00.000Z" for year in range(10000) for day in edges]
    kinds = [0, 1, 4, 100, 200, 400, 1600, 1700, 1900, 2000, 2023, 2024, 2100, 9996, 9999]
    texts += [
        f"{year:04}-{month:02}-{day:02}T12:30:30.500Z"
        for year in kinds
        for month in range(20)
        for day in range(40)
    ]
    texts += [
        f"2024-02-29T{hour:02}:{minute:02}:{second:02}.000Z"
        for hour in range(30)
        for minute in (0, 59, 60, 99)
        for second in (0, 59, 60, 99)
    ]
    texts += ["2024-02-29T12:00:00.000z", "2024-02-29 12:00:00.000Z", "2024-02-29T12:00:00Z"]
    texts += [
        "12024-02-29T12:00:00.000Z",
        "2024-2-29T12:00:00.000Z",
        "\uff12024-02-29T12:00:00.000Z",
    ]
    texts += ["2024-02-29T12:00:00.000Z\n", "2024-02-29T12:00:00.0000Z", ""]
    accepted = 0
    for text in texts:
        expected = _semantic._is_instant(text)
        assert _quick_checks._instant(text) is expected, text
        accepted += expected
    # Not vacuous: both answers, and every leap year of 0001-9999 among the accepted.
    assert accepted > 10000 * 8 // 2
    assert len(texts) - accepted > 10000 * 4


def _bundle(spec: dict[str, Any], protocol: dict[str, Any] | None) -> dict[str, Any]:
    """The published example with a generated run spec and protocol measurement."""
    doc: dict[str, Any] = json.loads((FIXTURES / "liger-jsd-forward-torch-b200.json").read_text())
    run_spec = doc["run"]["spec"]
    for key in ("status", "observedAt", "timing", "measurements"):
        run_spec.pop(key, None)
    run_spec.update(spec)
    if protocol is not None:
        doc["protocol"]["spec"]["measurement"].update(protocol["spec"]["measurement"])
    return doc


def _full_path_only() -> pytest.MonkeyPatch:
    """Validation with the quick pass turned off: every record goes through the table."""
    patch = pytest.MonkeyPatch()
    patch.setattr(_quick_checks, "passes", lambda run, protocol: False)
    return patch


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=run_spec, protocol=protocol)
def test_quick_and_full_paths_agree_on_generated_records(
    spec: dict[str, Any], protocol: dict[str, Any] | None
) -> None:
    """Validation gives the same problems with the quick pass as with the table alone, and
    the quick bundle reader accepts only what the full path finds valid, with its value.

    A behavioural test in place of pinning each check's source: a check changed without
    teaching the quick pass shows up here as two answers for one record.
    """
    doc = _bundle(spec, protocol)
    text = json.dumps(doc)
    quick = validation.validate(doc)
    quick_text = validation.validate(text)
    read = BundleReader().read(text)
    patch = _full_path_only()
    try:
        full = validation.validate(doc)
        full_text = validation.validate(text)
    finally:
        patch.undo()
    assert quick == full
    assert quick_text == full_text
    if read is not None:
        assert full == []
        assert read == doc


def test_generated_records_reach_both_answers() -> None:
    """The generator makes valid records the quick pass takes and invalid ones: the
    agreement above is not tested on one kind of record only."""
    seen = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(spec=run_spec, protocol=protocol)
    def probe(spec: dict[str, Any], protocol: dict[str, Any] | None) -> None:
        doc = _bundle(spec, protocol)
        seen.add(
            (
                "quick" if _quick_checks.passes(doc["run"], doc["protocol"]) else "table",
                not validation.validate(doc),
            )
        )

    probe()
    assert ("quick", True) in seen
    assert ("table", False) in seen


def test_untimed_memory_rows_take_the_quick_pass() -> None:
    """Liger's memory rows (a protocol that timed nothing, memory in MiB) pass quickly; a
    duration or a timing under such a protocol is left to the table, which reports it."""
    protocol = {"spec": {"measurement": {"timer": "not_applicable", "primaryStatistic": "median"}}}
    memory = [
        {"metric": "memory", "statistic": s, "unit": "MiB", "value": 256.5}
        for s in ("median", "p20", "p80")
    ]
    run = {"spec": {"status": "passed", "observedAt": "2026-05-27T17:14:29.000Z"}}
    run["spec"]["measurements"] = memory
    assert _quick_checks.passes(run, protocol)
    timed = json.loads(json.dumps(run))
    timed["spec"]["measurements"].append(
        {"metric": "latency", "statistic": "median", "unit": "ms", "value": 1.5}
    )
    assert not _quick_checks.passes(timed, protocol)
    assert _problems(timed, protocol)
    with_timing = json.loads(json.dumps(run))
    with_timing["spec"]["timing"] = {"latencyNs": {"median": 5}, "primaryStatistic": "median"}
    assert not _quick_checks.passes(with_timing, protocol)
    assert _problems(with_timing, protocol)


_RANKED = ["min", "p5", "p20", "median", "p80", "max"]
_WHOLE = [0, 1, 2, 999, 1000, 1001, 2**52 - 1, 2**52, 2**53 - 1]
_PLAIN_FLOATS = [0.0, 0.1, 0.30000000000000004, 0.3, 999.5, 1000.0, 1000.5, 1e-7, 1e308]
plain_measurement = st.fixed_dictionaries(
    {
        "metric": st.sampled_from(["latency", "latency", "memory", "bandwidth", "errors"]),
        "statistic": st.sampled_from([*_RANKED, "mean"]),
        "unit": st.sampled_from(["ns", "ns", "ms", "MiB", "GiB", "GB/s", "1"]),
        "value": st.sampled_from([*_WHOLE, *_PLAIN_FLOATS]),
    }
)
plain_spec = st.fixed_dictionaries(
    {"status": st.just("passed"), "observedAt": st.just("2026-05-27T17:14:29.000Z")},
    optional={
        "timing": st.fixed_dictionaries(
            {
                "latencyNs": st.dictionaries(
                    st.sampled_from([*_RANKED, "mean"]), st.sampled_from(_WHOLE), min_size=1
                ),
                "primaryStatistic": st.just("median"),
            }
        ),
        "measurements": st.lists(plain_measurement, max_size=4),
    },
)


def _plain(spec: dict[str, Any], *, untimed: bool = False) -> bool:
    latency = spec["timing"]["latencyNs"] if "timing" in spec else {}
    return _quick_checks._plain_values(spec, latency, untimed)


@settings(max_examples=4000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=plain_spec, untimed=st.booleans())
def test_plain_values_agree_with_the_table(spec: dict[str, Any], untimed: bool) -> None:
    """The shortcut for values that compare as plain numbers says "no problem" only where
    the table finds none (integers with and without latencyNs' half-nanosecond slack,
    ties, a measured median, near 2^52, floats in one unit whose products round, a
    protocol that timed nothing)."""
    if "timing" in spec:
        spec["timing"]["latencyNs"].setdefault("median", 1000)
    if untimed:
        spec.pop("timing", None)
    protocol = {
        "spec": {
            "measurement": {
                "timer": "not_applicable" if untimed else "cuda_events",
                "primaryStatistic": "median",
            }
        }
    }
    run = {"spec": spec}
    if _plain(spec, untimed=untimed):
        assert _problems(run, protocol) == []
        assert _quick_checks.passes(run, protocol)


def test_plain_values_take_the_common_records_and_leave_the_rest() -> None:
    """Not vacuous: it takes the records it is for and leaves the others to the general
    pass, which has the last word."""
    spec: dict[str, Any] = {
        "timing": {"latencyNs": {"median": 1000}},
        "measurements": [
            {"metric": "latency", "statistic": "p20", "unit": "ns", "value": 1000},
            {"metric": "latency", "statistic": "p80", "unit": "ns", "value": 1001},
            {"metric": "bandwidth", "statistic": "median", "unit": "GB/s", "value": 25.5},
        ],
    }
    assert _plain(spec)
    for where, value in [("p20", 1001), ("p80", 999), ("p20", 1000.0), ("p20", 2**52)]:
        changed = json.loads(json.dumps(spec))
        changed["measurements"][0 if where == "p20" else 1]["value"] = value
        assert not _plain(changed), (where, value)
    twice = json.loads(json.dumps(spec))
    twice["measurements"].append(dict(twice["measurements"][2]))
    assert not _plain(twice)
    with_mean = json.loads(json.dumps(spec))
    with_mean["timing"]["latencyNs"]["mean"] = 1000
    assert not _plain(with_mean)
    # Liger's memory rows: three statistics in MiB under a protocol that timed nothing.
    memory: dict[str, Any] = {
        "measurements": [
            {"metric": "memory", "statistic": s, "unit": "MiB", "value": v}
            for s, v in (("median", 256.5), ("p20", 256.25), ("p80", 300.0))
        ]
    }
    assert _plain(memory, untimed=True)
    memory["measurements"][1]["value"] = 256.75
    assert not _plain(memory, untimed=True)
    mixed = {"measurements": [*spec["measurements"][:1], {**spec["measurements"][1], "unit": "us"}]}
    assert not _plain(mixed)
