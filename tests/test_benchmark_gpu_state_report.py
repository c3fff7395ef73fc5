"""benchmarks/gpu_state_report.py: the spreads it reports are those of the records given."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _records import bundle

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(
        "gpu_state_report", BENCHMARKS / "gpu_state_report.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(provider: str, median: int, low: int, mid: int, high: int, *reasons: str) -> Any:
    record = bundle(provider, median)
    record["run"]["spec"]["conditions"] = {
        "gpu": {
            "samples": 11,
            "smClockMhz": {"min": low, "median": mid, "max": high},
            "throttleReasons": list(reasons),
        }
    }
    return record


def test_spreads_within_and_between_runs_and_degraded_points(
    script: ModuleType, tmp_path: Path
) -> None:
    sweeps = [
        [_run("torch", 100, 1980, 1980, 1980), _run("triton", 50, 1700, 1980, 1980)],
        [_run("torch", 102, 1950, 1960, 1980), _run("triton", 51, 1980, 1980, 1980, "SwPowerCap")],
    ]
    paths = []
    for i, records in enumerate(sweeps):
        path = tmp_path / f"sweep{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        paths.append(path)
    result = script.report(paths)
    torch_point = next(v for k, v in result["points"].items() if " torch " in k)
    assert torch_point["sm_clock_between_runs"] == pytest.approx(1980 / 1960)
    assert torch_point["sm_clock_within_run"] == pytest.approx(1980 / 1950)
    assert torch_point["latency_between_runs"] == pytest.approx(1.02)
    summary = result["summary"]
    assert summary["points"] == 2
    # triton: its clock fell to 86% in the first sweep, it throttled in the second.
    assert summary["degraded_points"] == 1
    assert summary["largest_sm_clock_spread_within_a_run"] == pytest.approx(1980 / 1700)
    assert [s["degraded"] for s in result["sweeps"]] == [1, 1]
    assert result["sweeps"][1]["throttle_reasons"] == ["SwPowerCap"]
