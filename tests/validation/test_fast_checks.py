"""The semantic checks' one-walk verdict: it says "no problem" only where the table finds none.

``_fast.checks.passes`` is held to the table (``_semantic.CHECKS``) on generated runs,
protocols and conditions; the plain path (``KERNELINDEX_STRICT_READ=1``, the table for
every run) is held to the same problems.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk import validation
from kernelindex_sdk._base.units import UNITS
from kernelindex_sdk.validation import _fast, _semantic
from kernelindex_sdk.validation._store_rules import STORE_CHECKS

FIXTURES = Path(__file__).parent.parent / "fixtures"
passes = _fast.passes

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
            # Past 2^53 too: the store's 64-bit columns end at 2^63 - 1.
            st.sampled_from(
                [v for v in _VALUES if type(v) is int and v < 2**53] + [2**63 - 1, 2**63]
            ),
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
sampled = st.fixed_dictionaries(
    {
        "min": st.sampled_from([0, 1, 1.5, 1980]),
        "median": st.sampled_from([0, 1, 1.5, 1980]),
        "max": st.sampled_from([0, 1, 1.5, 1980, 2**60]),
    }
)
conditions = st.fixed_dictionaries(
    {
        "gpu": st.fixed_dictionaries(
            {"samples": st.just(12)},
            optional={
                "smClockMhz": sampled,
                "powerW": sampled,
                "maxSmClockMhz": st.just(1980),
                "throttleReasons": st.just(["SwPowerCap"]),
            },
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
    optional={
        "timing": timing,
        "measurements": st.lists(measurement, max_size=5),
        "conditions": conditions,
    },
)
commit_time = st.none() | st.sampled_from(
    [
        "2026-05-27T17:14:29.000Z",
        "2026-05-27T17:14:29Z",
        "2026-05-27T19:14:29.000+02:00",
        "2026-02-30T00:00:00.000Z",
        "yesterday",
    ]
)


def _run(spec: dict[str, Any], when: str | None) -> dict[str, Any]:
    notes = {} if when is None else {_semantic.COMMIT_TIME: when}
    return {"spec": spec, "metadata": {"name": "r", "annotations": notes}}


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=run_spec, protocol=protocol, when=commit_time)
def test_passes_only_where_the_table_finds_nothing(
    spec: dict[str, Any], protocol: dict[str, Any] | None, when: str | None
) -> None:
    """Held on generated runs: every check's rules, their edges (half a nanosecond, equal
    values in two units, 2^52, a protocol that timed nothing, the calendar), the run's
    conditions and its commit time."""
    run = _run(spec, when)
    if passes(run, protocol):
        assert _problems(run, protocol) == []


def _store_problems(run: dict[str, Any]) -> list[Any]:
    view = _semantic.RecordView(run=run)
    return [p for check in STORE_CHECKS for p in check(view)]


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=run_spec, protocol=protocol, when=commit_time)
def test_passes_only_where_the_store_s_rules_find_nothing(
    spec: dict[str, Any], protocol: dict[str, Any] | None, when: str | None
) -> None:
    """The reader applies the store's rules only where ``passes`` said False: held on
    generated runs with latencies up to, at and past the 64-bit columns, in every unit."""
    run = _run(spec, when)
    if passes(run, protocol):
        assert _store_problems(run) == []


def test_the_generated_runs_reach_the_store_s_rules() -> None:
    """Not vacuous: some generated runs break the store's rules, some do not."""
    seen = set()

    # Derandomized: the same examples on every run, so what they reach cannot flake.
    @settings(max_examples=600, deadline=None, database=None, derandomize=True)
    @given(spec=run_spec, protocol=protocol, when=commit_time)
    def probe(spec: dict[str, Any], protocol: dict[str, Any] | None, when: str | None) -> None:
        seen.add(bool(_store_problems(_run(spec, when))))

    probe()
    assert seen == {True, False}


def test_the_generated_runs_reach_both_answers() -> None:
    """Not vacuous: the generator makes runs the pass takes (with conditions and a commit
    time among them) and runs it leaves to the table."""
    seen = set()

    # Derandomized: the same examples on every run, so what they reach cannot flake.
    @settings(max_examples=600, deadline=None, database=None, derandomize=True)
    @given(spec=run_spec, protocol=protocol, when=commit_time)
    def probe(spec: dict[str, Any], protocol: dict[str, Any] | None, when: str | None) -> None:
        run = _run(spec, when)
        seen.add((passes(run, protocol), "conditions" in spec, when is not None))

    probe()
    assert {(True, True, True), (True, False, False), (False, True, True)} <= seen


def _records() -> list[dict[str, Any]]:
    lines = (FIXTURES / "h200-jsd-sweep.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def _with_conditions(doc: dict[str, Any]) -> dict[str, Any]:
    """A harness bundle as the harness now writes it: the GPU's state and provenance."""
    doc = json.loads(json.dumps(doc))
    doc["run"]["spec"]["conditions"] = {
        "gpu": {
            "samples": 12,
            "smClockMhz": {"min": 1965, "median": 1980, "max": 1980},
            "powerW": {"min": 210.5, "median": 402.25, "max": 455},
            "temperatureC": {"min": 38, "median": 41, "max": 43},
            "throttleReasons": [],
        }
    }
    doc["run"]["metadata"].setdefault("annotations", {})[_semantic.COMMIT_TIME] = (
        "2026-11-30T10:00:00.000Z"
    )
    return doc


def test_common_records_take_the_pass(example: dict[str, Any]) -> None:
    """The published example and our H200 results, with and without the GPU's state and
    a commit time: the pass is not always False."""
    records = [example, *_records()]
    records += [_with_conditions(doc) for doc in records]
    assert len(records) > 20
    for doc in records:
        assert validation.validate(doc) == []
        assert passes(doc["run"], doc.get("protocol"))
        assert passes(doc["run"], None)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("timing.latencyNs.p20", 10**12),
        ("timing.primaryStatistic", "p80"),
        ("observedAt", "2026-02-30T00:00:00.000Z"),
        ("observedAt", "2026-05-27T17:14:60.000Z"),
        ("status", "failed"),
        ("conditions.gpu.smClockMhz.min", 1990),
        ("conditions.gpu.powerW.max", 400),
    ],
)
def test_a_problem_is_left_to_the_table(example: dict[str, Any], where: str, value: Any) -> None:
    doc = _with_conditions(example)
    spec = doc["run"]["spec"]
    *parents, key = where.split(".")
    for part in parents:
        spec = spec[part]
    spec[key] = value
    assert not passes(doc["run"], doc["protocol"])
    assert validation.validate(doc) != []


@pytest.mark.parametrize("when", ["2026-05-27T17:14:29Z", "2026-05-27T19:14:29.000+02:00", "x"])
def test_a_commit_time_not_in_the_published_form_is_a_problem_of_every_reader(
    example: dict[str, Any], when: str
) -> None:
    """The format gives the annotation observedAt's form (docs/format.md): validate refuses
    any other, as ingest did alone before."""
    example["run"]["metadata"]["annotations"] = {_semantic.COMMIT_TIME: when}
    assert not passes(example["run"], example["protocol"])
    (problem,) = validation.validate(example)
    assert problem.code == "commit-time"
    assert problem.pointer == "/run/metadata/annotations/kernelindex.dev~1commit-time"
    assert problem.message.endswith(f"got {when!r}")


def test_a_new_check_turns_the_pass_off(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert passes(example["run"], example["protocol"])
    monkeypatch.setattr(_semantic, "CHECKS", (*_semantic.CHECKS, _semantic.check_digests))
    assert not passes(example["run"], example["protocol"])


def test_untimed_memory_rows_take_the_pass() -> None:
    """Liger's memory rows (a protocol that timed nothing, memory in MiB) pass; a duration
    or a timing under such a protocol is left to the table, which reports it."""
    protocol = {"spec": {"measurement": {"timer": "not_applicable", "primaryStatistic": "median"}}}
    memory = [
        {"metric": "memory", "statistic": s, "unit": "MiB", "value": 256.5}
        for s in ("median", "p20", "p80")
    ]
    run = _run({"status": "passed", "observedAt": "2026-05-27T17:14:29.000Z"}, None)
    run["spec"]["measurements"] = memory
    assert passes(run, protocol)
    timed = json.loads(json.dumps(run))
    timed["spec"]["measurements"].append(
        {"metric": "latency", "statistic": "median", "unit": "ns", "value": 15}
    )
    assert not passes(timed, protocol)
    assert _problems(timed, protocol)
    with_timing = json.loads(json.dumps(run))
    with_timing["spec"]["timing"] = {"latencyNs": {"median": 5}, "primaryStatistic": "median"}
    assert not passes(with_timing, protocol)
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


@settings(max_examples=4000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=plain_spec, untimed=st.booleans())
def test_plain_values_pass_only_where_the_table_finds_nothing(
    spec: dict[str, Any], untimed: bool
) -> None:
    """Values that compare as plain numbers (integers with and without latencyNs'
    half-nanosecond slack, ties, a measured median, near 2^52, floats in one unit whose
    products round, a protocol that timed nothing)."""
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
    run = _run(spec, None)
    if passes(run, protocol):
        assert _problems(run, protocol) == []


def test_plain_values_take_the_common_records_and_leave_the_rest() -> None:
    """Not vacuous: the pass takes the layouts it is for and leaves the others."""
    spec: dict[str, Any] = {
        "status": "passed",
        "observedAt": "2026-05-27T17:14:29.000Z",
        "timing": {"latencyNs": {"median": 1000}, "primaryStatistic": "median"},
        "measurements": [
            {"metric": "latency", "statistic": "p20", "unit": "ns", "value": 1000},
            {"metric": "latency", "statistic": "p80", "unit": "ns", "value": 1001},
            {"metric": "bandwidth", "statistic": "median", "unit": "GB/s", "value": 25.5},
        ],
    }
    assert passes(_run(spec, None), None)
    for where, value in [("p20", 1001), ("p80", 999), ("p20", 1000.0), ("p20", 2**52)]:
        changed = json.loads(json.dumps(spec))
        changed["measurements"][0 if where == "p20" else 1]["value"] = value
        assert not passes(_run(changed, None), None), (where, value)
    twice = json.loads(json.dumps(spec))
    twice["measurements"].append(dict(twice["measurements"][2]))
    assert not passes(_run(twice, None), None)
    with_mean = json.loads(json.dumps(spec))
    with_mean["timing"]["latencyNs"]["mean"] = 1000
    assert not passes(_run(with_mean, None), None)
    mixed = json.loads(json.dumps(spec))
    mixed["measurements"][1]["unit"] = "us"
    assert not passes(_run(mixed, None), None)


def test_instants_are_those_of_the_calendar() -> None:
    """observedAt's rule (the form, and the date by the calendar) accepts exactly the
    instants strptime does: every year's edge days (29 February decides the leap years,
    0000 is no year), every month and day (in range or not) of each kind of year, and
    the time of day's edges."""
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
        expected = _calendar_instant(text)
        assert _semantic._is_instant(text) is expected, text
        accepted += expected
    # Not vacuous: both answers, and every leap year of 0001-9999 among the accepted.
    assert accepted > 10000 * 8 // 2
    assert len(texts) - accepted > 10000 * 4


def _calendar_instant(text: str) -> bool:
    """The published form by the standard library's own reading of it."""
    if len(text) != 24 or not text.isascii() or text[-1] != "Z" or text[19] != ".":
        return False
    if not text[20:23].isdigit():
        return False
    try:
        datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return False
    return text[:4].isdigit() and text[5:7].isdigit() and text[8:10].isdigit()


def test_the_plain_path_gives_the_same_problems(
    example: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the switch on, every run goes through the table: the same verdicts."""
    docs = [_with_conditions(example), example]
    bad = _with_conditions(example)
    bad["run"]["spec"]["conditions"]["gpu"]["powerW"]["max"] = 1
    docs.append(bad)
    fast = [validation.validate(doc) for doc in docs]
    monkeypatch.setenv(_fast.STRICT_READ, "1")
    assert [validation.validate(doc) for doc in docs] == fast
    assert fast[-1][0].code == "sampled-range"
