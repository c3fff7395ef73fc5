"""Fused Triton JSD loss forward: one streaming pass over both inputs, loss and optional gradient.

loss = sum_rows w_r * sum_v l(x, y) / n with l = beta*P*(Y - log M) + (1-beta)*Q*(X - log M),
P = e^Y, Q = e^X, M = beta*P + (1-beta)*Q (beta 0 and 1: the KL divergences); X, Y are (BT, V).
dl/dX = (1-beta)*Q*(X - log M) (see README.md beside this file for beta 0 and 1).

The (BT, V) matrix is cut into tiles of one row by BLOCK_V columns; a persistent grid of
programs strides over the tiles, so a small BT still fills the GPU. Each program keeps
a float32 partial sum; a second, one-program kernel adds the partials in a fixed
order (deterministic) and divides by the number of rows kept.
"""

from __future__ import annotations

import math
import os
from typing import Any

import torch
import triton
import triton.language as tl

from .reference import check_jsd_inputs

__all__ = ["jsd_triton"]

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"

# The three fastest configs of each of fp32 and bf16, loss alone and with the gradient, at
# 1024 and 8192 rows of 128256 in benchmarks/jsd_config_sweep.py on one H200 (sm_90;
# results/jsd_config_sweep_h200.json). None is specific to sm_90: on the B200 (sm_100)
# autotuning picks among them per device and shape.
AUTOTUNE_CONFIGS = [
    triton.Config({"BLOCK_V": block, "PROGRAMS_PER_SM": per_sm}, num_warps=warps)
    for block, warps, per_sm in (
        (2048, 8, 4),
        (4096, 16, 8),
        (8192, 16, 2),
        (8192, 16, 4),
        (8192, 32, 4),
        (8192, 32, 8),
        (16384, 32, 1),
        (16384, 32, 4),
        (16384, 32, 8),
    )
]
MAX_PROGRAMS_PER_SM = 8
# The interpreter runs every config when autotuning; one small config keeps CPU tests fast.
INTERPRETER_CONFIGS = [triton.Config({"BLOCK_V": 128, "PROGRAMS_PER_SM": 2}, num_warps=1)]

LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)
LN2: tl.constexpr = tl.constexpr(0.6931471805599453)


@triton.jit
def _exp2(x, FAST: tl.constexpr):
    # ex2.approx.ftz is one MUFU instruction; plain exp2 adds denormal handling around it.
    if FAST:
        return tl.inline_asm_elementwise(
            "ex2.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return tl.exp2(x)


@triton.jit
def _log2(x, FAST: tl.constexpr):
    if FAST:
        return tl.inline_asm_elementwise(
            "lg2.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return tl.log2(x)


@triton.autotune(
    configs=INTERPRETER_CONFIGS if _INTERPRET else AUTOTUNE_CONFIGS,
    key=["V", "BT_BUCKET", "BETA_MODE", "HAS_LABELS", "COMPUTE_GRAD"],
)
@triton.jit
def jsd_fwd_kernel(
    x_ptr,
    y_ptr,
    labels_ptr,
    count_ptr,
    dx_ptr,
    partial_ptr,
    BT,
    V,
    stride_x,
    stride_y,
    stride_dx,
    log2_beta,
    log2_one_minus_beta,
    unit,
    grad_scale,
    ignore_index,
    BT_BUCKET: tl.constexpr,
    BETA_MODE: tl.constexpr,
    HAS_LABELS: tl.constexpr,
    COMPUTE_GRAD: tl.constexpr,
    FAST_MATH: tl.constexpr,
    BLOCK_V: tl.constexpr,
    PROGRAMS_PER_SM: tl.constexpr,
):
    # For 0 < beta < 1 the sum accumulates in base 2 (l / ln 2): the host's `unit` (ln 2)
    # scales the total and the gradient once, instead of every element.
    i_p = tl.program_id(0)
    n_p = tl.num_programs(0)
    n_col_blocks = tl.cdiv(V, BLOCK_V)
    n_tiles = BT * n_col_blocks
    b_acc = tl.zeros([BLOCK_V], dtype=tl.float32)
    if COMPUTE_GRAD and HAS_LABELS:
        count = tl.load(count_ptr)
        grad_scale = tl.where(count > 0, unit / tl.maximum(count, 1).to(tl.float32), 0.0)
    for i_t in range(i_p, n_tiles, n_p):
        i_r = i_t // n_col_blocks
        i_c = i_t - i_r * n_col_blocks
        o_v = i_c.to(tl.int64) * BLOCK_V + tl.arange(0, BLOCK_V)
        if HAS_LABELS:
            # Ignored rows load nothing: an empty mask keeps their bytes off the bus.
            m_v = o_v < tl.where(tl.load(labels_ptr + i_r) != ignore_index, V, 0)
        else:
            m_v = o_v < V
        i_r64 = i_r.to(tl.int64)
        # Padding lanes read X = Y = 0, where every loss term below is exactly 0.
        b_x = tl.load(
            x_ptr + i_r64 * stride_x + o_v, mask=m_v, other=0.0, eviction_policy="evict_first"
        ).to(tl.float32)
        b_y = tl.load(
            y_ptr + i_r64 * stride_y + o_v, mask=m_v, other=0.0, eviction_policy="evict_first"
        ).to(tl.float32)
        if BETA_MODE == 0:
            # KL(P||Q) = sum P (Y - X); dX = -P
            b_p = _exp2(b_y * LOG2E, FAST_MATH)
            b_acc += b_p * (b_y - b_x)
            if COMPUTE_GRAD:
                b_dx = -b_p
        elif BETA_MODE == 1:
            # KL(Q||P) = sum Q (X - Y); dX = Q (X - Y + 1)
            b_q = _exp2(b_x * LOG2E, FAST_MATH)
            b_d = b_x - b_y
            b_acc += b_q * b_d
            if COMPUTE_GRAD:
                b_dx = b_q * (b_d + 1.0)
        else:
            # With x2 = X log2 e + log2(1-beta), y2 = Y log2 e + log2 beta:
            # bq = (1-beta) Q = 2^x2, bp = beta P = 2^y2, M = bp + bq, z = log2 M, and
            # l / ln 2 = bp (y2 - log2 beta - z) + bq (x2 - log2(1-beta) - z).
            b_x2 = b_x * LOG2E + log2_one_minus_beta
            b_y2 = b_y * LOG2E + log2_beta
            b_bq = _exp2(b_x2, FAST_MATH)
            b_bp = _exp2(b_y2, FAST_MATH)
            # M = 0 only when both terms underflow; clamping keeps 0 * log2(0) out.
            b_z = _log2(tl.maximum(b_bp + b_bq, 1e-37), FAST_MATH)
            b_gx = b_bq * (b_x2 - log2_one_minus_beta - b_z)
            b_acc += b_bp * (b_y2 - log2_beta - b_z) + b_gx
            if COMPUTE_GRAD:
                b_dx = b_gx
        if COMPUTE_GRAD:
            p_dx = dx_ptr + i_r64 * stride_dx + o_v
            # Ignored rows still get their zeros written: the buffer starts uninitialized.
            b_dx = tl.where(m_v, b_dx * grad_scale, 0.0)
            tl.store(p_dx, b_dx.to(dx_ptr.dtype.element_ty), mask=o_v < V)
    tl.store(partial_ptr + i_p, tl.sum(b_acc, axis=0))


@triton.jit
def jsd_finalize_kernel(
    partial_ptr,
    count_ptr,
    loss_ptr,
    n_partials,
    unit,
    inv_n,
    HAS_LABELS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    o_p = tl.arange(0, BLOCK)
    b_partial = tl.load(partial_ptr + o_p, mask=o_p < n_partials, other=0.0)
    total = tl.sum(b_partial, axis=0) * unit
    if HAS_LABELS:
        count = tl.load(count_ptr)
        loss = tl.where(count > 0, total / tl.maximum(count, 1).to(tl.float32), 0.0)
    else:
        loss = total * inv_n
    tl.store(loss_ptr, loss.to(loss_ptr.dtype.element_ty))


def _programs_per_device(device: torch.device) -> int:
    if device.type != "cuda":
        return 4
    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def _launch(
    input: torch.Tensor,
    target: torch.Tensor,
    beta: float,
    labels: torch.Tensor | None,
    ignore_index: int,
    compute_grad: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    check_jsd_inputs(input, target, beta, labels)
    if input.dtype == torch.float64:
        raise ValueError("jsd_triton takes float32, bfloat16 or float16; use jsd_torch for float64")
    if input.device.type != "cuda" and not _INTERPRET:
        raise ValueError(
            f"jsd_triton needs CUDA tensors (or TRITON_INTERPRET=1), got {input.device}"
        )
    if input.stride(1) != 1 or target.stride(1) != 1:
        raise ValueError("input and target rows must be contiguous (stride 1 along V)")
    bt, v = input.shape
    device = input.device
    sms = _programs_per_device(device)
    dx = torch.empty((bt, v), device=device, dtype=input.dtype) if compute_grad else None
    count = (labels != ignore_index).sum(dtype=torch.int32) if labels is not None else None
    beta_mode = 0 if beta == 0.0 else 1 if beta == 1.0 else 2
    unit = math.log(2.0) if beta_mode == 2 else 1.0
    rows, cols = bt, v
    if labels is None and input.is_contiguous() and target.is_contiguous():
        # Without labels the rows do not matter: one flat row of BT*V elements has no
        # partly filled tile at each row's end.
        rows, cols = 1, bt * v
    # Largest grid any config launches; each launch writes only its first entries.
    partials = torch.empty(sms * MAX_PROGRAMS_PER_SM, device=device, dtype=torch.float32)
    launched: dict[str, int] = {}

    def grid(meta: dict[str, Any]) -> tuple[int]:
        # Autotuning launches each config; the chosen one launches last, so `launched`
        # ends up holding the grid whose partials the finalize kernel must add.
        n_tiles = rows * triton.cdiv(cols, meta["BLOCK_V"])
        launched["programs"] = min(n_tiles, sms * meta["PROGRAMS_PER_SM"])
        return (launched["programs"],)

    log2_beta = math.log2(beta) if beta_mode == 2 else 0.0
    log2_one_minus_beta = math.log2(1.0 - beta) if beta_mode == 2 else 0.0
    jsd_fwd_kernel[grid](
        input,
        target,
        labels if labels is not None else input,
        count if count is not None else input,
        dx if dx is not None else input,
        partials,
        rows,
        cols,
        input.stride(0),
        target.stride(0),
        dx.stride(0) if dx is not None else 0,
        log2_beta,
        log2_one_minus_beta,
        unit,
        unit / bt,
        ignore_index,
        BT_BUCKET=triton.next_power_of_2(bt),
        BETA_MODE=beta_mode,
        HAS_LABELS=labels is not None,
        COMPUTE_GRAD=compute_grad,
        FAST_MATH=not _INTERPRET,
    )
    loss = torch.empty((), device=device, dtype=input.dtype)
    jsd_finalize_kernel[(1,)](
        partials,
        count if count is not None else partials,
        loss,
        launched["programs"],
        unit,
        1.0 / bt,
        HAS_LABELS=labels is not None,
        BLOCK=triton.next_power_of_2(sms * MAX_PROGRAMS_PER_SM),
    )
    return loss, dx


class _JSDFunction(torch.autograd.Function):
    """Loss forward that also computes dloss/dinput when asked, so backward only scales it."""

    @staticmethod
    def forward(
        ctx: Any,
        input: torch.Tensor,
        target: torch.Tensor,
        beta: float,
        labels: torch.Tensor | None,
        ignore_index: int,
        compute_grad: bool,
    ) -> torch.Tensor:
        loss, dx = _launch(input, target, beta, labels, ignore_index, compute_grad)
        if dx is not None:
            ctx.save_for_backward(dx)
        ctx.has_grad = dx is not None
        return loss

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        if not ctx.has_grad:
            raise RuntimeError("jsd_triton ran without a gradient; call it with grad enabled")
        (dx,) = ctx.saved_tensors
        # The common case: loss.backward() on the loss itself; skip a full pass over dx.
        if grad_output.numel() == 1 and bool(grad_output == 1):
            return dx, None, None, None, None, None
        return dx * grad_output.to(dx.dtype), None, None, None, None, None


def jsd_triton(
    input: torch.Tensor,
    target: torch.Tensor,
    *,
    beta: float = 0.5,
    labels: torch.Tensor | None = None,
    ignore_index: int = -100,
) -> torch.Tensor:
    """The generalized JSD loss of :func:`~.reference.jsd_torch`, fused in Triton.

    When ``input`` requires grad and grad mode is on, the one forward pass also writes
    the gradient with respect to ``input`` (backward then only scales it); otherwise it
    computes the loss alone and writes no gradient.

    Args:
        input: Student log-probabilities (BT, V), float32, bfloat16 or float16, rows
            contiguous (any row stride).
        target: Teacher log-probabilities, same shape and dtype.
        beta: Weight of P in the mixture M, in [0, 1].
        labels: Optional (BT,) integer labels; rows labelled ``ignore_index`` are left out.
        ignore_index: The label value of rows to leave out.

    Returns:
        A scalar in ``input``'s dtype, accumulated in float32.

    Raises:
        ValueError: for shapes, dtypes, devices or strides the kernel does not take.
    """
    compute_grad = input.requires_grad and torch.is_grad_enabled()
    loss: torch.Tensor = _JSDFunction.apply(input, target, beta, labels, ignore_index, compute_grad)
    return loss
