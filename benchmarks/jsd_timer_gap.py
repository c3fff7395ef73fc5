"""Is the gap between do_bench and do_bench_cudagraph our kernel's, or the timer's?

Times, in one process, the plain read-stream kernel of jsd_forward.py (no host work beyond
one launch) and jsd_triton loss-only on the same inputs with both timers: if the read
kernel shows the same as-called / GPU-only ratio, the gap comes from the timing protocol
(the L2 flush before each do_bench call), not from our host path.
    PYTHONPATH=src python3 benchmarks/jsd_timer_gap.py
"""

from __future__ import annotations

import json
import sys

import torch
import triton
from jsd_forward import READ_CONFIGS, _read_kernel
from triton.testing import do_bench, do_bench_cudagraph

from kernelindex_sdk.reference_kernels.jsd import jsd_triton


def _both(fn: object) -> tuple[float, float]:
    events = float(do_bench(fn, warmup=25, rep=200, return_mode="median"))  # type: ignore[arg-type]
    with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
        graph = float(do_bench_cudagraph(fn, rep=50, return_mode="median"))  # type: ignore[arg-type]
    return events, graph


def main() -> int:
    out = {}
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for dtype in (torch.float32, torch.bfloat16):
        for bt in (1024, 8192):
            x = torch.randn(bt, 128256, device="cuda").log_softmax(-1).to(dtype)
            y = torch.randn(bt, 128256, device="cuda").log_softmax(-1).to(dtype)
            n = x.numel()
            part = torch.empty(sms * 8, device="cuda")
            block, warps, per_sm = READ_CONFIGS[2]
            grid = (min(triton.cdiv(n, block), sms * per_sm),)

            def read(grid: tuple[int] = grid, block: int = block, warps: int = warps) -> None:
                _read_kernel[grid](x, y, part, n, BLOCK=block, num_warps=warps)  # noqa: B023

            read()
            jsd_triton(x, y)
            key = f"{str(dtype).removeprefix('torch.')}-{bt}"
            out[f"{key}-read"] = _both(read)
            out[f"{key}-jsd_triton"] = _both(lambda: jsd_triton(x, y))  # noqa: B023
            print(key, out[f"{key}-read"], out[f"{key}-jsd_triton"], flush=True)
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
