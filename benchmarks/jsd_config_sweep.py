"""Time every launch configuration of the fused JSD kernel, one by one, beside a copy.

This is the sweep behind CONFIG_TABLE in reference_kernels/jsd/fused.py: it launches the
kernel with each config and prints each one's median, so the table can be chosen from data
(results/jsd_config_sweep_h200.json holds a run of an earlier version of the kernel, with
and without its MUFU approximations). Run on a GPU:
`PYTHONPATH=src python3 benchmarks/jsd_config_sweep.py [--out FILE]`.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import triton
from triton.testing import do_bench

from kernelindex_sdk.reference_kernels.jsd import fused

# The space swept: (BLOCK_V, num_warps) pairs times programs per SM. CONFIG_TABLE keeps
# the fastest of these per element size and gradient.
CONFIGS = [
    (block, warps, per_sm)
    for block, warps in ((2048, 4), (2048, 8), (4096, 16), (8192, 16), (8192, 32), (16384, 32))
    for per_sm in (1, 2, 4, 8)
]


def _time_config(
    x: torch.Tensor, y: torch.Tensor, dx: torch.Tensor, config: tuple[int, int, int], grad: bool
) -> float:
    block, warps, per_sm = config
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    n = x.numel()
    programs = min(triton.cdiv(n, block), sms * per_sm)
    partials = torch.empty(programs, device="cuda", dtype=torch.float32)
    ticket = torch.zeros((), device="cuda", dtype=torch.int32)
    loss = torch.empty((), device="cuda", dtype=x.dtype)
    half = fused.HALF_CUDA if grad else fused.HALF_LOSS_CUDA
    form, ops = fused.FLOAT32_CUDA if x.dtype == torch.float32 else half
    unit = fused._loss_unit(form, 2)

    def run() -> None:
        # The flat layout jsd_triton uses without labels: one row of BT*V, beta 0.5.
        fused.jsd_fwd_kernel[(programs,)](
            x, y, x, dx, partials, ticket, loss, 1, n, 0, 0, 0, 0.5, -1.0, -1.0, unit,
            1.0 / x.shape[0], -100, BETA_MODE=2, HAS_LABELS=False, COMPUTE_GRAD=grad,
            FORM=form, OPS=ops, BLOCK_V=block, BLOCK_P=triton.next_power_of_2(programs),
            BLOCK_L=1024, FLAT=True, STAGES=1, num_warps=warps,
        )  # fmt: skip

    return float(do_bench(run, return_mode="median"))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[1024, 8192])
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        for bt in args.tokens:
            x = torch.randn(bt, args.vocab, device="cuda", dtype=dtype).log_softmax(-1)
            y = torch.randn(bt, args.vocab, device="cuda", dtype=dtype).log_softmax(-1)
            dx = torch.empty_like(x)
            copy_out = torch.empty_like(x)
            # A copy of one input moves as many bytes as reading both: the loss-only roofline.
            roofline = float(do_bench(lambda: copy_out.copy_(x), return_mode="median"))  # noqa: B023
            for grad in (False, True):
                for config in CONFIGS:
                    ms = _time_config(x, y, dx, config, grad)
                    rows.append(
                        {
                            "dtype": str(dtype).removeprefix("torch."),
                            "tokens": bt,
                            "grad": grad,
                            "block": config[0],
                            "warps": config[1],
                            "per_sm": config[2],
                            "ms": ms,
                            "roofline_ms": roofline * (1.5 if grad else 1.0),
                        }
                    )
    keys = sorted({(r["dtype"], r["tokens"], r["grad"]) for r in rows})
    for key in keys:
        group = [r for r in rows if (r["dtype"], r["tokens"], r["grad"]) == key]
        for r in sorted(group, key=lambda r: r["ms"])[:3]:
            ratio = r["ms"] / r["roofline_ms"]
            print(key, r["block"], r["warps"], r["per_sm"], f"{r['ms']:.4f} ms x{ratio:.3f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
