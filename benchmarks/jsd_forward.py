"""JSD loss on one GPU: our Triton kernel and its peers, side by side in one process.

For every point (BT x V x dtype, the loss alone and a training step) each provider is
checked against a float64 reference (the gradient too, against float64 autograd) and timed
through the harness (CUDA events around each call, >= 100 samples, L2 cleared before each
call by reading a buffer four times its size: reference_kernels/timing.py): the time as
users call it, which includes the host's launch cost whenever the GPU waits for the host.
The timed call is ``sweep.step``, the one ``kernelindex bench jsd`` times: the loss alone,
or with the gradient a training step for EVERY provider, the forward then
``loss.backward()`` down to dL/dinput with x.grad reset before each call (pass ``full``).
Beside it, measured in the same process:

- ``cudagraph_ms``: median of triton.testing.do_bench_cudagraph of the same call (the GPU's
  time alone, no host launch cost);
- ``do_bench_ms``: median of triton.testing.do_bench (its L2 flush writes 256 MB, and the
  timed call pays for writing those dirty lines back: 12-51 us for a plain read stream of
  0.5-8 GB on an H200);
- ``host_us_per_call``: host time to issue one timed call (with the gradient a whole
  training step, forward and backward: not the forward alone, which is
  ``forward_only_host_us``), the median of 15 batches of 100 calls issued back to back
  while the GPU sleeps (``_results.host_us``; ``host_batches_outlasting_sleep`` counts the
  batches that ran past the sleep, whose figures may include GPU time), and
  ``host_us_spread``, the fastest and slowest batch; ``torch_add_host_us``: a torch
  elementwise launch (``add_`` on a scalar) timed in the same batches, the scale to read
  them against (the host's speed drifts between batches and runs, up to 2x);
- with the gradient, ``forward_only_ms`` / ``forward_only_cudagraph_ms`` /
  ``forward_only_host_us``: the forward alone (ours and Liger's compute dL/dinput in it;
  torch's only records the autograd graph), labelled as such in the table;
- with the gradient, ``same_bytes_ms`` / ``same_bytes_cudagraph_ms``: ``torch.add(x, y,
  out=out)``, which moves the bytes a training step must (read x and y, write one tensor),
  and ``step_over_same_bytes`` (``_cudagraph``): the step's time over it;
- ``read_roofline_ms``: the read-stream roofline, the fastest of a plain Triton kernel
  that reads both inputs once (persistent grid, a few block sizes, CUDA graph), for the
  bytes the workload must move at that read rate;
- ``copy_roofline_ms``: the same bytes at the rate of a device-to-device copy (read + write),
  the roofline used before: lower than a read stream, so too easy a bar;
- ``waits_for_gpu`` (``forward_only_waits_for_gpu``): whether one call blocked the host
  until the GPU caught up (a host sync); such a call's host us include GPU time.

A side measure that fails (a CUDA-graph capture refused, say) leaves ``<name>_error`` in
its row instead of its value; the others stand.

    PYTHONPATH=src python3 benchmarks/jsd_forward.py --records R.jsonl --summary S.json \
        --table T.md [--impl torch,torch-compile,triton,liger] [--input-grad off|on|both]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl
from _results import gpu_facts, graph_ms, host_us
from triton.testing import do_bench

import kernelindex_sdk as ki
from kernelindex_sdk.documents import JSONLinesWriter
from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.device import select_device
from kernelindex_sdk.reference_kernels.jsd import sweep

COPY_BYTES = 4 * 2**30
# The harness's sample floor, for the side measures timed as the records are.
MIN_SAMPLES = 100
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
        best = min(best, graph_ms(run))
    return best


def copy_bandwidth() -> float:
    """Bytes read plus written per second by a 4 GiB device-to-device copy (median do_bench)."""
    src = torch.empty(COPY_BYTES // 4, device="cuda", dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    ms = float(do_bench(lambda: dst.copy_(src), return_mode="median"))
    return 2 * COPY_BYTES / (ms * 1e-3)


def _guarded(found: dict[str, Any], key: str, measure: Callable[[], Any]) -> None:
    """``found[key] = measure()``, or ``found[key + "_error"]`` saying why it failed.

    One side measure that fails (a CUDA-graph capture refused by a host sync, say) must not
    take the others with it.
    """
    try:
        found[key] = measure()
    except Exception as err:  # recorded beside the row, never raised
        found[f"{key}_error"] = f"{type(err).__name__}: {err}"[:200]


def _as_called_ms(fn: Callable[[], Any], grads: list[torch.Tensor]) -> float:
    """Median ms of ``fn`` timed as the harness times a record (CUDA events, read flush)."""
    return timing.time_cuda_events(fn, grads, MIN_SAMPLES).quantile_ns(0.5) / 1e6


def waits_for_gpu(fn: Callable[[], Any]) -> bool:
    """Whether one call of ``fn`` blocks the host until the GPU has caught up (a host sync,
    such as a device-to-host copy of a flag).

    The GPU is kept busy for tens of ms, an event is queued behind that, then ``fn`` is
    called once: a call that returns while the event is still pending did not wait; one
    that returns after it did. A call that waits has no host cost of its own to measure:
    its host us per call include the GPU's time, and a CUDA graph cannot capture it.
    """
    fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(int(100e6))
    done = torch.cuda.Event()
    done.record()
    fn()
    waited = bool(done.query())
    torch.cuda.synchronize()
    return waited


def _graph_unless_waits(
    found: dict[str, Any], key: str, fn: Callable[[], Any], waits: bool | None
) -> None:
    """``found[key]``: the CUDA-graph median of ``fn``, unless ``fn`` waits for the GPU.

    A host sync is illegal during capture: trying would only fail (and leave a failed
    capture behind on the GPU), so the row says why there is no number instead.
    """
    if waits:
        found[f"{key}_error"] = (
            "skipped: the call blocks the host on the GPU (a host sync), which a CUDA graph"
            " cannot capture"
        )
        return
    _guarded(found, key, lambda: graph_ms(fn))


def side_measures(
    provider: str, case: sweep.JSDCase, device: torch.device | None = None
) -> dict[str, Any]:
    """What the record does not hold, for ``provider`` at ``case``, of the call it timed.

    The call is :func:`sweep.step`, the harness's: with ``case.input_grad`` a training
    step (forward, then ``loss.backward()`` down to dL/dinput) for every provider, x.grad
    reset before each call; else the loss alone. Beside it: its CUDA-graph and do_bench
    medians, host us per call (with a torch ``add_`` launch timed in the same batches),
    and the read-stream roofline. With the gradient also the forward alone (ours and
    Liger's compute dL/dinput in it; torch's only records the graph): ``forward_only_*``.
    """
    device = device or torch.device("cuda")
    fn, _ = sweep._provider(provider, case)
    x, y = sweep._inputs(case, device, 0)
    x.requires_grad_(case.input_grad)
    grads = [x] if case.input_grad else []
    call = sweep.step(fn, x, y, input_grad=case.input_grad)
    scalar = torch.zeros((), device=device)

    def reset_then(run: Callable[[], Any]) -> Callable[[], Any]:
        # For the timers that cannot reset x.grad themselves: do_bench_cudagraph's reset
        # happens outside the graph, and the host batches call back to back.
        def wrapped() -> Any:
            x.grad = None
            return run()

        return wrapped

    def forward_only() -> torch.Tensor:
        with torch.enable_grad():
            return fn(x, y)

    found: dict[str, Any] = {}
    _guarded(found, "waits_for_gpu", lambda: waits_for_gpu(reset_then(call)))
    _graph_unless_waits(found, "cudagraph_ms", reset_then(call), found.get("waits_for_gpu"))
    _guarded(
        found,
        "do_bench_ms",
        lambda: float(do_bench(call, grad_to_none=grads or None, return_mode="median")),
    )
    timed = [reset_then(call), lambda: scalar.add_(1.0)]
    if case.input_grad:
        timed.append(forward_only)
        _guarded(found, "forward_only_waits_for_gpu", lambda: waits_for_gpu(forward_only))
        _guarded(found, "forward_only_ms", lambda: _as_called_ms(forward_only, grads))
        _graph_unless_waits(
            found,
            "forward_only_cudagraph_ms",
            forward_only,
            found.get("forward_only_waits_for_gpu"),
        )
    host = host_us(*timed)
    per_fn = host.us
    found.update(
        host_batches_outlasting_sleep=host.outlasted,
        host_us_per_call=statistics.median(per_fn[0]),
        host_us_spread=[min(per_fn[0]), max(per_fn[0])],
        torch_add_host_us=statistics.median(per_fn[1]),
    )
    if case.input_grad:
        found["forward_only_host_us"] = statistics.median(per_fn[2])
    _guarded(found, "read_roofline_ms", lambda: read_stream_ms(x.detach(), y))
    return found


def same_bytes(case: sweep.JSDCase, device: torch.device | None = None) -> dict[str, Any]:
    """``torch.add(x, y, out=out)`` at ``case``: the bytes a training step must move.

    It reads the input and the target once and writes one tensor of their size, as a
    step that ends in dL/dinput does. Timed as called (the harness's CUDA-events timer)
    and under a CUDA graph, with its host us per call; a measure that fails leaves
    ``<name>_error`` instead.
    """
    device = device or torch.device("cuda")
    x, y = sweep._inputs(case, device, 0)
    out = torch.empty_like(x)

    def add() -> torch.Tensor:
        return torch.add(x, y, out=out)

    found: dict[str, Any] = {}
    _guarded(found, "same_bytes_host_us", lambda: statistics.median(host_us(add).us[0]))
    _guarded(found, "same_bytes_ms", lambda: _as_called_ms(add, []))
    _guarded(found, "same_bytes_cudagraph_ms", lambda: graph_ms(add))
    return found


def step_ratios(row: dict[str, Any]) -> dict[str, float]:
    """Training step time / same-bytes time, as called and under a CUDA graph (where both
    are known): 1.0 is the step at the rate of torch.add moving the same bytes."""
    ratios = {}
    for mine, base, key in (
        ("median_ms", "same_bytes_ms", "step_over_same_bytes"),
        ("cudagraph_ms", "same_bytes_cudagraph_ms", "step_over_same_bytes_cudagraph"),
    ):
        if row.get(mine) and row.get(base):
            ratios[key] = row[mine] / row[base]
    return ratios


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


PROVIDERS = ["torch", "torch-compile", "liger", "triton"]


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    if "median_ms" not in row:
        return str(row["status"])
    return f"{row['median_ms']:.3f} / {_num(row.get('cudagraph_ms'), '.3f')}"


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _host(row: dict[str, Any], key: str, waits: str) -> str:
    """Host us per call, marked ``(waits)`` where the call blocked on the GPU."""
    text = _num(row.get(key), ".0f")
    return f"{text} (waits)" if row.get(waits) else text


def _ratio(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    called = row.get("step_over_same_bytes")
    graph = row.get("step_over_same_bytes_cudagraph")
    if called is None and graph is None:
        return "-"
    return f"{_num(called, '.2f')} / {_num(graph, '.2f')}"


def _points(rows: list[dict[str, Any]], grad: bool) -> list[tuple[int, int, str]]:
    keys = {(r["tokens"], r["vocab"], r["dtype"]) for r in rows if r["input_grad"] is grad}
    return sorted(keys, key=lambda k: (k[2], k[0]))


def _found(rows: list[dict[str, Any]], point: tuple[int, int, str], grad: bool) -> dict[str, Any]:
    return {
        r["provider"]: r
        for r in rows
        if (r["tokens"], r["vocab"], r["dtype"], r["input_grad"]) == (*point, grad)
    }


def _loss_only(rows: list[dict[str, Any]], providers: list[str]) -> list[str]:
    lines = [
        "## Loss only",
        "",
        "| BT x V | dtype | "
        + " | ".join(providers)
        + " | triton do_bench | read roofline | copy roofline"
        + " | triton % of read (as called) | (graph) | host us/call | torch add_ us |",
        "|" + " --- |" * (len(providers) + 9),
    ]
    for point in _points(rows, False):
        found = _found(rows, point, False)
        ours = found.get("triton", {})
        read, copy = ours.get("read_roofline_ms"), ours.get("copy_roofline_ms")
        called = read / ours["median_ms"] if read and "median_ms" in ours else None
        graph = read / ours["cudagraph_ms"] if read and ours.get("cudagraph_ms") else None
        tail = [
            _num(ours.get("do_bench_ms"), ".3f"),
            _num(read, ".3f"),
            _num(copy, ".3f"),
            _num(called, ".1%"),
            _num(graph, ".1%"),
            _host(ours, "host_us_per_call", "waits_for_gpu"),
            _num(ours.get("torch_add_host_us"), ".0f"),
        ]
        cells = [_cell(found.get(p)) for p in providers]
        lines.append(f"| {point[0]} x {point[1]} | {point[2]} | " + " | ".join(cells + tail) + " |")
    return [*lines, ""]


def _training_step(rows: list[dict[str, Any]], providers: list[str]) -> list[str]:
    lines = [
        "## Training step: forward + backward down to dL/dinput",
        "",
        "| BT x V | dtype | "
        + " | ".join(providers)
        + " | same bytes: torch.add | "
        + " | ".join(f"{p} / same bytes" for p in providers)
        + " | triton forward only | triton do_bench | roofline"
        + " | triton % of roofline (as called) | (graph)"
        + " | host us/step | host us/forward only | torch add_ us |",
        "|" + " --- |" * (2 * len(providers) + 11),
    ]
    for point in _points(rows, True):
        found = _found(rows, point, True)
        ours = found.get("triton", {})
        any_row: dict[str, Any] = next(iter(found.values()), {})
        same = any_row.get("same_bytes_ms")
        same_graph = any_row.get("same_bytes_cudagraph_ms")
        roof = ours.get("read_roofline_ms")
        called = roof / ours["median_ms"] if roof and "median_ms" in ours else None
        graph = roof / ours["cudagraph_ms"] if roof and ours.get("cudagraph_ms") else None
        forward = ours.get("forward_only_ms")
        forward_graph = ours.get("forward_only_cudagraph_ms")
        cells = [_cell(found.get(p)) for p in providers]
        cells.append(f"{_num(same, '.3f')} / {_num(same_graph, '.3f')}")
        cells += [_ratio(found.get(p)) for p in providers]
        cells += [
            f"{_num(forward, '.3f')} / {_num(forward_graph, '.3f')}" if forward else "-",
            _num(ours.get("do_bench_ms"), ".3f"),
            _num(roof, ".3f"),
            _num(called, ".1%"),
            _num(graph, ".1%"),
            _host(ours, "host_us_per_call", "waits_for_gpu"),
            _host(ours, "forward_only_host_us", "forward_only_waits_for_gpu"),
            _num(ours.get("torch_add_host_us"), ".0f"),
        ]
        lines.append(f"| {point[0]} x {point[1]} | {point[2]} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def table(rows: list[dict[str, Any]], device: str, read_bw: float, copy_bw: float) -> str:
    """The Markdown page of one run: loss only, then the training step, where they ran."""
    providers = [p for p in PROVIDERS if any(r["provider"] == p for r in rows)]
    lines = [
        f"# JSD loss on {device}",
        "",
        "Written by `benchmarks/jsd_forward.py` (all numbers from one process). Each time cell:",
        "median ms as called (the harness: CUDA events around each call, L2 cleared before",
        "each by a read) / median ms under a CUDA graph (`do_bench_cudagraph`, the GPU's time",
        "alone). `do_bench` is triton.testing.do_bench's median for our kernel: its flush",
        "writes 256 MB, and the timed call pays for writing those lines back.",
        f"Read roofline: a plain Triton kernel reading both inputs once, {read_bw / 1e12:.2f}"
        " TB/s at best;",
        f"copy roofline: a 4 GiB device-to-device copy, {copy_bw / 1e12:.2f} TB/s (read + write).",
        "Each roofline is the bytes the workload must move (read both inputs; with the",
        "gradient also write dL/dinput) at that rate.",
        "Training step: every provider timed doing the same work, the forward then",
        "`loss.backward()` down to dL/dinput, x.grad reset before each call (records: pass",
        "`full`). Same bytes: `torch.add(x, y, out=out)`, which reads x and y and writes one",
        "tensor, the traffic a step must move; `<provider> / same bytes` is the step's time",
        "over it, as called / graph (1.11 or less is a step at 90% or more of the same-bytes",
        "rate). Forward only: our forward alone, which computes dL/dinput (as Liger's does;",
        "torch's forward only records the autograd graph), as called / graph.",
        "Host us/call (per step, per forward only): our call's host time, median of batches",
        "of calls issued while the GPU is busy; torch add_ us: a torch elementwise launch",
        "(`add_` on a scalar) timed in the same batches, the host's speed at that point.",
        "`(waits)`: the call blocked the host until the GPU caught up (a host sync, such as",
        "a device-to-host copy): its host us include the GPU's time, and a CUDA graph cannot",
        "capture it.",
        "",
    ]
    if any(r["input_grad"] is False for r in rows):
        lines += _loss_only(rows, providers)
    if any(r["input_grad"] is True for r in rows):
        lines += _training_step(rows, providers)
    return "\n".join(lines) + "\n"


def measure(
    case: sweep.JSDCase,
    providers: list[str],
    device: torch.device,
    copy_bw: float,
    write: Callable[[ki.models.RecordBundle], Any],
) -> list[dict[str, Any]]:
    """Record and measure every provider at ``case``: one row each, in provider order.

    Each provider's record (written with ``write``) comes from :func:`sweep.run_case`, as
    ``kernelindex bench jsd`` makes it; a passed one gets its :func:`side_measures`. With
    the gradient every row also carries the same-bytes reference (measured once per case)
    and the step's ratios to it.
    """
    same: dict[str, Any] = {}
    if case.input_grad:
        try:
            same = same_bytes(case, device)
        except Exception as err:  # no inputs for it (out of memory, say): the rows stand
            same = {"same_bytes_error": f"{type(err).__name__}: {err}"[:200]}
    rows = []
    for provider in providers:
        record = sweep.run_case(provider, case, device)
        write(record)
        row = summarize(record, copy_bw)
        if row["status"] == "passed":
            try:
                row.update(side_measures(provider, case, device))
            except Exception as err:  # a side measure failed: keep the record's row
                row["side_error"] = f"{type(err).__name__}: {err}"[:200]
        read = row.get("read_roofline_ms")
        if read:
            reads = 2 * case.tokens * case.vocab * case.torch_dtype.itemsize
            row["read_bandwidth"] = reads / (read * 1e-3)
            # With the gradient the workload also writes dL/dinput: at the read rate.
            row["read_roofline_ms"] = read * (1.5 if case.input_grad else 1.0)
        row.update(same)
        row.update(step_ratios(row))
        rows.append(row)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


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
    with JSONLinesWriter(args.records) as out:
        for case in points:
            for row in measure(case, providers, device, copy_bw, out.write):
                rows.append(row)
                shown = f"{row['median_ms']:.4f} ms" if "median_ms" in row else row["status"]
                graph = row.get("cudagraph_ms")
                host = row.get("host_us_per_call")
                extra = f" graph {graph:.4f} host {host:.0f}us" if graph and host else ""
                ratio = row.get("step_over_same_bytes")
                extra += f" step/same-bytes {ratio:.2f}" if ratio else ""
                point = f"{row['dtype']} {row['tokens']:5} grad={row['input_grad']!s:5}"
                print(f"{row['provider']:14} {point} {shown}{extra}", flush=True)
    read_bw = max((r["read_bandwidth"] for r in rows if r.get("read_bandwidth")), default=0.0)
    facts = gpu_facts()
    name = facts["device"]
    summary = {
        **facts,
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
