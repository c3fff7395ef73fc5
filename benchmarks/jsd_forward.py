"""JSD loss forward on one GPU: our Triton kernel and its peers, side by side in one process.

For every point (BT x V x dtype, loss alone and with dL/dinput) each provider is checked
against a float64 reference (the gradient too, against float64 autograd) and timed through
the harness (CUDA events around each call, >= 100 samples, L2 cleared before each call by
reading a buffer four times its size: reference_kernels/timing.py): the time as users call
it, which includes the host's launch cost whenever the GPU waits for the host.
Beside it, measured in the same process:

- ``cudagraph_ms``: median of triton.testing.do_bench_cudagraph of the same call (the GPU's
  time alone, no host launch cost);
- ``do_bench_ms``: median of triton.testing.do_bench (its L2 flush writes 256 MB, and the
  timed call pays for writing those dirty lines back: 12-51 us for a plain read stream of
  0.5-8 GB on an H200);
- ``host_us_per_call``: host time to issue one call, the median of 15 batches of 100 calls
  issued back to back while the GPU is kept busy (so the calls do not wait for it), and
  ``host_us_spread``, the fastest and slowest batch; ``torch_add_host_us``: a torch
  elementwise launch (``add_`` on a scalar) timed in the same batches, the scale to read
  them against (the host's speed drifts between batches and runs, up to 2x);
- ``read_roofline_ms``: the read-stream roofline, the fastest of a plain Triton kernel
  that reads both inputs once (persistent grid, a few block sizes, CUDA graph), for the
  bytes the workload must move at that read rate;
- ``copy_roofline_ms``: the same bytes at the rate of a device-to-device copy (read + write),
  the roofline used before: lower than a read stream, so too easy a bar.

    PYTHONPATH=src python3 benchmarks/jsd_forward.py --records R.jsonl --summary S.json \
        --table T.md [--impl torch,torch-compile,triton,liger]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl
from triton.testing import do_bench, do_bench_cudagraph

import kernelindex_sdk as ki
from kernelindex_sdk.documents import JSONLinesWriter
from kernelindex_sdk.reference_kernels.device import select_device
from kernelindex_sdk.reference_kernels.jsd import fused, sweep

COPY_BYTES = 4 * 2**30
HOST_CALLS = 100
HOST_BATCHES = 15
# (BLOCK, num_warps, programs per SM) tried for the read stream; the fastest counts.
READ_CONFIGS = [(4096, 8, 4), (8192, 16, 2), (8192, 16, 4), (16384, 32, 1), (16384, 32, 2)]


@triton.jit
def _read_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # noqa: N803
    i_p = tl.program_id(0)
    n_p = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i_t in range(i_p, tl.cdiv(n, BLOCK), n_p):
        o = i_t.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        acc += tl.load(x_ptr + o, mask=m, other=0.0, eviction_policy="evict_first").to(tl.float32)
        acc += tl.load(y_ptr + o, mask=m, other=0.0, eviction_policy="evict_first").to(tl.float32)
    tl.store(out_ptr + i_p, tl.sum(acc, axis=0))


def _graph_ms(fn: Callable[[], Any]) -> float:
    with torch.cuda.stream(torch.cuda.Stream()):
        return float(do_bench_cudagraph(fn, rep=20, return_mode="median"))


def read_stream_ms(x: torch.Tensor, y: torch.Tensor) -> float:
    """GPU time of the fastest plain kernel that reads ``x`` and ``y`` once (CUDA graph)."""
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    out = torch.empty(sms * 8, device=x.device, dtype=torch.float32)
    n = x.numel()
    best = float("inf")
    for block, warps, per_sm in READ_CONFIGS:
        grid = (min(triton.cdiv(n, block), sms * per_sm),)

        def run(block: int = block, warps: int = warps, grid: tuple[int] = grid) -> None:
            _read_kernel[grid](x, y, out, n, BLOCK=block, num_warps=warps)

        run()
        best = min(best, _graph_ms(run))
    return best


def copy_bandwidth() -> float:
    """Bytes read plus written per second by a 4 GiB device-to-device copy (median do_bench)."""
    src = torch.empty(COPY_BYTES // 4, device="cuda", dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    ms = float(do_bench(lambda: dst.copy_(src), return_mode="median"))
    return 2 * COPY_BYTES / (ms * 1e-3)


def host_us(
    *fns: Callable[[], Any], calls: int = HOST_CALLS, batches: int = HOST_BATCHES
) -> list[list[float]]:
    """Host us per call of each of ``fns`` in each of ``batches`` batches of ``calls``
    calls each, issued while the GPU is kept busy (a batch takes far less than the GPU's
    sleep): the functions of one batch see the host at the same speed, which drifts
    between batches and runs."""
    for _ in range(3):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    per_fn: list[list[float]] = [[] for _ in fns]
    for _ in range(batches):
        # Keep the GPU busy first so that the calls below do not wait for it to drain.
        torch.cuda._sleep(int(100e6))
        for fn, out in zip(fns, per_fn, strict=True):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return per_fn


def side_measures(provider: str, case: sweep.JSDCase) -> dict[str, Any]:
    """CUDA-graph median and host microseconds per call of ``provider`` at ``case``."""
    fn, _ = sweep._provider(provider, case)
    x, y = sweep._inputs(case, torch.device("cuda"), 0)
    x.requires_grad_(case.input_grad)
    scalar = torch.zeros((), device="cuda")

    def call() -> torch.Tensor:
        with torch.set_grad_enabled(case.input_grad):
            return fn(x, y)

    ours, torch_add = host_us(call, lambda: scalar.add_(1.0))
    plans = [p for p in fused._PLANS.values() if p.compiled is not None]
    return {
        **({"direct_launch": all(p.learnt is not None for p in plans)} if plans else {}),
        **({"raw_launch": all(bool(p.learnt and p.learnt.raw) for p in plans)} if plans else {}),
        "cudagraph_ms": _graph_ms(call),
        "do_bench_ms": float(do_bench(call, return_mode="median")),
        "host_us_per_call": statistics.median(ours),
        "host_us_spread": [min(ours), max(ours)],
        "torch_add_host_us": statistics.median(torch_add),
        "read_roofline_ms": read_stream_ms(x.detach(), y),
    }


def summarize(record: ki.models.RecordBundle, copy_bw: float) -> dict[str, Any]:
    run = record.run.spec
    params = run.workload.parameters if run.workload else {}
    row: dict[str, Any] = {
        "provider": run.implementation.provider if run.implementation else "?",
        "tokens": params.get("tokens"),
        "vocab": params.get("vocab"),
        "dtype": params.get("dtype"),
        "input_grad": params.get("inputGrad"),
        "status": run.status,
        "name": record.run.metadata.name,
        "config": (record.run.metadata.annotations or {}).get("kernelindex.dev/config"),
    }
    if run.correctness is not None:
        row["loss_max_rel_error"] = run.correctness.max_rel_error
    for m in run.measurements or ():
        if m.metric.endswith("_error"):
            row[m.metric] = m.value
    if run.timing is None:
        row["failure"] = run.failure.message if run.failure else None
        return row
    stats = {m.statistic: m.value for m in run.measurements or () if m.metric == "latency"}
    moved = run.workload.bytes_moved if run.workload else None
    row.update(
        median_ms=run.timing.latency_ns.median / 1e6,  # type: ignore[operator]
        p20_ms=stats["p20"] / 1e6,
        p80_ms=stats["p80"] / 1e6,
        samples=run.timing.samples,
        copy_roofline_ms=moved / copy_bw * 1e3 if moved else None,
    )
    return row


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    if "median_ms" not in row:
        return str(row["status"])
    return f"{row['median_ms']:.3f} / {row.get('cudagraph_ms', float('nan')):.3f}"


def table(rows: list[dict[str, Any]], device: str, read_bw: float, copy_bw: float) -> str:
    providers = ["torch", "torch-compile", "liger", "triton"]
    lines = [
        f"# JSD loss forward on {device}",
        "",
        "Written by `benchmarks/jsd_forward.py` (all numbers from one process). Each cell:",
        "median ms as called (the harness: CUDA events around each call, L2 cleared before",
        "each by a read) / median ms under a CUDA graph (`do_bench_cudagraph`, the GPU's time",
        "alone). `do_bench` is triton.testing.do_bench's median for our kernel: its flush",
        "writes 256 MB, and the timed call pays for writing those lines back.",
        f"Read roofline: a plain Triton kernel reading both inputs once, {read_bw / 1e12:.2f}"
        " TB/s at best;",
        f"copy roofline: a 4 GiB device-to-device copy, {copy_bw / 1e12:.2f} TB/s (read + write).",
        "Each roofline is the bytes the workload must move (read both inputs; with the",
        "gradient also write dL/dinput) at that rate. Liger computes the gradient in every",
        "forward; `torch` and `torch-compile` with dL/dinput build the autograd graph.",
        "Host us/call: our call's host time, median of batches of calls issued while the GPU",
        "is busy; torch add_ us: a torch elementwise launch (`add_` on a scalar) timed in the",
        "same batches, the host's speed at that point.",
        "",
    ]
    for grad in (False, True):
        lines.append("## Loss and gradient in one forward" if grad else "## Loss only")
        lines.append("")
        header = (
            "| BT x V | dtype | "
            + " | ".join(providers)
            + " | triton do_bench | read roofline | copy roofline"
            + " | triton % of read (as called) | (graph) | host us/call | torch add_ us |"
        )
        lines += [header, "|" + " --- |" * (len(providers) + 9)]
        keys = sorted(
            {(r["tokens"], r["vocab"], r["dtype"]) for r in rows if r["input_grad"] is grad},
            key=lambda k: (k[2], k[0]),
        )
        for tokens, vocab, dtype in keys:
            found = {
                r["provider"]: r
                for r in rows
                if (r["tokens"], r["vocab"], r["dtype"], r["input_grad"])
                == (tokens, vocab, dtype, grad)
            }
            cells = [_cell(found.get(p)) for p in providers]
            ours = found.get("triton", {})
            read = ours.get("read_roofline_ms")
            copy = ours.get("copy_roofline_ms")
            called = read / ours["median_ms"] if read and "median_ms" in ours else None
            graph = read / ours["cudagraph_ms"] if read and "cudagraph_ms" in ours else None
            host = ours.get("host_us_per_call")
            torch_add = ours.get("torch_add_host_us")
            plain = ours.get("do_bench_ms")
            tail = [
                f"{plain:.3f}" if plain else "-",
                f"{read:.3f}" if read else "-",
                f"{copy:.3f}" if copy else "-",
                f"{called:.1%}" if called else "-",
                f"{graph:.1%}" if graph else "-",
                f"{host:.0f}" if host else "-",
                f"{torch_add:.0f}" if torch_add else "-",
            ]
            lines.append(f"| {tokens} x {vocab} | {dtype} | " + " | ".join(cells + tail) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--impl", default="torch,torch-compile,triton,liger")
    parser.add_argument("--tokens", default="1024,2048,4096,8192")
    parser.add_argument("--vocab", default="128256")
    parser.add_argument("--dtype", default="fp32,bf16")
    parser.add_argument("--input-grad", default="both", choices=("off", "on", "both"))
    parser.add_argument("--records", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--table", required=True)
    args = parser.parse_args()
    device = select_device()
    if device.type != "cuda":
        print("this benchmark needs a CUDA GPU", file=sys.stderr)
        return 2
    providers = [p for p in args.impl.split(",") if p != "liger" or sweep.liger_available()]
    points = sweep.plan(
        providers=providers,
        device=device,
        tokens=[int(t) for t in args.tokens.split(",")],
        vocab=[int(v) for v in args.vocab.split(",")],
        dtypes=args.dtype.split(","),
        input_grad=args.input_grad,
    )
    copy_bw = copy_bandwidth()
    rows = []
    read_bw = 0.0
    with JSONLinesWriter(args.records) as out:
        for case in points:
            for provider in providers:
                record = sweep.run_case(provider, case, device)
                out.write(record)
                row = summarize(record, copy_bw)
                if row["status"] == "passed":
                    try:
                        row.update(side_measures(provider, case))
                    except Exception as err:  # a side measure failed: keep the record's row
                        row["side_error"] = f"{type(err).__name__}: {err}"[:200]
                read = row.get("read_roofline_ms")
                if read:
                    reads = 2 * case.tokens * case.vocab * case.torch_dtype.itemsize
                    read_bw = max(read_bw, reads / (read * 1e-3))
                    # With the gradient the workload also writes dL/dinput: at the read rate.
                    row["read_roofline_ms"] = read * (1.5 if case.input_grad else 1.0)
                rows.append(row)
                torch.cuda.empty_cache()
                shown = f"{row['median_ms']:.4f} ms" if "median_ms" in row else row["status"]
                graph = row.get("cudagraph_ms")
                host = row.get("host_us_per_call")
                extra = f" graph {graph:.4f} host {host:.0f}us" if graph and host else ""
                point = f"{row['dtype']} {row['tokens']:5} grad={row['input_grad']!s:5}"
                print(f"{row['provider']:14} {point} {shown}{extra}", flush=True)
    name = torch.cuda.get_device_name(device)
    summary = {
        "device": name,
        "torch": str(torch.__version__),
        "triton": str(triton.__version__),
        "read_bandwidth_bytes_per_s": read_bw,
        "copy_bandwidth_bytes_per_s": copy_bw,
        "providers": providers,
        "rows": rows,
    }
    # A plain JSON file, not a record: json.dumps, not the record writer (which validates).
    with open(args.summary, "w", encoding="utf-8") as f:
        f.write(json.dumps(summary, indent=1) + "\n")
    text = table(rows, name, read_bw, copy_bw)
    with open(args.table, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
