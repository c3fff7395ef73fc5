"""JSD loss forward on one GPU: our Triton kernel and its peers, side by side in one process.

For every point (BT x V x dtype, loss alone and with dL/dinput) each provider is checked
against a float64 reference and timed through the harness (triton.testing.do_bench,
quantiles 0.5/0.2/0.8 of >= 100 samples, L2 flushed), which writes one record per run.
Beside them: the achievable bandwidth from a device-to-device copy, and, for our kernel,
a bare do_bench of the same call, to show the harness adds nothing to the median.

    PYTHONPATH=src python3 benchmarks/jsd_forward.py --records R.jsonl --summary S.json \
        --table T.md [--impl torch,torch-compile,triton,liger]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import torch
from triton.testing import do_bench

import kernelindex_sdk as ki
from kernelindex_sdk.documents import JSONLinesWriter, write_json
from kernelindex_sdk.reference_kernels.device import select_device
from kernelindex_sdk.reference_kernels.jsd import fused, sweep

COPY_BYTES = 4 * 2**30


def copy_bandwidth() -> float:
    """Bytes read plus written per second by a 4 GiB device-to-device copy."""
    src = torch.empty(COPY_BYTES // 4, device="cuda", dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    ms = float(do_bench(lambda: dst.copy_(src), return_mode="median"))
    return 2 * COPY_BYTES / (ms * 1e-3)


def bare_do_bench_ms(case: sweep.JSDCase) -> float:
    """Median of a plain do_bench of jsd_triton on fresh inputs of ``case``, as Liger times."""
    shape = (case.tokens, case.vocab)
    x = torch.randn(shape, device="cuda").log_softmax(-1).to(case.torch_dtype)
    y = torch.randn(shape, device="cuda").log_softmax(-1).to(case.torch_dtype)
    x.requires_grad_(case.input_grad)

    def call() -> torch.Tensor:
        with torch.set_grad_enabled(case.input_grad):
            return fused.jsd_triton(x, y, beta=case.beta)

    grads = [x] if case.input_grad else None
    return float(do_bench(call, grad_to_none=grads, quantiles=[0.5, 0.2, 0.8])[0])


def summarize(record: ki.models.RecordBundle, bandwidth: float) -> dict[str, Any]:
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
    }
    if run.timing is None:
        row["failure"] = run.failure.message if run.failure else None
        return row
    stats = {m.statistic: m.value for m in run.measurements or () if m.metric == "latency"}
    moved = run.workload.bytes_moved if run.workload else None
    roofline_ms = moved / bandwidth * 1e3 if moved else None
    median_ms = run.timing.latency_ns.median / 1e6  # type: ignore[operator]
    row.update(
        median_ms=median_ms,
        p20_ms=stats["p20"] / 1e6,
        p80_ms=stats["p80"] / 1e6,
        samples=run.timing.samples,
        roofline_ms=roofline_ms,
        vs_roofline=median_ms / roofline_ms if roofline_ms else None,
        config=run.implementation.config if run.implementation else None,
    )
    return row


def table(rows: list[dict[str, Any]], device: str, bandwidth: float) -> str:
    providers = ["torch", "torch-compile", "liger", "triton"]
    lines = [
        f"# JSD loss forward on {device}",
        "",
        "Written by `benchmarks/jsd_forward.py` (all numbers from one process); records in",
        "`benchmarks/results/jsd_forward_h200.jsonl`, summary in `jsd_forward_h200.json`.",
        "Achievable bandwidth (4 GiB device-to-device copy, read + write):"
        f" {bandwidth / 1e12:.2f} TB/s.",
        "Roofline: the bytes the workload must move (read both inputs; with the gradient also",
        "write dL/dinput once) over that bandwidth. Median ms of >= 100 samples, L2 flushed.",
        "Liger computes the gradient in every forward; `torch` and `torch-compile` with",
        "dL/dinput build the autograd graph (gradient computed at backward, not timed).",
        "",
    ]
    for grad in (False, True):
        lines.append("## Loss and gradient in one forward" if grad else "## Loss only")
        lines.append("")
        header = "| BT x V | dtype | " + " | ".join(providers) + " | roofline | triton / roofline |"
        lines += [header, "|" + " --- |" * (len(providers) + 4)]
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
            cells = []
            for p in providers:
                r = found.get(p)
                cells.append(
                    "-"
                    if r is None
                    else f"{r['median_ms']:.3f}"
                    if "median_ms" in r
                    else r["status"]
                )
            ours = found.get("triton", {})
            roof = ours.get("roofline_ms")
            ratio = ours.get("vs_roofline")
            tail = f" {roof:.3f} | {ratio:.3f} |" if roof and ratio else " - | - |"
            lines.append(f"| {tokens} x {vocab} | {dtype} | " + " | ".join(cells) + " |" + tail)
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--impl", default="torch,torch-compile,triton,liger")
    parser.add_argument("--tokens", default="1024,2048,4096,8192")
    parser.add_argument("--vocab", default="128256")
    parser.add_argument("--dtype", default="fp32,bf16")
    parser.add_argument("--records", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--table", required=True)
    args = parser.parse_args()
    device = select_device()
    if device.type != "cuda":
        print("this benchmark needs a CUDA GPU", file=sys.stderr)
        return 2
    providers = [p for p in args.impl.split(",") if p != "liger" or sweep.liger_available()]
    bandwidth = copy_bandwidth()
    points = sweep.cases(
        [int(t) for t in args.tokens.split(",")],
        [int(v) for v in args.vocab.split(",")],
        args.dtype.split(","),
        input_grad=(False, True),
    )
    rows = []
    with JSONLinesWriter(args.records) as out:
        for case in points:
            for provider in providers:
                record = sweep.run_case(provider, case, device)
                out.write(record)
                row = summarize(record, bandwidth)
                if provider == "triton" and row["status"] == "passed":
                    row["bare_do_bench_ms"] = bare_do_bench_ms(case)
                    row["harness_vs_bare"] = row["median_ms"] / row["bare_do_bench_ms"]
                rows.append(row)
                torch.cuda.empty_cache()
                shown = f"{row['median_ms']:.4f} ms" if "median_ms" in row else row["status"]
                point = f"{row['dtype']} {row['tokens']:5} grad={row['input_grad']!s:5}"
                print(f"{row['provider']:14} {point} {shown}", flush=True)
    name = torch.cuda.get_device_name(device)
    summary = {
        "device": name,
        "torch": str(torch.__version__),
        "copy_bandwidth_bytes_per_s": bandwidth,
        "providers": providers,
        "rows": rows,
    }
    write_json(args.summary, summary)
    with open(args.table, "w", encoding="utf-8") as f:
        f.write(table(rows, name, bandwidth))
    print(table(rows, name, bandwidth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
