"""Timing faithfulness of one worker per GPU: per-point medians and wall time, alone and together.

The JSD sweep's points, (provider, case) pairs, go through
kernelindex_sdk.reference_kernels.workers.run_on_devices three ways, each in fresh
worker processes:

1. ``one``: every point on GPU 0 alone (what a plain ``bench jsd`` does), wall time W1;
2. ``alone``: each GPU's share (the same cost-balanced split as below) on its GPU, one
   GPU at a time: the per-point baseline on the same physical GPU;
3. ``together``: the shares on all GPUs at once (``--devices all``), wall time Wn.

It reports each point's median together / alone (goal: within 2%), Wn / W1 (goal:
<= 0.6 on two GPUs), the noise floor (``alone`` against ``one`` for GPU 0's share, both
alone on the same GPU), and which GPU each worker saw (pinning).

    PYTHONPATH=src python3 benchmarks/sweep_devices.py --out DIR [--impl torch,triton]

Nothing at module level imports torch: spawned workers import this file first, and the
pinning (CUDA_VISIBLE_DEVICES) must be set before torch initializes CUDA.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kernelindex_sdk.documents import JSONLinesWriter, write_json
from kernelindex_sdk.reference_kernels.workers import Device, cuda_devices, run_on_devices
from kernelindex_sdk.sharding import partition


def jsd_points(points: Sequence[tuple[str, Any]], device: str) -> Iterator[Any]:
    """The worker: run each (provider, case) on ``device`` through the sweep's run_case."""
    import torch

    from kernelindex_sdk.reference_kernels.jsd import sweep

    for provider, case in points:
        yield sweep.run_case(provider, case, torch.device(device))
        torch.cuda.empty_cache()


def probe(points: Sequence[int], device: str) -> Iterator[dict[str, Any]]:
    """The worker for the pinning check: what this process sees."""
    import os

    import torch

    props = torch.cuda.get_device_properties(device)
    for _ in points:
        yield {
            "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "device_count": torch.cuda.device_count(),
            "uuid": str(props.uuid),
        }


def _failed(point: Any, device: Device, reason: str) -> dict[str, Any]:
    return {"failed": True, "device": device.name, "reason": reason}


def _cost(point: tuple[str, Any]) -> float:
    from kernelindex_sdk.reference_kernels.jsd import sweep

    # The same cost as `kernelindex bench jsd --devices`, so the same shares.
    return sweep.point_cost(point)


def _key(record: Any) -> str:
    spec = record.run.spec
    p = spec.workload.parameters
    grad = "-grad" if p["inputGrad"] else ""
    return f"{spec.implementation.provider} {p['dtype']} {p['tokens']}x{p['vocab']}{grad}"


def _run(
    points: Sequence[tuple[str, Any]], devices: list[Device], records: JSONLinesWriter, label: str
) -> tuple[float, dict[str, dict[str, Any]]]:
    start = time.perf_counter()
    found: dict[str, dict[str, Any]] = {}
    it = run_on_devices(jsd_points, points, devices, failed=_failed, cost=_cost)
    with contextlib.closing(it):
        for finished in it:
            if finished.worker_failed:
                found[f"{finished.point[0]} {finished.point[1].slug()}"] = finished.record
                continue
            record = finished.record
            records.write(record)
            spec = record.run.spec
            median = spec.timing.latency_ns.median if spec.timing else None
            found[_key(record)] = {
                "device": finished.device,
                "status": spec.status,
                "median_ns": median,
            }
            print(f"{label:8} {finished.device} {_key(record):32} {median}", flush=True)
    return time.perf_counter() - start, found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--impl", default="torch,triton")
    parser.add_argument("--gpus", type=int, default=2)
    args = parser.parse_args()
    from kernelindex_sdk.reference_kernels.jsd import sweep

    defaults = sweep.GPU_DEFAULTS
    cases = sweep.cases(defaults.tokens, defaults.vocab, defaults.dtypes)
    points = sweep.points(args.impl.split(","), cases)
    devices = cuda_devices(list(range(args.gpus)))
    args.out.mkdir(parents=True, exist_ok=True)
    # The driver's tool, wherever the host put it.
    query = ["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"]
    smi = subprocess.run(  # noqa: S603
        query,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    with contextlib.closing(
        run_on_devices(probe, [0] * len(devices), devices, failed=_failed, decode=json.loads)
    ) as it:
        pinning = [{"device": f.device, **f.record} for f in it]
    print(json.dumps({"nvidia-smi": smi, "pinning": pinning}, indent=1), flush=True)

    shares = partition(points, len(devices), cost=_cost)
    with JSONLinesWriter(args.out / "sweep_devices_records.jsonl") as records:
        wall_one, one = _run(points, devices[:1], records, "one")
        alone: dict[str, dict[str, Any]] = {}
        wall_alone = 0.0
        for device, share in zip(devices, shares, strict=True):
            seconds, found = _run(share, [device], records, "alone")
            wall_alone += seconds
            alone.update(found)
        wall_together, together = _run(points, devices, records, "together")

    rows = []
    for key in sorted(together):
        t, a, o = together[key], alone.get(key, {}), one.get(key, {})
        row = {"point": key, "device": t.get("device"), "together_ns": t.get("median_ns")}
        row["alone_ns"] = a.get("median_ns")
        row["one_gpu_ns"] = o.get("median_ns")
        if row["together_ns"] and row["alone_ns"]:
            row["together_vs_alone"] = row["together_ns"] / row["alone_ns"]
        if row["alone_ns"] and row["one_gpu_ns"] and row["device"] == devices[0].name:
            row["noise_alone_vs_one"] = row["alone_ns"] / row["one_gpu_ns"]
        rows.append(row)
    ratios = [r["together_vs_alone"] for r in rows if "together_vs_alone" in r]
    summary = {
        "gpus": len(devices),
        "points": len(points),
        "nvidia_smi": smi,
        "pinning": pinning,
        "wall_s": {"one_gpu": wall_one, "alone_sum": wall_alone, "together": wall_together},
        "wall_together_vs_one_gpu": wall_together / wall_one,
        "points_within_2pct": sum(abs(r - 1) <= 0.02 for r in ratios),
        "max_abs_deviation": max((abs(r - 1) for r in ratios), default=None),
        "rows": rows,
    }
    write_json(args.out / "sweep_devices_h200x2.json", summary)
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    for r in rows:
        print(
            f"{r['point']:34} {r['device']}  together/alone {r.get('together_vs_alone', 0):.4f}"
            f"  noise {r.get('noise_alone_vs_one', float('nan')):.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
