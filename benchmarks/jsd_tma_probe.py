"""Does Hopper's tensor memory accelerator (TMA) move the bf16 forward with the gradient faster?

The forward with the gradient reads X and Y and writes dL/dinput: the same bytes as
``torch.add(x, y, out=out)``. In bf16 our kernel reaches 93.8-94.0% of that rate at
4096-8192 x 128256 (issue 24 asks for 95%), while the loss alone (no write) reaches the
read roofline. This probe times, in one process and interleaved rounds of CUDA-graph
medians, the production forward beside one probe kernel written four ways, all with
FOLD's arithmetic on tiles of R x 256 values of the flat BT*V row:

- ``ptr``: pointer loads and stores, as the production kernel does (the control);
- ``tma_load``: X and Y read through host-made tensor descriptors (TMA), dx by pointer;
- ``tma_store``: pointer loads, dx written through a descriptor;
- ``tma_both``: both through descriptors.

Every variant's dx is compared with the production kernel's bit for bit, and its loss
within 2^-8 relative (the production loss is rounded to bf16), before it is timed.

    PYTHONPATH=src:benchmarks python3 benchmarks/jsd_tma_probe.py > results.json
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl
from triton.testing import do_bench_cudagraph
from triton.tools.tensor_descriptor import TensorDescriptor

from kernelindex_sdk.reference_kernels.jsd import fused

V = 128256
C = 256  # a TMA box holds at most 256 values along each dimension
BETA = 0.5
ROUNDS = 3 if os.environ.get("KI_PROBE_ROUND") in ("2", "3", "4") else 2


@triton.jit
def probe_kernel(
    x_ptr,
    y_ptr,
    dx_ptr,
    x_desc,
    y_desc,
    dx_desc,
    partial_ptr,
    n_tiles,
    beta,
    log2_beta,
    log2_one_minus_beta,
    grad_scale,
    R: tl.constexpr,  # noqa: N803
    C: tl.constexpr,  # noqa: N803
    TMA_LOAD: tl.constexpr,  # noqa: N803
    TMA_STORE: tl.constexpr,  # noqa: N803
    STAGES: tl.constexpr,  # noqa: N803
    OPS: tl.constexpr,  # noqa: N803
):
    i_p = tl.program_id(0)
    n_p = tl.num_programs(0)
    inv_scale = 1.0 / grad_scale
    log2_one_minus_beta = log2_one_minus_beta + tl.log2(grad_scale)
    b_acc = tl.zeros([R, C], dtype=tl.float32)
    b_acc_p = tl.zeros([R, C], dtype=tl.float32)
    b_acc_q = tl.zeros([R, C], dtype=tl.float32)
    o_t = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    start = i_p.to(tl.int64) * (R * C)
    step = n_p.to(tl.int64) * (R * C)
    row = i_p * R
    for _ in tl.range(i_p, n_tiles, n_p, num_stages=STAGES):
        if TMA_LOAD:
            b_x = x_desc.load([row, 0])
            b_y = y_desc.load([row, 0])
        else:
            b_x = tl.load(x_ptr + start + o_t, eviction_policy="evict_first")
            b_y = tl.load(y_ptr + start + o_t, eviction_policy="evict_first")
        b_acc, b_acc_p, b_acc_q, b_g = fused._tile(
            b_acc,
            b_acc_p,
            b_acc_q,
            b_x,
            b_y,
            beta,
            log2_beta,
            log2_one_minus_beta,
            grad_scale,
            inv_scale,
            2,
            "fold",
            OPS,
        )
        b_dx = b_g.to(tl.bfloat16)
        if TMA_STORE:
            dx_desc.store([row, 0], b_dx)
        else:
            tl.store(dx_ptr + start + o_t, b_dx, cache_modifier=".cs")
        start += step
        row += n_p * R
    log2e = 1.4426950408889634
    partial = tl.sum(tl.sum(b_acc, axis=1), axis=0)
    partial += log2e * (
        tl.sum(tl.sum(b_acc_p, axis=1), axis=0)
        + tl.sum(tl.sum(b_acc_q, axis=1), axis=0) * inv_scale
    )
    tl.store(partial_ptr + i_p, partial)


def _ops() -> str:
    return "tl" if fused._INTERPRET else "ptx"


def make_probe(
    x: torch.Tensor,
    y: torch.Tensor,
    r: int,
    warps: int,
    per_sm: int,
    stages: int,
    tma_load: bool,
    tma_store: bool,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """A call of the probe kernel on x, y (contiguous, BT*V divisible by r * 256)."""
    n = x.numel()
    if n % (r * C):
        raise ValueError(f"BT*V = {n} is not a multiple of {r * C}")
    n_tiles = n // (r * C)
    sms = fused._sm_count(x.device)
    programs = min(n_tiles, sms * per_sm)
    dx = torch.empty_like(x)
    partials = torch.empty(programs, device=x.device, dtype=torch.float32)
    shape2 = (n // C, C)
    x2, y2, dx2 = x.view(shape2), y.view(shape2), dx.view(shape2)
    descs = [TensorDescriptor.from_tensor(t, [r, C]) for t in (x2, y2, dx2)]
    unit = math.log(2.0)
    bt = x.shape[0]
    grad_scale = unit / bt

    def call() -> tuple[torch.Tensor, torch.Tensor]:
        probe_kernel[(programs,)](
            x,
            y,
            dx,
            *descs,
            partials,
            n_tiles,
            BETA,
            math.log2(BETA),
            math.log2(1.0 - BETA),
            grad_scale,
            R=r,
            C=C,
            TMA_LOAD=tma_load,
            TMA_STORE=tma_store,
            STAGES=stages,
            OPS=_ops(),
            num_warps=warps,
        )
        return partials.sum() * unit / bt, dx

    return call


ORIGINAL_ENTRY = fused.CONFIG_TABLE["sm_90"][(2, True)]


def _production(x: torch.Tensor, y: torch.Tensor) -> Callable[[], Any]:
    return _production_with(x, y, ORIGINAL_ENTRY)


def _graph(fn: Callable[[], Any]) -> float:
    with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
        return float(do_bench_cudagraph(fn, rep=20, return_mode="median"))


KINDS = ("ptr", "tma_load", "tma_store", "tma_both")
CONFIGS = (
    (8, 8, 4, 3),
    (4, 4, 8, 3),
    (8, 8, 4, 4),
    (16, 8, 2, 3),
    (8, 4, 4, 3),
    (8, 8, 4, 5),
    (4, 4, 8, 5),
)
# The second round: pointer loads only, around the first round's best (8, 4, 4, 3).
if os.environ.get("KI_PROBE_ROUND") == "2":
    KINDS = ("ptr",)
    CONFIGS = (
        (8, 4, 4, 3),
        (8, 4, 5, 3),
        (8, 4, 6, 3),
        (8, 4, 8, 3),
        (8, 4, 4, 2),
        (8, 4, 4, 4),
        (16, 8, 3, 3),
        (16, 4, 2, 3),
        (16, 4, 3, 3),
        (8, 2, 8, 3),
        (4, 2, 8, 3),
        (4, 2, 12, 3),
        (16, 8, 4, 3),
        (4, 4, 8, 2),
        (8, 4, 3, 3),
    )
# The third round: the production kernel's table only, at 1024-8192 rows.
ROUND3 = os.environ.get("KI_PROBE_ROUND") in ("3", "4")
if ROUND3:
    KINDS = ()
VARIANTS: dict[str, tuple[int, int, int, int, bool, bool]] = {
    f"{kind}_{r * C}_{w}_{p}_st{s}": (
        r,
        w,
        p,
        s,
        kind in ("tma_load", "tma_both"),
        kind in ("tma_store", "tma_both"),
    )
    for kind in KINDS
    for r, w, p, s in CONFIGS
}
# The production kernel with other entries of its table for bf16 with the gradient.
TABLE_ENTRIES = ((2048, 4, 4, 3), (2048, 4, 5, 3), (4096, 8, 2, 3), (2048, 4, 6, 3))
if ROUND3:
    TABLE_ENTRIES = (
        (2048, 4, 4, 3),
        (4096, 4, 2, 3),
        (4096, 4, 2, 4),
        (2048, 4, 4, 4),
        (1024, 2, 8, 3),
        (4096, 4, 3, 3),
        (8192, 8, 1, 3),
        (8192, 8, 2, 3),
        (4096, 8, 2, 3),
        (2048, 4, 3, 3),
    )
# The fourth: around the third's two best, (2048, 4, 4, 3) and (8192, 8, 1, 3).
if os.environ.get("KI_PROBE_ROUND") == "4":
    TABLE_ENTRIES = (
        (2048, 4, 4, 3),
        (8192, 8, 1, 3),
        (8192, 8, 1, 2),
        (8192, 8, 1, 4),
        (8192, 16, 1, 3),
        (16384, 16, 1, 3),
        (16384, 16, 1, 2),
        (4096, 8, 1, 3),
        (4096, 4, 1, 3),
        (8192, 4, 1, 3),
        (16384, 32, 1, 3),
        (4096, 8, 2, 4),
    )
SHAPES = (1024, 2048, 4096, 8192) if ROUND3 else (4096, 8192)


def _production_with(
    x: torch.Tensor, y: torch.Tensor, entry: tuple[int, int, int, int]
) -> Callable[[], Any]:
    def call() -> Any:
        fused.CONFIG_TABLE["sm_90"][(2, True)] = entry
        fused._PLANS.clear()
        return fused._launch(x, y, BETA, None, -100, True)

    return call


def _shape(bt: int) -> dict[str, Any]:
    """Checks and graph medians of every variant at bt x V, bf16."""
    g = torch.Generator(device="cuda").manual_seed(bt)
    x = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).bfloat16()
    y = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).bfloat16()
    sink = torch.empty_like(x)
    ref_loss, ref_dx = _production(x, y)()
    assert ref_dx is not None
    checks: dict[str, Any] = {}
    calls: dict[str, Callable[[], Any]] = {
        "same_bytes": lambda: torch.add(x, y, out=sink),
        "production": _production(x, y),
    }
    if os.environ.get("KI_PROBE_ROUND") in ("2", "3", "4"):
        for entry in TABLE_ENTRIES:
            call = _production_with(x, y, entry)
            name = "table_" + "_".join(map(str, entry))
            loss, dx = call()
            checks[name] = {"dx_bitwise_equal": bool(torch.equal(dx, ref_dx))}
            if checks[name]["dx_bitwise_equal"]:
                calls[name] = call
    for name, spec in VARIANTS.items():
        try:
            call = make_probe(x, y, *spec)
            loss, dx = call()
            torch.cuda.synchronize()
        except Exception as error:
            checks[name] = f"{type(error).__name__}: {error}"[:300]
            continue
        same = bool(torch.equal(dx, ref_dx))
        rel = abs(float(loss) - float(ref_loss)) / abs(float(ref_loss))
        checks[name] = {"dx_bitwise_equal": same, "loss_rel": rel}
        if same and rel < 2.0**-8:
            calls[name] = call
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, call in calls.items():
            times[name].append(_graph(call))
    same_bytes = min(times["same_bytes"])
    ranked = sorted(times.items(), key=lambda kv: min(kv[1]))
    return {
        "checks": checks,
        "graph_ms": times,
        "same_bytes_over_best": {name: round(same_bytes / min(t), 4) for name, t in ranked},
    }


def main() -> int:
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "variants": {k: list(v) for k, v in VARIANTS.items()},
    }
    for bt in SHAPES:
        out[f"bfloat16-{bt}"] = result = _shape(bt)
        print(json.dumps({bt: result["same_bytes_over_best"]}), file=sys.stderr)
        torch.cuda.empty_cache()
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
