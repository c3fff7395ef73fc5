"""The summary ``kernelindex bench`` prints: noisy and degraded medians marked, CPU timing said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _records import bundle

from kernelindex_sdk._analysis.bench_summary import (
    CPU_NOTE,
    DEGRADED_LEGEND,
    DEGRADED_MARK,
    NOISY_MARK,
    bench_summary,
    noisy_legend,
)
from kernelindex_sdk._base import noise as _noise
from kernelindex_sdk.report import summary_text

H200_SWEEP = Path(__file__).parents[1] / "fixtures" / "h200-jsd-sweep.jsonl"


def _point(provider: str, tokens: int, p20: int, p80: int, **kw: Any) -> dict[str, Any]:
    params = {"tokens": tokens, "dtype": "fp32"}
    return bundle(provider, (p20 + p80) // 2, p20, p80, params=params, **kw)


def _row(text: str, tokens: int) -> list[str]:
    """The cells of the table row of ``tokens`` (cells are two or more spaces apart)."""
    [line] = [line for line in text.splitlines() if line.split()[:1] == [str(tokens)]]
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def test_exactly_the_noisy_medians_are_marked_with_a_legend() -> None:
    records = [
        _point("torch", 16, 46_000, 26_600_000),  # the CPU run: noisy
        _point("triton", 16, 100_000, 110_000),  # 1.10 exactly: not noisy
        _point("torch", 64, 100_000, 110_001),  # just above: noisy
        _point("triton", 64, 100_000, 100_000),
    ]
    text = bench_summary(records)
    assert [c.endswith(f" {NOISY_MARK}") for c in _row(text, 16)[1:3]] == [True, False]
    assert [c.endswith(f" {NOISY_MARK}") for c in _row(text, 64)[1:3]] == [True, False]
    assert text.count(f" {NOISY_MARK}") == 2
    assert noisy_legend() in text.splitlines()
    assert noisy_legend().startswith(f"{NOISY_MARK} = p80/p20 above 1.1:")
    assert _noise.NOISY_ANNOTATION in noisy_legend()
    # Speedups are the report's: the marks change no number.
    assert _row(text, 16)[-1] == _row(summary_text(records), 16)[-1]


def test_a_clean_gpu_sweep_gets_no_mark_no_legend_and_no_cpu_note() -> None:
    records = [json.loads(line) for line in H200_SWEEP.read_text().splitlines()]
    text = bench_summary(records)
    assert NOISY_MARK not in text
    assert noisy_legend() not in text
    assert CPU_NOTE not in text
    # Without marks the tables are the report's own.
    assert text == summary_text(records)


def test_cpu_timed_runs_are_said_to_be() -> None:
    text = bench_summary([_point("torch", 16, 100, 100, timer="wall_clock")])
    assert text.splitlines()[-1] == CPU_NOTE
    assert "timed on the CPU" in CPU_NOTE
    gpu = bench_summary([_point("torch", 16, 100, 100, timer="cuda_events")])
    assert CPU_NOTE not in gpu


def test_failed_and_missing_points_are_never_marked() -> None:
    records = [
        _point("torch", 16, 100, 500),
        _point("torch", 64, 100, 100),
        bundle("triton", params={"tokens": 16, "dtype": "fp32"}, failed="RuntimeError: boom"),
    ]
    text = bench_summary(records)
    cells = _row(text, 16)
    assert cells[1].endswith(NOISY_MARK)
    assert cells[2] == "failed"
    assert _row(text, 64)[2] == "-"
    assert text.count(f" {NOISY_MARK}") == 1


def test_nothing_to_show() -> None:
    assert bench_summary([]) == "no runs\n"


def _throttled(record: dict[str, Any], *reasons: str, low: int = 1980) -> dict[str, Any]:
    record["run"]["spec"]["conditions"] = {
        "gpu": {
            "samples": 9,
            "smClockMhz": {"min": low, "median": 1980, "max": 1980},
            "throttleReasons": sorted(reasons),
        }
    }
    return record


def test_exactly_the_degraded_medians_are_marked_each_with_its_reason() -> None:
    records = [
        _point("torch", 16, 100_000, 100_000),
        _throttled(_point("triton", 16, 50_000, 50_000), "GpuIdle"),  # idle alone: fit
        _throttled(_point("torch", 64, 100_000, 100_000), "SwPowerCap"),
        _throttled(_point("triton", 64, 50_000, 50_000), low=1410),
    ]
    text = bench_summary(records)
    marked = [[c.endswith(f" {DEGRADED_MARK}") for c in _row(text, t)[1:3]] for t in (16, 64)]
    assert marked == [[False, False], [True, True]]
    lines = text.splitlines()
    assert DEGRADED_LEGEND in lines
    title = "jsd forward · dtype=fp32 · NVIDIA H200"
    assert f"degraded: torch at tokens=64 ({title}): throttled (SwPowerCap)" in lines
    assert (
        f"degraded: triton at tokens=64 ({title}): SM clock 1410-1980 MHz, its smallest 71% of"
        " its largest (below 90%)"
    ) in lines
    # Speedups are the report's: the marks change no number.
    assert _row(text, 64)[-1] == _row(summary_text(records), 64)[-1]


def test_a_sweep_that_recorded_a_steady_state_gets_no_degraded_mark() -> None:
    records = [_throttled(_point(p, 16, 100_000, 100_000)) for p in ("torch", "triton")]
    text = bench_summary(records)
    assert DEGRADED_MARK not in text
    assert text == summary_text(records)
