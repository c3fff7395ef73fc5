"""What the GPU's state looked like over replicate sweeps: throttling, and the SM clock's spread.

Reads the records of one or more sweeps made with sampling on (``kernelindex bench jsd``,
one JSON Lines file per sweep, same points) and writes, as JSON:

- per sweep: how many runs recorded a state, how many were degraded and why, the throttle
  reasons seen, the environment's settings and driver;
- per point (workload and implementation) across the sweeps: the SM clock's spread within
  each run (its largest sample over its smallest) and between runs (the largest of the
  runs' median SM clocks over the smallest), beside the spread of the timed medians;
- over all points: the largest of those spreads, and how many points were degraded.

    PYTHONPATH=src python3 benchmarks/gpu_state_report.py sweep1.jsonl sweep2.jsonl ... \\
        [--out report.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _results import write_results

from kernelindex_sdk.conditions import record_degraded_reason


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _key(record: dict[str, Any]) -> str:
    spec = record["run"]["spec"]
    params = spec.get("workload", {}).get("parameters", {})
    what = " ".join(f"{k}={params[k]}" for k in sorted(params))
    provider = spec.get("implementation", {}).get("provider", "?")
    return f"{spec.get('workload', {}).get('pass', '?')} {provider} {what}"


def _sweep(path: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    states = [r["run"]["spec"].get("conditions", {}).get("gpu") for r in records]
    recorded = [s for s in states if s is not None]
    degraded = [reason for r in records if (reason := record_degraded_reason(r)) is not None]
    environments = {json.dumps(r["environment"]["spec"], sort_keys=True) for r in records}
    return {
        "file": path.name,
        "runs": len(records),
        "with_state": len(recorded),
        "degraded": len(degraded),
        "degraded_reasons": sorted(set(degraded)),
        "throttle_reasons": sorted({x for s in recorded for x in s.get("throttleReasons", [])}),
        "readings_per_run": _range([s["samples"] for s in recorded]),
        "sm_clock_mhz": _range([v for s in recorded for v in _clock(s).values()]),
        "memory_clock_mhz": _range(
            [v for s in recorded for v in s.get("memoryClockMhz", {}).values()]
        ),
        "power_w": _range([s["powerW"]["max"] for s in recorded if "powerW" in s]),
        "power_limit_w": sorted({s["powerLimitW"] for s in recorded if "powerLimitW" in s}),
        "temperature_c": _range(
            [s["temperatureC"]["max"] for s in recorded if "temperatureC" in s]
        ),
        "environments": [json.loads(e) for e in sorted(environments)],
    }


def _clock(state: dict[str, Any]) -> dict[str, float]:
    return dict(state.get("smClockMhz", {}))


def _range(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _points(sweeps: list[list[dict[str, Any]]]) -> dict[str, Any]:
    by_key: dict[str, list[dict[str, Any]]] = {}
    for records in sweeps:
        for record in records:
            by_key.setdefault(_key(record), []).append(record)
    points = {}
    for key, runs in sorted(by_key.items()):
        states = [r["run"]["spec"].get("conditions", {}).get("gpu") for r in runs]
        clocks = [_clock(s) for s in states if s is not None and "smClockMhz" in s]
        medians = [
            r["run"]["spec"]["timing"]["latencyNs"]["median"]
            for r in runs
            if r["run"]["spec"].get("timing")
        ]
        points[key] = {
            "runs": len(runs),
            "sm_clock_within_run": max((c["max"] / c["min"] for c in clocks), default=None),
            "sm_clock_between_runs": (
                max(c["median"] for c in clocks) / min(c["median"] for c in clocks)
                if clocks
                else None
            ),
            "sm_clock_medians_mhz": [c["median"] for c in clocks],
            "latency_between_runs": max(medians) / min(medians) if medians else None,
            "degraded": [reason for r in runs if (reason := record_degraded_reason(r))],
        }
    return points


def report(paths: Sequence[Path]) -> dict[str, Any]:
    """The report of the sweeps in ``paths`` (one JSON Lines file each)."""
    sweeps = [_records(p) for p in paths]
    points = _points(sweeps)
    within = [p["sm_clock_within_run"] for p in points.values() if p["sm_clock_within_run"]]
    between = [p["sm_clock_between_runs"] for p in points.values() if p["sm_clock_between_runs"]]
    latency = [p["latency_between_runs"] for p in points.values() if p["latency_between_runs"]]
    return {
        "benchmark": "gpu_state_report",
        "sweeps": [_sweep(p, r) for p, r in zip(paths, sweeps, strict=True)],
        "summary": {
            "points": len(points),
            "degraded_points": sum(bool(p["degraded"]) for p in points.values()),
            "largest_sm_clock_spread_within_a_run": max(within, default=None),
            "largest_sm_clock_spread_between_runs": max(between, default=None),
            "largest_latency_spread_between_runs": max(latency, default=None),
        },
        "points": points,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweeps", nargs="+", type=Path, help="JSON Lines files, one per sweep")
    parser.add_argument("--out", type=Path, help="the report's JSON file (default stdout)")
    args = parser.parse_args(argv)
    write_results(report(args.sweeps), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
