"""Fused Triton JSD loss forward: one streaming pass over both inputs, loss and optional gradient.

loss = sum_rows w_r * sum_v l(x, y) / n with l = beta*P*(Y - log M) + (1-beta)*Q*(X - log M),
P = e^Y, Q = e^X, M = beta*P + (1-beta)*Q (beta 0 and 1: the KL divergences); X, Y are (BT, V).
dl/dX = (1-beta)*Q*(X - log M) (see README.md beside this file for beta 0 and 1).

The (BT, V) matrix is cut into tiles of one row by BLOCK_V columns; a persistent grid of
programs strides over the tiles, so a small BT still fills the GPU. Each program keeps a
float32 partial sum; the program that finishes last (an atomic ticket) adds the partials
in program order (deterministic) and divides by the number of rows kept. One launch per
call. The launch configuration, the grid, the form of the math and the reduction's buffers
come from ``launch_plan.py``: committed tables, never timing at run time, so two processes
run the same code on the same inputs.
"""

from __future__ import annotations

import contextlib
import math
import operator
from typing import Any, Final

import torch
import triton
import triton.language as tl

from ...errors import ArgumentError, StateError
from . import launch_plan
from .launch_plan import KernelConfig, kernel_config
from .reference import check_jsd_inputs

__all__ = ["KernelConfig", "jsd_triton", "kernel_config"]

#: The dtypes the kernel takes (jsd_torch also takes float64).
_KERNEL_DTYPES: Final = (torch.float32, torch.bfloat16, torch.float16)
# What padding lanes read (written as a literal in the kernel): 2^(PAD log2 e) underflows to
# exactly 0 in float32, in every form.
PAD: Final = -200.0
# log2(1 + t) ~= t * (C0 + t * (C1 + ...)) on [0, 1]: a least-squares fit, max error 7.2e-9
# (1.4e-7 evaluated in float32, mean -1.6e-9); tests/reference_kernels/test_jsd.py checks it.
LOG2_1P: Final = (
    1.4426940716134316,
    -0.7213056057862225,
    0.4802684759642484,
    -0.3559521994352364,
    0.2679077872536082,
    -0.18309464886666982,
    0.0982297684120074,
    -0.03441872506403479,
    0.005671083062210397,
)


@triton.jit
def _exp2(x, OPS: tl.constexpr):
    if OPS == "ptx":
        # ex2.approx.ftz is one MUFU instruction; tl.exp2 adds denormal handling around it.
        return tl.inline_asm_elementwise(
            "ex2.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return tl.exp2(x)


@triton.jit
def _log2(x, OPS: tl.constexpr):
    if OPS == "ptx":
        return tl.inline_asm_elementwise(
            "lg2.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return tl.log2(x)


@triton.jit
def _to_float32(x, OPS: tl.constexpr, FLOOR: tl.constexpr):
    """x as float32; with FLOOR, values below PAD (-inf: a masked entry) become PAD, whose
    exp is exactly 0 in float32, and a NaN stays a NaN."""
    if OPS == "ptx" and x.dtype == tl.bfloat16:
        # A bf16 is the top half of its float32: one shift or one mask per element, where
        # the generic conversion spends a byte permute and a shift on every other one.
        # The floor is one max per pair of values (0xC348 is -200 in bf16).
        if FLOOR:
            b_pair = tl.inline_asm_elementwise(
                "{ .reg .b32 c, f; mov.b32 c, 0xC348C348; max.NaN.bf16x2 f, $2, c;"
                " shl.b32 $0, f, 16; and.b32 $1, f, 0xFFFF0000; }",
                "=r,=r,r",
                [x],
                dtype=tl.uint32,
                is_pure=True,
                pack=2,
            )
        else:
            b_pair = tl.inline_asm_elementwise(
                "shl.b32 $0, $2, 16; and.b32 $1, $2, 0xFFFF0000;",
                "=r,=r,r",
                [x],
                dtype=tl.uint32,
                is_pure=True,
                pack=2,
            )
        return b_pair.to(tl.float32, bitcast=True)
    else:
        x = x.to(tl.float32)
        if FLOOR:
            x = tl.maximum(x, -200.0, propagate_nan=tl.PropagateNan.ALL)  # PAD
        return x


@triton.jit
def _exp(x, OPS: tl.constexpr):
    if OPS == "ptx":
        return _exp2(x * 1.4426950408889634, OPS)  # log2(e)
    else:
        return tl.exp(x)


@triton.jit
def _log2_1p(t):
    # log2(1 + t) for t in [0, 1] on the FMA pipe (Horner), no MUFU instruction.
    # LOG2_1P, highest power first (tests check the two agree).
    b_r = -0.03441872506403479 + t * 0.005671083062210397
    b_r = 0.0982297684120074 + t * b_r
    b_r = -0.18309464886666982 + t * b_r
    b_r = 0.2679077872536082 + t * b_r
    b_r = -0.3559521994352364 + t * b_r
    b_r = 0.4802684759642484 + t * b_r
    b_r = -0.7213056057862225 + t * b_r
    b_r = 1.4426940716134316 + t * b_r
    return t * b_r


@triton.jit
def _count_kept(labels_ptr, n_labels, ignore_index, BLOCK_L: tl.constexpr):
    n_kept = 0
    for start in range(0, n_labels, BLOCK_L):
        o_l = start + tl.arange(0, BLOCK_L)
        b_l = tl.load(labels_ptr + o_l, mask=o_l < n_labels, other=ignore_index)
        n_kept += tl.sum((b_l != ignore_index).to(tl.int32), axis=0)
    return n_kept


@triton.jit
def _load_pair(x_row, y_row, o_v, cols, MASKED: tl.constexpr):
    """One tile of X and Y in their own dtype; MASKED only for a row's last, partly filled
    tile (a full tile needs no mask, no padding values and no predicates)."""
    if MASKED:
        m_v = o_v < cols
        # Padding lanes read PAD (-200.0).
        b_x = tl.load(x_row + o_v, mask=m_v, other=-200.0, eviction_policy="evict_first")
        b_y = tl.load(y_row + o_v, mask=m_v, other=-200.0, eviction_policy="evict_first")
    else:
        b_x = tl.load(x_row + o_v, eviction_policy="evict_first")
        b_y = tl.load(y_row + o_v, eviction_policy="evict_first")
    return b_x, b_y


@triton.jit
def _tile(
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
    BETA_MODE: tl.constexpr,
    FORM: tl.constexpr,
    OPS: tl.constexpr,
):
    """Add one tile's loss terms to the running sums; return them and dl/dX times
    ``grad_scale`` (FOLD: ``log2_one_minus_beta`` holds log2((1-beta) grad_scale), and
    ``inv_scale`` is 1 / grad_scale).

    X or Y of -inf is probability 0, and 0 * log 0 = 0: at 0 < beta < 1 both are floored
    at PAD (exp exactly 0, every term 0 times a finite number, as in padding lanes); at
    beta 0 and 1 a term whose probability is 0 is 0, and one whose other probability is 0
    is +inf (the divergence is infinite there)."""
    log2e = 1.4426950408889634  # LOG2E
    ln2 = 0.6931471805599453  # LN2
    b_x = _to_float32(b_x, OPS, BETA_MODE == 2)
    b_y = _to_float32(b_y, OPS, BETA_MODE == 2)
    if BETA_MODE == 0:
        # KL(P||Q) = sum P (Y - X); dX = -P
        b_p = _exp(b_y, OPS)
        b_l = tl.where(b_p == 0.0, 0.0, b_p * (b_y - b_x))
        b_g = -b_p
    elif BETA_MODE == 1:
        # KL(Q||P) = sum Q (X - Y); dX = Q (X - Y + 1)
        b_q = _exp(b_x, OPS)
        b_d = b_x - b_y
        b_l = tl.where(b_q == 0.0, 0.0, b_q * b_d)
        b_g = tl.where(b_q == 0.0, 0.0, b_q * (b_d + 1.0))
    elif FORM == "fold":
        # In base 2: with x2 = X log2 e + log2(1-beta) and y2 = Y log2 e + log2 beta,
        # bq = (1-beta) Q = 2^x2, bp = beta P = 2^y2, z = log2 M, and the sum regrouped as
        # l / ln 2 = bp Y log2 e + bq X log2 e - M z. grad_scale s rides in bq's exponent:
        # bqs = s bq = 2^(X log2 e + log2((1-beta) s)), M = bqs / s + bp,
        # dx = bqs (X log2 e - z); the loss is summed as b_acc_p = sum bp Y,
        # b_acc_q = sum bqs X, b_acc = -sum M z, each one FMA a term (combined once per
        # program). The large sums nearly cancel (about 1e-5 relative in float32): for
        # bf16 and fp16 only, whose own rounding is far coarser.
        b_bqs = _exp2(b_x * log2e + log2_one_minus_beta, OPS)
        b_bp = _exp2(b_y * log2e + log2_beta, OPS)
        b_m = b_bqs * inv_scale + b_bp
        b_z = _log2(tl.maximum(b_m, 1e-37), OPS)
        b_acc_p = b_acc_p + b_bp * b_y
        b_acc_q = b_acc_q + b_bqs * b_x
        b_acc = b_acc - b_m * b_z
        b_l = 0.0
        b_g = b_bqs * (b_x * log2e - b_z)
    elif FORM == "lean":
        # FOLD's terms without the gradient, in nats: l = bp Y + bq X - M z ln 2, so X and
        # Y need no scaled copies and each term goes into the running sum by one FMA
        # (README.md beside this file has the instruction counts). The terms nearly
        # cancel, as FOLD's do: for bf16 and fp16 only.
        b_bq = _exp2(b_x * log2e + log2_one_minus_beta, OPS)
        b_bp = _exp2(b_y * log2e + log2_beta, OPS)
        b_m = b_bp + b_bq
        b_mz = b_m * _log2(tl.maximum(b_m, 1e-37), OPS)
        b_acc = b_acc + b_bp * b_y
        b_acc = b_acc + b_bq * b_x
        b_acc = b_acc - b_mz * ln2
        b_l = 0.0
        b_g = 0.0
    else:
        # PAIR (float32): bp, bq and z as in FOLD, l / ln 2 = bp (Y log2 e - z) +
        # bq (X log2 e - z), with the larger of bp, bq 2^max(x2, y2), the smaller that
        # times t = 2^-|x2-y2|, and z = max(x2, y2) + log2(1 + t) by polynomial: an exp's
        # error scales only its own term (README.md says why that matters).
        b_xl = b_x * log2e
        b_yl = b_y * log2e
        b_x2 = b_xl + log2_one_minus_beta
        b_y2 = b_yl + log2_beta
        b_top = tl.maximum(b_x2, b_y2)
        b_t = _exp2(-tl.abs(b_x2 - b_y2), OPS)
        b_big = _exp2(b_top, OPS)
        x_wins = b_x2 >= b_y2
        b_bq = tl.where(x_wins, b_big, b_big * b_t)
        b_bp = tl.where(x_wins, b_big * b_t, b_big)
        b_z = b_top + _log2_1p(b_t)
        b_g = b_bq * (b_xl - b_z)
        b_l = b_bp * (b_yl - b_z) + b_g
    # Padding lanes read X = Y = PAD: every exp underflows to exactly 0, so every term is
    # 0 times a finite number (no select needed).
    # Triton's compiler takes no `in` on constexprs: two comparisons.
    if (FORM != "lean" and FORM != "fold") or BETA_MODE != 2:  # noqa: PLR1714
        b_acc += b_l
    if FORM != "fold" or BETA_MODE != 2:
        b_g = b_g * grad_scale
    return b_acc, b_acc_p, b_acc_q, b_g


@triton.jit
def _store_dx(p_row, o_v, b_g, cols, MASKED: tl.constexpr):
    """Store one tile of dL/dinput (already scaled) at p_row + o_v, in dx's dtype."""
    b_dx = b_g.to(p_row.dtype.element_ty)
    # Streaming stores (.cs): dL/dinput is not read again by this kernel, and writing it
    # past L2's normal policy left the input stream 4-6% faster on an H200
    # (benchmarks/results/jsd_training_step_probe_h200.json, "cs").
    if MASKED:
        tl.store(p_row + o_v, b_dx, mask=o_v < cols, cache_modifier=".cs")
    else:
        tl.store(p_row + o_v, b_dx, cache_modifier=".cs")


@triton.jit
def _tiles(
    b_acc,
    b_acc_p,
    b_acc_q,
    first,
    step,
    n_tiles,
    per_row,
    col0,
    x_ptr,
    y_ptr,
    labels_ptr,
    dx_ptr,
    cols,
    stride_x,
    stride_y,
    stride_dx,
    beta,
    log2_beta,
    log2_one_minus_beta,
    grad_scale,
    inv_scale,
    ignore_index,
    BETA_MODE: tl.constexpr,
    HAS_LABELS: tl.constexpr,
    COMPUTE_GRAD: tl.constexpr,
    FORM: tl.constexpr,
    OPS: tl.constexpr,
    BLOCK_V: tl.constexpr,
    MASKED: tl.constexpr,
    FLAT: tl.constexpr,
    STAGES: tl.constexpr,
):
    """Tiles first, first + step, ... of n_tiles, per_row to a row, starting at tile
    column col0: their loss terms added to the running sum, their gradient stored."""
    if FLAT:
        # One row (no labels, rows back to back): a tile's start is one scalar, stepped,
        # and x, y and dx share the offsets inside the tile (no per-tile row arithmetic).
        o_t = tl.arange(0, BLOCK_V)
        start = (col0 + first).to(tl.int64) * BLOCK_V
        step_e = step.to(tl.int64) * BLOCK_V
        # STAGES > 1: Triton's software pipelining (loads of later tiles in flight while
        # this one is computed, through shared memory).
        for _ in tl.range(first, n_tiles, step, num_stages=STAGES):
            b_x, b_y = _load_pair(x_ptr + start, y_ptr + start, o_t, cols - start, MASKED)
            b_acc, b_acc_p, b_acc_q, b_g = _tile(
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
                BETA_MODE,
                FORM,
                OPS,
            )
            if COMPUTE_GRAD:
                _store_dx(dx_ptr + start, o_t, b_g, cols - start, MASKED)
            start += step_e
        return b_acc, b_acc_p, b_acc_q
    # The row and column of the next tile are stepped, not divided out on every tile.
    per_row = tl.maximum(per_row, 1)
    step_r = step // per_row
    step_c = step - step_r * per_row
    i_r = first // per_row
    i_c = first - i_r * per_row
    for _ in range(first, n_tiles, step):
        i_r64 = i_r.to(tl.int64)
        o_v = (col0 + i_c).to(tl.int64) * BLOCK_V + tl.arange(0, BLOCK_V)
        p_dx = dx_ptr + i_r64 * stride_dx + o_v
        keep = True
        if HAS_LABELS:
            keep = tl.load(labels_ptr + i_r) != ignore_index
        if keep:
            b_x, b_y = _load_pair(
                x_ptr + i_r64 * stride_x, y_ptr + i_r64 * stride_y, o_v, cols, MASKED
            )
            b_acc, b_acc_p, b_acc_q, b_g = _tile(
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
                BETA_MODE,
                FORM,
                OPS,
            )
            if COMPUTE_GRAD:
                _store_dx(dx_ptr + i_r64 * stride_dx, o_v, b_g, cols, MASKED)
        elif COMPUTE_GRAD:
            # Ignored rows get their zeros written (the buffer starts uninitialized),
            # and cost neither a load nor a MUFU operation.
            tl.store(
                p_dx,
                tl.zeros([BLOCK_V], dtype=dx_ptr.dtype.element_ty),
                mask=o_v < cols,
                cache_modifier=".cs",
            )
        i_c += step_c
        i_r += step_r
        if i_c >= per_row:
            i_c -= per_row
            i_r += 1
    return b_acc, b_acc_p, b_acc_q


@triton.jit
def jsd_fwd_kernel(
    x_ptr,
    y_ptr,
    labels_ptr,
    dx_ptr,
    partial_ptr,
    ticket_ptr,
    loss_ptr,
    rows,
    cols,
    stride_x,
    stride_y,
    stride_dx,
    beta,
    log2_beta,
    log2_one_minus_beta,
    unit,
    inv_n,
    ignore_index,
    BETA_MODE: tl.constexpr,
    HAS_LABELS: tl.constexpr,
    COMPUTE_GRAD: tl.constexpr,
    FORM: tl.constexpr,
    OPS: tl.constexpr,
    BLOCK_V: tl.constexpr,
    BLOCK_P: tl.constexpr,
    BLOCK_L: tl.constexpr,
    FLAT: tl.constexpr,
    STAGES: tl.constexpr,
):
    # PAIR and FOLD work in base 2 (l / ln 2): the host's `unit` (ln 2) scales the total
    # and the gradient once instead of every element; LEAN works in nats (unit 1).
    # Triton's compiler takes no `in` on constexprs.
    tl.static_assert(FORM == "pair" or FORM == "fold" or FORM == "lean", "FORM: unknown")  # noqa: PLR1714
    tl.static_assert(FORM != "lean" or not COMPUTE_GRAD, "LEAN computes no gradient")
    i_p = tl.program_id(0)
    n_p = tl.num_programs(0)
    b_acc = tl.zeros([BLOCK_V], dtype=tl.float32)
    b_acc_p = tl.zeros([BLOCK_V], dtype=tl.float32)
    b_acc_q = tl.zeros([BLOCK_V], dtype=tl.float32)
    grad_scale = unit * inv_n
    if COMPUTE_GRAD and HAS_LABELS:
        n_kept = _count_kept(labels_ptr, rows, ignore_index, BLOCK_L)
        grad_scale = unit / tl.maximum(n_kept, 1).to(tl.float32)
    inv_scale = 1.0 / grad_scale
    if FORM == "fold" and BETA_MODE == 2:
        # bqs = grad_scale * (1-beta) Q: one exponent, log2((1-beta) grad_scale).
        log2_one_minus_beta = log2_one_minus_beta + tl.log2(grad_scale)
    # Each row is n_full full tiles and, when BLOCK_V does not divide it, one partly
    # filled tile. Programs take the full tiles in turn, then the partial ones, continuing
    # the same turn: two loops, each with one copy of the arithmetic, and only the second
    # with masks and padding.
    n_full = cols // BLOCK_V
    for TAIL in tl.static_range(2):
        run = True
        if TAIL == 1:
            run = cols % BLOCK_V != 0
        if run:
            if TAIL == 0:
                first, n_tiles, per_row, col0 = i_p, rows * n_full, n_full, 0
            else:
                first = (i_p + n_p - (rows * n_full) % n_p) % n_p
                n_tiles, per_row, col0 = rows, 1, n_full
            b_acc, b_acc_p, b_acc_q = _tiles(
                b_acc,
                b_acc_p,
                b_acc_q,
                first,
                n_p,
                n_tiles,
                per_row,
                col0,
                x_ptr,
                y_ptr,
                labels_ptr,
                dx_ptr,
                cols,
                stride_x,
                stride_y,
                stride_dx,
                beta,
                log2_beta,
                log2_one_minus_beta,
                grad_scale,
                inv_scale,
                ignore_index,
                BETA_MODE,
                HAS_LABELS,
                COMPUTE_GRAD,
                FORM,
                OPS,
                BLOCK_V,
                TAIL == 1,
                FLAT,
                STAGES,
            )
    partial = tl.sum(b_acc, axis=0)
    if FORM == "fold" and BETA_MODE == 2:
        log2e = 1.4426950408889634  # LOG2E
        partial += log2e * (tl.sum(b_acc_p, axis=0) + tl.sum(b_acc_q, axis=0) * inv_scale)
    tl.store(partial_ptr + i_p, partial)
    # The last program to take a ticket adds every partial in program order: the result
    # does not depend on which program finished when. acq_rel orders each partial's store
    # before its ticket, and the ticket before the loads below.
    tl.debug_barrier()
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel")
    if ticket == n_p - 1:
        o_p = tl.arange(0, BLOCK_P)
        b_part = tl.load(partial_ptr + o_p, mask=o_p < n_p, other=0.0, volatile=True)
        total = tl.sum(b_part, axis=0) * unit
        if HAS_LABELS:
            n_all = _count_kept(labels_ptr, rows, ignore_index, BLOCK_L)
            loss = tl.where(n_all > 0, total / tl.maximum(n_all, 1).to(tl.float32), 0.0)
        else:
            loss = total * inv_n
        tl.store(loss_ptr, loss.to(loss_ptr.dtype.element_ty))
        # Ready for the next call (and for a CUDA graph's next replay).
        tl.store(ticket_ptr, 0)


# dL/dinput = grad_output * dx, decided on the GPU: backward neither copies grad_output to
# the host nor waits for the forward, so a training step runs ahead of the GPU and


# dL/dinput = grad_output * dx, decided on the GPU: backward neither copies grad_output to
# the host nor waits for the forward, so a training step runs ahead of the GPU and
# captures in a CUDA graph. Its BLOCK and grid: launch_plan.SCALE_BLOCK, launch_plan.scale_programs.
@triton.jit
def jsd_scale_kernel(dx_ptr, grad_ptr, n, BLOCK: tl.constexpr):
    # grad_output is almost always exactly 1 (loss.backward() on the loss itself): then
    # every program reads one scalar and exits, and dx stays as the forward wrote it.
    g = tl.load(grad_ptr).to(tl.float32)
    if g != 1.0:
        i_p = tl.program_id(0)
        n_p = tl.num_programs(0)
        # Offsets in int64 (BT x V passes 2^31 at BT 16384, V 128256), stepped per tile.
        o_e = i_p.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        step = n_p.to(tl.int64) * BLOCK
        for _ in range(i_p, tl.cdiv(n, BLOCK), n_p):
            m_e = o_e < n
            b_dx = tl.load(dx_ptr + o_e, mask=m_e).to(tl.float32)
            tl.store(dx_ptr + o_e, (b_dx * g).to(dx_ptr.dtype.element_ty), mask=m_e)
            o_e += step


def _on_device(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """Make ``device`` current while Triton launches (it launches on the current device,
    on that device's current stream); nothing to do when it already is."""
    if device.type == "cuda" and device.index != torch.cuda.current_device():
        return torch.cuda.device(device)
    return contextlib.nullcontext()


def _check(
    input: torch.Tensor,
    target: torch.Tensor,
    beta: float,
    labels: torch.Tensor | None,
    ignore_index: int,
) -> int:
    """Check the arguments as the kernel takes them; return ``ignore_index`` as an int."""
    shape, dtype, device = input.shape, input.dtype, input.device
    # A call that passes these cheap tests passes check_jsd_inputs; any other is checked in
    # full, for its message (or, with labels, for theirs).
    if (
        labels is not None
        or dtype not in _KERNEL_DTYPES
        or target.dtype != dtype
        or target.shape != shape
        or target.device != device
        or len(shape) != 2
        or not shape[0]
        or not shape[1]
        or not 0.0 <= beta <= 1.0
        or type(ignore_index) is not int
    ):
        check_jsd_inputs(input, target, beta, labels)
        if dtype not in _KERNEL_DTYPES:
            raise ArgumentError(
                argument="input",
                reason=f"jsd_triton takes float32, bfloat16 or float16, got {dtype};"
                " use jsd_torch for float64",
            )
        try:
            ignore_index = operator.index(ignore_index)
        except TypeError:
            raise ArgumentError(
                argument="ignore_index", reason=f"expected an integer, got {ignore_index!r}"
            ) from None
    if device.type != "cuda" and not launch_plan.INTERPRET:
        raise ArgumentError(
            argument="input",
            reason=f"jsd_triton needs CUDA tensors (or TRITON_INTERPRET=1), got {device}",
        )
    sx, sy = input.stride(), target.stride()
    if sx[1] != 1 or sy[1] != 1:
        which, got = ("input", sx) if sx[1] != 1 else ("target", sy)
        raise ArgumentError(
            argument=which,
            reason=f"rows must be contiguous (stride 1 along V), got strides {got}",
        )
    return ignore_index


def _launch(
    input: torch.Tensor,
    target: torch.Tensor,
    beta: float,
    labels: torch.Tensor | None,
    ignore_index: int,
    compute_grad: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    ignore_index = _check(input, target, beta, labels, ignore_index)
    device = input.device
    if labels is not None:
        # The kernel reads row i's label at labels + i.
        labels = labels.contiguous()
    bt, v = input.shape
    beta_mode = 0 if beta == 0.0 else 1 if beta == 1.0 else 2
    rows, cols, flat = launch_plan.layout(bt, v, input.stride(0), target.stride(0), labels)
    # dx is contiguous: its row stride is V. The flat loop reads no stride.
    strides = (
        (input.stride(0), target.stride(0), v if compute_grad else 0) if not flat else (0, 0, 0)
    )
    with _on_device(device):
        # One plan per stream (launch_plan.plan_for), from torch's public current stream (5-8 us
        # of host time a call on an H200 host; Triton's driver attribute is cheaper but not
        # a documented interface).
        on_gpu = device.type == "cuda" and not launch_plan.INTERPRET
        stream = torch.cuda.current_stream(device).cuda_stream if on_gpu else 0
        launch = launch_plan.plan_for(
            device,
            stream,
            input.dtype,
            rows,
            cols,
            strides,
            flat,
            beta_mode,
            labels is not None,
            compute_grad,
        )
        if on_gpu and not launch.captured:
            launch_plan.keep_if_captured(launch, torch.cuda.is_current_stream_capturing())
        dx = input.new_empty((bt, v)) if compute_grad else None
        loss = input.new_empty(())
        # A float whatever the caller passed (an int, a NumPy float): Triton compiles an
        # int argument as an int.
        beta = float(beta)
        jsd_fwd_kernel[(launch.programs,)](
            input,
            target,
            labels if labels is not None else input,
            dx if dx is not None else input,
            launch.partials,
            launch.ticket,
            loss,
            rows,
            cols,
            *strides,
            beta,
            math.log2(beta) if beta_mode == 2 else 0.0,
            math.log2(1.0 - beta) if beta_mode == 2 else 0.0,
            launch.unit,
            1.0 / bt,
            ignore_index,
            **launch.constexprs,
            num_warps=launch.config.num_warps,
        )
    return loss, dx


def _scale(dx: torch.Tensor, grad_output: torch.Tensor) -> None:
    """Multiply ``dx`` by ``grad_output`` in place, on the GPU, unless it is exactly 1."""
    n = dx.numel()
    with _on_device(dx.device):
        jsd_scale_kernel[(launch_plan.scale_programs(n, dx.device),)](
            dx, grad_output, n, BLOCK=launch_plan.SCALE_BLOCK, num_warps=launch_plan.SCALE_WARPS
        )


class _JSDFunction(torch.autograd.Function):
    """Loss forward that also computes dloss/dinput, so backward only scales it."""

    @staticmethod
    def forward(
        ctx: Any,
        input: torch.Tensor,
        target: torch.Tensor,
        beta: float,
        labels: torch.Tensor | None,
        ignore_index: int,
    ) -> torch.Tensor:
        loss, dx = _launch(input, target, beta, labels, ignore_index, True)
        # save_for_backward, not a ctx attribute: autograd frees dx after backward (a plain
        # attribute would keep BT x V alive as long as the loss).
        ctx.save_for_backward(dx)
        ctx.first_grad = None
        return loss

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        if torch.is_grad_enabled():
            # Autograd runs backward with grad mode on only for create_graph=True. The
            # gradient comes from the forward kernel: there is no graph to differentiate
            # again, and a gradient cut off from one would be silently wrong.
            raise StateError(
                call="jsd_triton backward",
                reason="create_graph=True: the kernel has no second derivative; use"
                " jsd_torch for higher-order gradients",
            )
        (dx,) = ctx.saved_tensors
        if ctx.first_grad is None:
            # The first backward scales dx in place (no copy of BT x V), on the GPU.
            ctx.first_grad = grad_output
            _scale(dx, grad_output)
            return dx, None, None, None, None
        # Backward again through a retained graph: dx holds dx * first_grad by now.
        # Out of place, so the gradient returned before stays as it was; exact when the
        # first grad_output was 1, within rounding otherwise. A first grad_output of 0
        # left nothing to recover (this rare path may wait for the GPU to say so).
        if not bool(ctx.first_grad != 0):
            raise StateError(
                call="jsd_triton backward",
                reason="a second backward through a retained graph after a first"
                " grad_output of 0: the gradient was scaled to 0 in place; run the forward"
                " again",
            )
        return dx * (grad_output / ctx.first_grad), None, None, None, None


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
    the gradient with respect to ``input``, and backward only multiplies it by
    ``grad_output`` on the GPU (no host synchronization: a forward and backward step
    captures in a CUDA graph); otherwise it computes the loss alone, writes no gradient
    and skips autograd altogether. The kernel runs on the inputs' device, whatever the
    current device is. Log-probabilities of ``-inf`` (masked or padded vocabulary
    entries) are taken as probability 0, with ``0 * log 0 = 0``: see
    :func:`~.reference.jsd_torch` for the values at such entries.

    Args:
        input: Student log-probabilities (BT, V), float32, bfloat16 or float16, rows
            contiguous (any row stride).
        target: Teacher log-probabilities, same shape and dtype.
        beta: Weight of P in the mixture M, in [0, 1].
        labels: Optional (BT,) integer labels, any stride; rows labelled ``ignore_index``
            are left out.
        ignore_index: The label value of rows to leave out (an integer).

    Returns:
        A scalar in ``input``'s dtype, accumulated in float32.

    Raises:
        ArgumentError: (a ValueError) for shapes, dtypes, devices, strides or a beta the
            kernel does not take; the message starts with the argument it names.
    """
    if input.requires_grad and torch.is_grad_enabled():
        out: torch.Tensor = _JSDFunction.apply(input, target, beta, labels, ignore_index)
        return out
    loss, _ = _launch(input, target, beta, labels, ignore_index, False)
    return loss
