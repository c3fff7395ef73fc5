"""Where the JSD kernel's host time goes, with and without the gradient: one GPU, one process.

Why this exists: ``jsd_forward.py``'s H200 run at 311cae2 reports 49-54 us of host time per
loss-only call but 240-510 us "with the gradient", and its training step at bf16 1024 x
128256 took 1.27x its CUDA-graph time as called; an enqueue-only probe on an H100 measured
58-88 us with the gradient. This probe measures each candidate cause on the current code:

- ``queue_depth``: host us per torch launch in chunks of 100 queued behind the GPU's
  sleep, up to 4,000: whether a deep queue makes launches wait (then a batch of host
  figures would hold GPU time).
- ``host``: host us per call, enqueue-only (``_results.host_us``: batches issued while the
  GPU sleeps; ``outlasted`` counts batches that ran past the sleep), at ``--tokens`` x
  ``--vocab``, float32 and bfloat16: the loss alone, the forward with the gradient, a whole
  training step (``x.grad = None``, forward, ``loss.backward()``), the backward alone (of
  losses made beforehand), and the parts: our launch path without autograd, Triton's
  public launch with the arguments prepared, the same launch through a one-config
  ``triton.autotune`` (the kernel has none: its config comes from a table), the backward's
  scale kernel, the current-stream query, the two allocations, a do-nothing
  ``autograd.Function`` (forward, and forward + backward), ``torch.ones_like`` of the loss
  (what ``backward()`` makes for grad_output), torch's ``add_`` (the host's speed), and the
  step again with Python's cyclic collector off. ``--before FILE`` adds an earlier
  ``fused.py``'s loss, forward and step in the same batches.
- ``in_harness``: the host time of each call inside the harness's own loop (CUDA events,
  L2 cleared by a read before each call): what the harness's as-called figure sees.
- ``syncs``: each call under ``torch.cuda.set_sync_debug_mode("error")`` (an error names
  the synchronizing operation; ``none`` when there is none).
- ``allocations``: per call, what torch's caching allocator was asked for (allocations),
  what it asked the driver for (segments: cudaMalloc), its retries, and the driver's
  allocations and frees where torch reports them.
- ``profile``: torch.profiler over 20 training steps: kernel launches, synchronizations,
  device-to-host copies and cudaMalloc calls per step, the GPU's busy and idle time per
  step, and the host time per step of our autograd function's forward and backward,
  ``ones_like`` and AccumulateGrad.
- ``as_called_vs_graph``: at ``--rows`` x ``--vocab`` (128 to 2048 rows), float32 and
  bfloat16, the loss, the forward with the gradient and the step as called (the harness's
  timer), under a CUDA graph, back to back (CUDA events around 50 calls in a row, no L2
  clearing: whether the host keeps up on average), and the step captured once in a CUDA
  graph and replayed as called (the route the guide gives callers below 1024 rows).

    PYTHONPATH=src python3 benchmarks/jsd_host_time.py --out jsd_host_time.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
import triton
from _results import gpu_facts, graph_ms, host_us, load_module, write_results

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import fused, jsd_triton, launch_plan

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# About 0.3 s of GPU sleep on an H100 or H200: a batch of the host part (each call of a group
# 50 times) takes the host well under that.
SLEEP_CYCLES = int(600e6)
BACKWARDS_PER_BATCH = 20
MIN_SAMPLES = 50

Jsd = Callable[..., torch.Tensor]


def _inputs(bt: int, v: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(bt, v, device="cuda", generator=g).log_softmax(-1).to(dtype)
    y = torch.randn(bt, v, device="cuda", generator=g).log_softmax(-1).to(dtype)
    return x, y


class _Noop(torch.autograd.Function):
    """A do-nothing autograd function: what autograd alone costs a call."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(())

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor | None:
        return None


def _step(fn: Jsd, xg: torch.Tensor, y: torch.Tensor) -> Callable[[], torch.Tensor]:
    def step() -> torch.Tensor:
        xg.grad = None
        loss = fn(xg, y)
        loss.backward()
        return loss

    return step


def _prepared_launch(x: torch.Tensor, y: torch.Tensor) -> tuple[Callable[[], Any], Any]:
    """Triton's public launch of this tree's kernel with the arguments a forward with the
    gradient passes, prepared once; and the same through a one-config ``triton.autotune``."""
    rows, cols, flat = launch_plan.layout(*x.shape, x.stride(0), y.stride(0), None)
    plan = launch_plan.plan_for(
        x.device,
        torch.cuda.current_stream().cuda_stream,
        x.dtype,
        rows,
        cols,
        (0, 0, 0),
        flat,
        2,
        False,
        True,
    )
    dx, loss = torch.empty_like(x), x.new_empty(())
    args = (x, y, x, dx, plan.partials, plan.ticket, loss, rows, cols, 0, 0, 0)
    args += (0.5, -1.0, -1.0, plan.unit, 1.0 / x.shape[0], -100)
    grid = (plan.programs,)

    def launch() -> Any:
        return fused.jsd_fwd_kernel[grid](*args, **plan.constexprs, num_warps=plan.config.num_warps)

    tuned = triton.autotune(configs=[triton.Config({}, num_warps=plan.config.num_warps)], key=[])(
        fused.jsd_fwd_kernel
    )

    def autotuned() -> Any:
        return tuned[grid](*args, **plan.constexprs)

    return launch, autotuned


def host(bt: int, v: int, before: Jsd | None, batches: int) -> dict[str, dict[str, Any]]:
    """Host us per call of every call and part, enqueue-only, per dtype."""
    out = {}
    for name, dtype in DTYPES.items():
        out[name] = _host_of(*_inputs(bt, v, dtype), before, batches)
        shown = {k: out[name].get(k, {}).get("median") for k in ("loss", "forward_grad", "step")}
        print(name, "host us", shown, file=sys.stderr, flush=True)
    return out


def _host_of(x: torch.Tensor, y: torch.Tensor, before: Jsd | None, batches: int) -> dict[str, Any]:
    xg = x.clone().requires_grad_()
    launch, autotuned = _prepared_launch(x, y)
    dx, ones = torch.empty_like(x), torch.ones((), device="cuda", dtype=x.dtype)
    loss = jsd_triton(x, y)
    leaf = torch.zeros((), device="cuda", requires_grad=True)
    small = torch.zeros((), device="cuda")

    def add() -> None:
        small.add_(1.0)

    def noop_step() -> None:
        _Noop.apply(leaf).backward()

    # Three groups, each with torch's add_ as the host's speed in the same batches: a batch
    # queues well under 1,000 launches behind the GPU's sleep (see queue_depth).
    groups: list[dict[str, Callable[[], Any]]] = [
        {
            "torch_add_": add,
            "loss": lambda: jsd_triton(x, y),
            "forward_grad": lambda: jsd_triton(xg, y),
            "step": _step(jsd_triton, xg, y),
        },
        {
            "torch_add_": add,
            "launch_grad_no_autograd": lambda: fused._launch(x, y, 0.5, None, -100, True),
            "launch_loss_no_autograd": lambda: fused._launch(x, y, 0.5, None, -100, False),
            "triton_launch_prepared": launch,
            "triton_autotune_one_config": autotuned,
            "scale_kernel_launch": lambda: fused._scale(dx, ones),
        },
        {
            "torch_add_": add,
            "current_stream": lambda: torch.cuda.current_stream(x.device).cuda_stream,
            "new_empty_dx": lambda: x.new_empty(x.shape),
            "new_empty_scalar": lambda: x.new_empty(()),
            "autograd_noop_forward": lambda: _Noop.apply(leaf),
            "autograd_noop_step": noop_step,
            "ones_like_loss": lambda: torch.ones_like(loss),
        },
    ]
    if before is not None:
        groups[0]["before_loss"] = lambda: before(x, y)
        groups[0]["before_forward_grad"] = lambda: before(xg, y)
        groups[0]["before_step"] = _step(before, xg, y)
    found: dict[str, Any] = {}
    for number, calls in enumerate(groups):
        with _guarded(found, f"group{number}"):
            measured = host_us(
                *calls.values(), calls=50, batches=batches, sleep_cycles=SLEEP_CYCLES
            )
            found[f"group{number}_outlasted"] = measured.outlasted
            for key, values in zip(calls, measured.us, strict=True):
                label = f"{key}{number}" if number and key == "torch_add_" else key
                found[label] = {
                    "median": statistics.median(values),
                    "range": [min(values), max(values)],
                }
    with _guarded(found, "step_gc_off"):
        gc.disable()
        try:
            measured = host_us(_step(jsd_triton, xg, y), add, calls=50, batches=batches)
        finally:
            gc.enable()
        found["step_gc_off"] = {
            "median": statistics.median(measured.us[0]),
            "torch_add_": statistics.median(measured.us[1]),
            "outlasted": measured.outlasted,
        }
    with _guarded(found, "backward_only"):
        found["backward_only"] = _backward_only(xg, y, batches)
    xg.grad = None
    return found


def queue_depth(chunk: int = 100, chunks: int = 40) -> list[float]:
    """Host us per torch ``add_`` launch in each chunk of ``chunk`` launches queued one after
    another behind the GPU's sleep: a chunk that waited for the GPU (the launch queue
    full) shows the sleep's length instead of a launch's."""
    small = torch.zeros((), device="cuda")
    for _ in range(10):
        small.add_(1.0)
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES * 2)
    per_chunk = []
    for _ in range(chunks):
        start = time.perf_counter()
        for _ in range(chunk):
            small.add_(1.0)
        per_chunk.append((time.perf_counter() - start) / chunk * 1e6)
    torch.cuda.synchronize()
    return per_chunk


def _backward_only(xg: torch.Tensor, y: torch.Tensor, batches: int) -> dict[str, Any]:
    """Host us per ``loss.backward()`` of losses made beforehand (untimed), GPU asleep."""
    per_batch, outlasted = [], 0
    for _ in range(batches):
        losses = [jsd_triton(xg, y) for _ in range(BACKWARDS_PER_BATCH)]
        torch.cuda.synchronize()
        torch.cuda._sleep(SLEEP_CYCLES // 4)
        asleep = torch.cuda.Event()
        asleep.record()
        start = time.perf_counter()
        for loss in losses:
            xg.grad = None
            loss.backward()
        per_batch.append((time.perf_counter() - start) / len(losses) * 1e6)
        outlasted += bool(asleep.query())
        del losses
        torch.cuda.synchronize()
    return {"median": statistics.median(per_batch), "outlasted": outlasted}


@contextlib.contextmanager
def _guarded(found: dict[str, Any], key: str) -> Iterator[None]:
    """Record an exception as ``found[key + "_error"]`` instead of raising it."""
    try:
        yield
    except Exception as err:  # one part failing must not take the others with it
        found[f"{key}_error"] = f"{type(err).__name__}: {err}"[:300]


def _calls(fn: Jsd, x: torch.Tensor, xg: torch.Tensor, y: torch.Tensor) -> dict[str, Any]:
    def loss() -> torch.Tensor:
        with torch.no_grad():
            return fn(x, y)

    return {"loss": loss, "forward_grad": lambda: fn(xg, y), "step": _step(fn, xg, y)}


def in_harness(bt: int, v: int) -> dict[str, Any]:
    """Host us of each call inside the harness's loop (CUDA events, read flush)."""
    out: dict[str, Any] = {}
    for name, dtype in DTYPES.items():
        x, y = _inputs(bt, v, dtype)
        xg = x.clone().requires_grad_()
        for kind, call in _calls(jsd_triton, x, xg, y).items():
            spent: list[float] = []

            def timed(call: Callable[[], Any] = call, spent: list[float] = spent) -> Any:
                start = time.perf_counter()
                result = call()
                spent.append((time.perf_counter() - start) * 1e6)
                return result

            ms = timing.time_cuda_events(timed, [], MIN_SAMPLES).quantile_ns(0.5) / 1e6
            out[f"{name}-{kind}"] = {"as_called_ms": ms, "host_us": statistics.median(spent)}
        xg.grad = None
    return out


def syncs(bt: int, v: int) -> dict[str, str]:
    """Whether a call synchronizes with the GPU, by torch's sync debug mode."""
    out = {}
    for name, dtype in DTYPES.items():
        x, y = _inputs(bt, v, dtype)
        xg = x.clone().requires_grad_()
        for kind, call in _calls(jsd_triton, x, xg, y).items():
            call()
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
            try:
                call()
                out[f"{name}-{kind}"] = "none"
            except RuntimeError as err:
                out[f"{name}-{kind}"] = str(err)[:200]
            finally:
                torch.cuda.set_sync_debug_mode("default")
            torch.cuda.synchronize()
        xg.grad = None
    return out


ALLOCATOR_KEYS = (
    "allocation.all.allocated",
    "segment.all.allocated",
    "num_alloc_retries",
    "num_device_alloc",
    "num_device_free",
    "num_sync_all_streams",
)


def allocations(bt: int, v: int, calls: int = 20) -> dict[str, dict[str, float]]:
    """Per call, the caching allocator's counters' growth (after three warm-up calls)."""
    out = {}
    for name, dtype in DTYPES.items():
        x, y = _inputs(bt, v, dtype)
        xg = x.clone().requires_grad_()
        for kind, call in _calls(jsd_triton, x, xg, y).items():
            for _ in range(3):
                call()
            torch.cuda.synchronize()
            first = torch.cuda.memory_stats()
            for _ in range(calls):
                call()
            torch.cuda.synchronize()
            last = torch.cuda.memory_stats()
            out[f"{name}-{kind}"] = {
                k: (last[k] - first[k]) / calls for k in ALLOCATOR_KEYS if k in last
            }
        xg.grad = None
    return out


# Profiler keys (exact) of the parts of a step, host time per step.
PROFILED = {
    "our_forward": "_JSDFunction",
    "our_backward": "_JSDFunctionBackward",
    "our_backward_in_engine": "autograd::engine::evaluate_function: _JSDFunctionBackward",
    "ones_like": "aten::ones_like",
    "accumulate_grad": "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
    "empty": "aten::empty",
}


def profile(bt: int, v: int, steps: int = 20) -> dict[str, Any]:
    """Launches, syncs, copies and allocations per step, and where its host time goes."""
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    out: dict[str, Any] = {}
    for name, dtype in DTYPES.items():
        x, y = _inputs(bt, v, dtype)
        xg = x.clone().requires_grad_()
        step = _step(jsd_triton, xg, y)
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
        events = prof.events()
        kernels = sorted(
            (e for e in events if e.device_type == torch.autograd.DeviceType.CUDA),
            key=lambda e: e.time_range.start,
        )
        busy = sum(e.time_range.end - e.time_range.start for e in kernels)
        span = kernels[-1].time_range.end - kernels[0].time_range.start if kernels else 0

        def per_step(match: Callable[[str], bool], events: Any = events) -> float:
            return sum(match(e.name) for e in events) / steps

        totals = {e.key: e.cpu_time_total / steps for e in prof.key_averages()}
        out[name] = {
            "launches_per_step": per_step(lambda n: "LaunchKernel" in n),
            "syncs_per_step": per_step(
                lambda n: (
                    n in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")
                )
            ),
            "dtoh_copies_per_step": per_step(lambda n: "DtoH" in n or "Device -> Pageable" in n),
            "cuda_mallocs_per_step": per_step(lambda n: n == "cudaMalloc"),
            "kernels_per_step": len(kernels) / steps,
            "gpu_busy_us_per_step": busy / steps,
            "gpu_idle_us_per_step": (span - busy) / steps,
            "host_us_per_step": {label: totals.get(key) for label, key in PROFILED.items()},
            "top_host_us_per_step": dict(sorted(totals.items(), key=lambda kv: -kv[1])[:12]),
        }
        xg.grad = None
    return out


def _replayed_step(xg: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    """A training step captured once in a CUDA graph; the call replays it."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    step = _step(jsd_triton, xg, y)
    with torch.cuda.stream(stream):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    xg.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        jsd_triton(xg, y).backward()
    return graph.replay


def _back_to_back_ms(call: Callable[[], Any], n: int = 50) -> float:
    for _ in range(3):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(n):
        call()
    end.record()
    torch.cuda.synchronize()
    return float(start.elapsed_time(end)) / n


def as_called_vs_graph(rows: list[int], v: int) -> dict[str, Any]:
    """As called, under a CUDA graph and back to back, by rows; the replayed step."""
    out: dict[str, Any] = {}
    for (name, dtype), bt in itertools.product(DTYPES.items(), rows):
        x, y = _inputs(bt, v, dtype)
        xg = x.clone().requires_grad_()
        point: dict[str, Any] = {}
        for kind, call in _calls(jsd_triton, x, xg, y).items():
            called = timing.time_cuda_events(call, [], MIN_SAMPLES).quantile_ns(0.5) / 1e6
            row: dict[str, Any] = {"as_called_ms": called}
            with _guarded(row, "graph_ms"):
                row["graph_ms"] = graph_ms(call)
                row["as_called_over_graph"] = called / row["graph_ms"]
            row["back_to_back_ms"] = _back_to_back_ms(call)
            point[kind] = row
        with _guarded(point, "step_replayed"):
            replay = _replayed_step(xg, y)
            point["step_replayed_as_called_ms"] = (
                timing.time_cuda_events(replay, [], MIN_SAMPLES).quantile_ns(0.5) / 1e6
            )
        xg.grad = None
        out[f"{name}-{bt}x{v}"] = point
        shown = {
            k: round(point[k]["as_called_over_graph"], 3)
            for k in ("loss", "forward_grad", "step")
            if "as_called_over_graph" in point[k]
        }
        print(f"{name}-{bt} as called / graph", shown, file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", help="the JSON results (standard output when not given)")
    parser.add_argument("--tokens", type=int, default=1024, help="rows of the host parts")
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--rows", default="128,256,512,1024,2048")
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--before", help="an earlier fused.py, timed beside in the host part")
    parser.add_argument(
        "--parts",
        default="queue_depth,host,in_harness,syncs,allocations,profile,as_called_vs_graph",
    )
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("this probe needs a CUDA GPU", file=sys.stderr)
        return 2
    started = time.perf_counter()
    before = (
        load_module(
            args.before, "_before_fused", "kernelindex_sdk.reference_kernels.jsd"
        ).jsd_triton
        if args.before
        else None
    )
    bt, v = args.tokens, args.vocab
    parts: dict[str, Callable[[], Any]] = {
        "queue_depth": queue_depth,
        "host": lambda: host(bt, v, before, args.batches),
        "in_harness": lambda: in_harness(bt, v),
        "syncs": lambda: syncs(bt, v),
        "allocations": lambda: allocations(bt, v),
        "profile": lambda: profile(bt, v),
        "as_called_vs_graph": lambda: as_called_vs_graph([int(r) for r in args.rows.split(",")], v),
    }
    results: dict[str, Any] = {**gpu_facts(), "tokens": bt, "vocab": v, "before": args.before}
    for part in args.parts.split(","):
        with _guarded(results, part):
            results[part] = parts[part]()
        torch.cuda.empty_cache()
    results["seconds"] = round(time.perf_counter() - started, 1)
    write_results(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
