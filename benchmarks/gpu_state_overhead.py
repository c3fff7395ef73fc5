"""What sampling the GPU's state costs the timed medians: the same JSD points, on and off.

Each point of a JSD sweep (providers x tokens x dtypes, the loss alone and a training step)
is timed as the harness times it (``timing.time_cuda_events``, and ``time_cuda_graph``
with ``--graph``), in one process, ROUNDS times with the GPU-state sampler around the timed
loop and ROUNDS times without, alternating which goes first in each round so that a drift
of the GPU or the host falls on both alike. Per point: the median of the rounds' medians
with sampling on over the same without (``ratio``; the issue's bound is at most 1.01) and
the spread of the off rounds alone (``off_spread``: max / min of their medians), the noise
the ratio is read against. The sampler's own result (readings per loop, SM clock range,
throttle reasons, whether the point was degraded) is kept for every "on" round.

    PYTHONPATH=src python3 benchmarks/gpu_state_overhead.py --out results.json \\
        [--impl torch,triton] [--tokens 1024,4096] [--dtype fp32,bf16] [--rounds 5] \\
        [--interval 0.01] [--graph]

About 2 minutes on an H100 or H200 with the defaults. Needs a CUDA GPU and nvidia-ml-py.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
from _results import write_results

from kernelindex_sdk import __version__
from kernelindex_sdk.conditions import DEFAULT_INTERVAL_S, degraded_reason, sample_gpu
from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.device import nvml_device
from kernelindex_sdk.reference_kernels.jsd import sweep

MIN_SAMPLES = 100
BOUND = 1.01


def _timed(provider: str, case: sweep.JSDCase, device: torch.device) -> tuple[Any, list[Any]]:
    """The call the harness times for a point, and the tensors whose grads it resets."""
    fn, _ = sweep._provider(provider, case)
    x, y = sweep._inputs(case, device, 0)
    x.requires_grad_(case.input_grad)
    return sweep.step(fn, x, y, input_grad=case.input_grad), [x] if case.input_grad else []


def _measure(
    call: Any, grads: list[Any], timer: str, flush: Any, gpu: str | int, interval: float, on: bool
) -> tuple[int, dict[str, Any] | None]:
    """One timed loop: its median in ns, and the sampler's result when sampling was on."""
    sampler = sample_gpu(gpu, interval_s=interval) if on else None
    if timer == "cuda-graph":
        measured = timing.time_cuda_graph(call, grads, MIN_SAMPLES, around=sampler)
    else:
        measured = timing.time_cuda_events(call, grads, MIN_SAMPLES, flush=flush, around=sampler)
    return measured.quantile_ns(0.5), (sampler.result if sampler is not None else None)


def _point(
    provider: str,
    case: sweep.JSDCase,
    timer: str,
    rounds: int,
    flush: Any,
    gpu: str | int,
    interval: float,
    device: torch.device,
) -> dict[str, Any]:
    call, grads = _timed(provider, case, device)
    # Compile, autotune and warm up outside the comparison.
    _measure(call, grads, timer, flush, gpu, interval, on=False)
    off: list[int] = []
    on: list[int] = []
    states: list[dict[str, Any] | None] = []
    for i in range(rounds):
        for sampled in (i % 2 == 0, i % 2 != 0):
            median, state = _measure(call, grads, timer, flush, gpu, interval, on=sampled)
            (on if sampled else off).append(median)
            if sampled:
                states.append(state)
    gpu_states = [s["gpu"] for s in states if s is not None]
    return {
        "provider": provider,
        "tokens": case.tokens,
        "vocab": case.vocab,
        "dtype": case.dtype,
        "input_grad": case.input_grad,
        "timer": timer,
        "off_ns": off,
        "on_ns": on,
        "ratio": statistics.median(on) / statistics.median(off),
        "off_spread": max(off) / min(off),
        "readings_per_loop": [g["samples"] for g in gpu_states],
        "sm_clock_mhz": [
            [g["smClockMhz"]["min"], g["smClockMhz"]["max"]]
            for g in gpu_states
            if "smClockMhz" in g
        ],
        "throttle_reasons": sorted({r for g in gpu_states for r in g.get("throttleReasons", [])}),
        "degraded": [
            reason
            for s in states
            if s is not None and (reason := degraded_reason({"conditions": s})) is not None
        ],
        "unrecorded_rounds": sum(s is None for s in states),
    }


def _summary(points: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for timer in sorted({p["timer"] for p in points}):
        ratios = [p["ratio"] for p in points if p["timer"] == timer]
        spreads = [p["off_spread"] for p in points if p["timer"] == timer]
        out[timer] = {
            "points": len(ratios),
            "geomean_ratio": math.exp(statistics.fmean(math.log(r) for r in ratios)),
            "median_ratio": statistics.median(ratios),
            "max_ratio": max(ratios),
            "min_ratio": min(ratios),
            "median_off_spread": statistics.median(spreads),
            f"points_above_{BOUND}": sum(r > BOUND for r in ratios),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the results' JSON file (default stdout)")
    parser.add_argument("--impl", default="torch,triton")
    parser.add_argument("--tokens", default="1024,4096")
    parser.add_argument("--vocab", default="128256")
    parser.add_argument("--dtype", default="fp32,bf16")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_S)
    parser.add_argument("--graph", action="store_true", help="the CUDA-graph timer too")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("gpu_state_overhead.py needs a CUDA GPU", file=sys.stderr)
        return 2
    device = torch.device("cuda", torch.cuda.current_device())
    gpu = nvml_device(device)
    if gpu is None:
        print("cannot tell NVML's device for", device, file=sys.stderr)
        return 2
    cases = sweep.cases(
        [int(t) for t in args.tokens.split(",")],
        [int(v) for v in args.vocab.split(",")],
        args.dtype.split(","),
        input_grad=(False, True),
    )
    timers = ["cuda-events", "cuda-graph"] if args.graph else ["cuda-events"]
    flush = timing.ReadFlush(device)
    started = time.monotonic()
    points = []
    for case in cases:
        for provider in args.impl.split(","):
            for timer in timers:
                point = _point(
                    provider, case, timer, args.rounds, flush, gpu, args.interval, device
                )
                points.append(point)
                print(
                    f"{provider} {case.slug()} {timer}: on/off {point['ratio']:.4f}"
                    f" (off spread {point['off_spread']:.4f})",
                    file=sys.stderr,
                )
            torch.cuda.empty_cache()
    import triton

    results = {
        "benchmark": "gpu_state_overhead",
        "kernelindex_sdk": __version__,
        "gpu": torch.cuda.get_device_name(device),
        "torch": str(torch.__version__),
        "triton": str(triton.__version__),
        "python": platform.python_version(),
        "interval_s": args.interval,
        "rounds": args.rounds,
        "bound": BOUND,
        "seconds": round(time.monotonic() - started, 1),
        "summary": _summary(points),
        "points": points,
    }
    write_results(results, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
