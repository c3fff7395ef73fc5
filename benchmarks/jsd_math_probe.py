"""Float32 JSD on the GPU: accuracy against Liger's float32 reference and speed, per math path.

For each float32 (FORM, OPS) of fused.py (PAIR with PTX; NATS with libdevice; NATS with
tl.exp/tl.log, Liger's own math):
the largest |ours - ref| / |ref| of the loss over Liger's test shapes and betas (their test
asks rtol 1e-6, atol 1e-7), and the CUDA-graph median at 1024 and 8192 x 128256, loss only
and with the gradient. Also whether calls take the compiled kernel's own launcher.
    PYTHONPATH=src python3 benchmarks/jsd_math_probe.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch
from jsd_forward import host_us
from triton.testing import do_bench_cudagraph

from kernelindex_sdk.reference_kernels.jsd import fused, jsd_torch, jsd_triton
from kernelindex_sdk.reference_kernels.jsd.reference import check_jsd_inputs

SHAPES = [(2 * 4096, 32000), (41 * 401, 1271), (4096, 128256), (3 * 423, 32000)]


def liger_reference(x: torch.Tensor, y: torch.Tensor, beta: float) -> torch.Tensor:
    kl = torch.nn.KLDivLoss(reduction="batchmean", log_target=True)
    log_m = torch.log(beta * torch.exp(y) + (1 - beta) * torch.exp(x))
    return beta * kl(log_m, y) + (1 - beta) * kl(log_m, x)  # type: ignore[no-any-return]


def _per_call_us(fn: Any, calls: int = 200) -> float:
    return host_us(fn, calls=calls, batches=1)[0][0]


def host_breakdown() -> dict[str, float]:
    """Host microseconds per call of jsd_triton and of its parts, GPU kept busy."""
    x = torch.randn(1024, 4096, device="cuda").log_softmax(-1)
    y = torch.randn(1024, 4096, device="cuda").log_softmax(-1)
    xg = x.clone().requires_grad_()
    fused.FLOAT32_CUDA = (fused.PAIR, fused.PTX)
    fused._PLANS.clear()
    jsd_triton(x, y)
    out = {
        "torch_add_": _per_call_us(lambda: x.add_(0.0)),
        "torch_empty_scalar": _per_call_us(lambda: torch.empty((), device="cuda")),
        "check_jsd_inputs": _per_call_us(lambda: check_jsd_inputs(x, y, 0.5, None)),
        "jsd_triton_loss": _per_call_us(lambda: jsd_triton(x, y)),
        "jsd_triton_grad": _per_call_us(lambda: jsd_triton(xg, y)),
        "torch_sum": _per_call_us(x.sum),
    }
    return out


def config_sweep() -> dict[str, float]:
    """CUDA-graph ms of a few table candidates at 1024 x 128256 (fp32 grad, bf16 loss)."""
    fused.FLOAT32_CUDA = (fused.PAIR, fused.PTX)
    out = {}
    table = fused.CONFIG_TABLE["sm_90"]
    original = dict(table)
    candidates = [
        (4096, 16, 4),
        (8192, 32, 4),
        (8192, 16, 4),
        (16384, 32, 4),
        (4096, 16, 8),
    ]
    for dtype, grad in ((torch.float32, True), (torch.bfloat16, False), (torch.float32, False)):
        x = torch.randn(1024, 128256, device="cuda").log_softmax(-1).to(dtype)
        y = torch.randn(1024, 128256, device="cuda").log_softmax(-1).to(dtype)
        x.requires_grad_(grad)
        for config in candidates:
            table[(dtype.itemsize, grad)] = (*config, False)
            fused._PLANS.clear()
            with torch.cuda.stream(torch.cuda.Stream()):
                ms = do_bench_cudagraph(lambda: jsd_triton(x, y), rep=20)  # noqa: B023
            out[f"{dtype}-grad{grad}-{config}"] = ms
        table.update(original)
    fused._PLANS.clear()
    return out


def half_forms() -> dict[str, Any]:
    """bf16 per half form: CUDA-graph ms at 1024/8192 x 128256 and the loss's error (LEAN:
    the loss only)."""
    out: dict[str, Any] = {}
    for label, form in (("lean", fused.LEAN), ("split", fused.SPLIT), ("base2", fused.BASE2)):
        # LEAN computes no gradient: with it, the gradient rows keep SPLIT.
        fused.HALF_LOSS_CUDA = (form, fused.PTX)
        fused.HALF_CUDA = (fused.SPLIT if form == fused.LEAN else form, fused.PTX)
        fused._PLANS.clear()
        row: dict[str, Any] = {}
        for bt in (1024, 8192):
            x = torch.randn(bt, 128256, device="cuda").log_softmax(-1).to(torch.bfloat16)
            y = torch.randn(bt, 128256, device="cuda").log_softmax(-1).to(torch.bfloat16)
            ref = jsd_torch(x.double(), y.double(), beta=0.37)
            row[f"{bt}-rel-error"] = float((jsd_triton(x, y, beta=0.37).double() - ref) / ref)
            with torch.cuda.stream(torch.cuda.Stream()):
                row[f"{bt}-loss"] = do_bench_cudagraph(lambda: jsd_triton(x, y), rep=20)  # noqa: B023
                if form != fused.LEAN:
                    xg = x.clone().requires_grad_()
                    row[f"{bt}-grad"] = do_bench_cudagraph(lambda: jsd_triton(xg, y), rep=20)  # noqa: B023
        out[label] = row
        print(label, row, flush=True)
    fused.HALF_CUDA = (fused.SPLIT, fused.PTX)
    fused.HALF_LOSS_CUDA = (fused.LEAN, fused.PTX)
    return out


def main() -> int:
    out = {}
    variants = {
        "pair-ptx": (fused.PAIR, fused.PTX),
    }
    for label, mode in variants.items():
        fused.FLOAT32_CUDA = mode
        fused._PLANS.clear()
        worst = 0.0
        for bt, v in SHAPES:
            torch.manual_seed(42)
            x = torch.randn(bt, v, device="cuda").log_softmax(-1)
            y = torch.randn(bt, v, device="cuda").log_softmax(-1)
            for beta in (0.1, 0.5, 0.9):
                ref = liger_reference(x, y, beta)
                got = jsd_triton(x, y, beta=beta)
                worst = max(worst, float((got - ref).abs() / ref.abs()))
        times = {}
        for bt in (1024, 8192):
            x = torch.randn(bt, 128256, device="cuda").log_softmax(-1)
            y = torch.randn(bt, 128256, device="cuda").log_softmax(-1)
            with torch.cuda.stream(torch.cuda.Stream()):
                times[f"{bt}-loss"] = do_bench_cudagraph(lambda: jsd_triton(x, y), rep=20)  # noqa: B023
                xg = x.clone().requires_grad_()
                times[f"{bt}-grad"] = do_bench_cudagraph(lambda: jsd_triton(xg, y), rep=20)  # noqa: B023
        out[label] = {"worst_rel": worst, "ms": times}
        print(label, out[label], flush=True)
    fused.FLOAT32_CUDA = (fused.PAIR, fused.PTX)
    out["half"] = half_forms()
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
