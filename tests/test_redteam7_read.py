"""Red team of 0.6.1's read-path shortcuts: what they answer is what the full paths answer.

Checked against 0.6.0 (57e24a3) by running the same corpus through both: no difference
was found, so these tests pin the properties that held (the quick reader's verdicts,
problems and values equal the full check's on hostile texts, LF and CRLF, with a valid
tail cached before each; the one-regex calendar equals datetime's; the one-body quick
pass never passes a run the semantic table refuses).
"""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
from _records import bundle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelindex_sdk import digest, documents, dumps, validation
from kernelindex_sdk.validation import _quick_checks, _semantic

_BASE = dumps(bundle(p20=90000, p80=110000), indent=None)
_OBSERVED = '"2026-11-30T00:00:00.000Z"'
_DATES = [
    "2024-02-29", "2023-02-29", "2100-02-29", "2000-02-29", "1900-02-29", "2400-02-29",
    "2026-04-31", "2026-13-01", "2026-00-10", "2026-02-30", "2026-11-31", "2026-09-31",
    "2026-01-32", "2026-11-00", "0000-01-01", "0001-01-01", "9999-12-31", "0004-02-29",
]  # fmt: skip
_TIMES = ["T23:59:60.000Z", "T24:00:00.000Z", "T00:60:00.000Z", "T00:00:00.000Z", "T00:00:00Z"]
_NUMBERS = [
    "1e-6", "0.000001", "1.0e-6", "1E-6", "1e-06", "2.5e-6", "-1e-6", "9.999999999999999e-6",
    "0.0000015", "1e-7", "100000.0", "1e5", "4503599627370496", "4503599627370497",
    "9007199254740993", "9223372036854775807", "9223372036854775808", "9.223372036854776e18",
    "1e19", "1e16", "1e300", "-0", "-0.0", "0.0", "100000.5", "18446744073709551616",
]  # fmt: skip


def _mutations() -> list[str]:
    found = [_BASE.replace(_OBSERVED, f'"{d}{t}"') for d in _DATES for t in _TIMES[:4]]
    found += [_BASE.replace(_OBSERVED, f'"2026-11-30{t}"') for t in _TIMES]
    for n in _NUMBERS:
        found.append(_BASE.replace('"median":100000}', f'"median":{n}}}'))
        found.append(_BASE.replace('"value":90000', f'"value":{n}'))
        found.append(_BASE.replace('"unit":"ns","value":90000', f'"unit":"us","value":{n}'))
    for s in ['"x:1e-6"', '"1e-6"', '":1e-6,"', '"a,1e-6]"', '"\\ud800"', '"t\\u006frch"']:
        found.append(
            _BASE.replace(
                '"metadata":{"name":"test-run-0"}',
                f'"metadata":{{"name":"test-run-0","labels":{{"k":{s},{s}:"v"}}}}',
            )
        )
    found += [
        _BASE.replace('"status":"passed"', '"status":"passed","status":"failed"'),
        _BASE.replace('"status":"passed"', '"status":"failed","status":"passed"'),
        _BASE.replace('"median":100000}', '"median":NaN}'),
        _BASE.replace('"value":90000', '"value":Infinity'),
        _BASE.replace('{"run":', '{ "run":'),
        _BASE.replace('"nvidia-h200"}', '"nvidia-h200" }'),
        _BASE.replace(',"protocol":', ',"extra":1,"protocol":'),
        _BASE.replace('},"protocol":', '},"run":{},"protocol":', 1),
        _BASE.replace('"unit":"ns","value":90000', '"unit":"s","value":1e300'),
        _BASE + "\t",
        _BASE + "\f",
        "  \t",
    ]
    return found


def _results(path: Path, quick: bool) -> list[tuple[int | None, list[str], str]]:
    return [
        (r.document.line, [str(p) for p in r.problems], repr(r.value))
        for r in documents.check_documents([path], quick=quick)
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_quick_reader_answers_as_the_full_check_on_hostile_lines(
    tmp_path: Path, newline: str
) -> None:
    """Each hostile line follows a valid one of the same tail (the reader's cached tail
    is then reused), so the shortcut for the line before is tried on each."""
    lines = []
    for i, text in enumerate(_mutations()):
        lines.append(_BASE.replace("test-run-0", f"ok-{i}"))
        lines.append(text.replace("test-run-0", f"m-{i}"))
    path = tmp_path / "m.jsonl"
    path.write_bytes(newline.join(lines).encode("utf-8", "surrogatepass") + newline.encode())
    quick = _results(path, quick=True)
    assert len(quick) >= len(lines) - 1
    assert quick == _results(path, quick=False)


@pytest.mark.parametrize("year", [1, 4, 100, 400, 1900, 2000, 2024, 2100, 2400, 9996, 9999])
def test_observed_at_calendar_is_datetimes(year: int) -> None:
    for month in range(0, 14):
        for day in (0, 1, 28, 29, 30, 31, 32):
            text = f"{year:04d}-{month:02d}-{day:02d}T12:34:56.789Z"
            try:
                datetime.date(year, month, day)
                real = True
            except ValueError:
                real = False
            assert _quick_checks._instant(text) is real, text
            assert _semantic._is_instant(text) is real, text


_STATS = ["min", "p5", "p20", "median", "p80", "max", "mean", "p99"]
_UNITS = ["ns", "us", "ms", "s", "B", "GiB", "GB/s", "TB/s", "TFLOP/s", "1"]
_METRICS = ["latency", "memory", "bandwidth", "throughput", "occupancy"]
_VALUES = st.one_of(
    st.integers(-3, 3),
    st.integers(0, 2**53 + 5),
    st.sampled_from([2**52 - 1, 2**52, 2**52 + 1, 2**63, 0.5, 1.0, 1e-6, 1e300, 1e-308]),
    st.sampled_from([4503599627370495.5, 100000.0, 99999.99, 100000.4, 100000.5, 100000.6]),
    st.floats(0, 1e6, allow_nan=False),
)
_MEASUREMENT = st.fixed_dictionaries(
    {
        "metric": st.sampled_from(_METRICS),
        "statistic": st.sampled_from(_STATS),
        "unit": st.sampled_from(_UNITS),
        "value": _VALUES,
    }
)
_TEMPLATE = bundle(p20=90000, p80=110000)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    measurements=st.lists(_MEASUREMENT, max_size=7),
    latency=st.one_of(st.none(), st.dictionaries(st.sampled_from(_STATS), _VALUES, max_size=4)),
    primary=st.sampled_from(["median", "mean", "p20"]),
    timer=st.sampled_from(["cuda_events", "not_applicable"]),
    samples=st.one_of(st.none(), st.integers(0, 5)),
    least=st.one_of(st.none(), st.integers(0, 5)),
)
def test_the_one_body_quick_pass_never_passes_what_the_table_refuses(
    measurements: list[dict[str, Any]],
    latency: dict[str, Any] | None,
    primary: str,
    timer: str,
    samples: int | None,
    least: int | None,
) -> None:
    doc = copy.deepcopy(_TEMPLATE)
    spec = doc["run"]["spec"]
    spec["measurements"] = measurements
    if latency is None:
        spec.pop("timing", None)
    else:
        spec["timing"] = {"latencyNs": latency, "primaryStatistic": primary}
        if samples is not None:
            spec["timing"]["samples"] = samples
    method = doc["protocol"]["spec"]["measurement"]
    method["timer"], method["primaryStatistic"] = timer, primary
    if least is not None:
        method["minSamples"] = least
    spec["protocolDigest"] = digest.protocol_digest(doc["protocol"]["spec"])
    view = _semantic.RecordView(run=doc["run"], protocol=doc["protocol"], environment=None)
    refused = [p for check in _semantic.CHECKS for p in check(view)]
    if not refused and validation.validate(doc):
        return  # schema problems only: the quick pass is never asked
    assert not (_quick_checks.passes(doc["run"], doc["protocol"]) and refused)
