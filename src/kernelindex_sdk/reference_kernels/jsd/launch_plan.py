"""How the fused JSD kernel is launched: its config per GPU and shape, its math, its buffers.

Everything here is decided on the host from committed tables, never from timing at run time,
so two processes on one GPU kind launch the same code on the same inputs. ``fused.py``
asks :func:`plan_for` once per (device, stream, dtype, layout, flags) and keeps the answer:

- the layout (:func:`layout`): one flat row of BT*V when there are no labels and both
  inputs are row after row, else BT rows of V;
- the config (:func:`kernel_config`): tile width, warps, persistent programs per SM and
  pipelining stages, from :data:`CONFIG_TABLE` (or :data:`FLAT_TABLE` for one flat row);
- the math (:func:`math_for`): the form the loss is written in and the instructions of
  its exp and log, by dtype, gradient and backend (``README.md`` beside this file says
  why each);
- the grid (``programs``) and the reduction's buffers: a float32 partial sum per program
  and the ticket that elects the program which adds them.
"""

from __future__ import annotations

import math
import os
from typing import Any, Final

import attrs
import torch
import triton

__all__ = [
    "CONFIG_TABLE",
    "FLAT_TABLE",
    "FLOAT32_CUDA",
    "FOLD",
    "HALF_CUDA",
    "HALF_LOSS_CUDA",
    "INTERPRET",
    "LEAN",
    "PAIR",
    "PTX",
    "SCALE_BLOCK",
    "SCALE_WARPS",
    "TL",
    "KernelConfig",
    "Plan",
    "config_for",
    "keep_if_captured",
    "kernel_config",
    "layout",
    "math_for",
    "plan_for",
    "scale_programs",
    "sm_count",
]

#: Whether Triton's interpreter runs the kernels (on CPU tensors); read once, as Triton does.
INTERPRET: Final = os.environ.get("TRITON_INTERPRET") == "1"

# The kernel's FORM: how the loss is written (README.md beside this file has the algebra).
# PAIR: float32, in base 2, log2 M from the larger exponent and a polynomial for
# log2(1 + t): an exp's error scales only its own term. LEAN: bf16 and fp16 without the
# gradient, in nats, each term one FMA into the running sum. FOLD: bf16 and fp16 with the
# gradient, in base 2, the gradient's scale folded into an exponent, each term one FMA into
# one of three sums. The forms measured and left out (NATS, BASE2, SPLIT, and libdevice's
# exp and log) are in fused.py at commit 1c4cc2e.
# OPS: which instructions. PTX: ex2.approx.ftz / lg2.approx.ftz inline (NVIDIA only); TL:
# tl.exp2 / tl.log2 (every backend and the interpreter: the CPU tests run the GPU's forms).
# Strings, compared by name in the kernel: a kernel that reads module-level constexprs has
# Triton check each one on every launch (results/jsd_launch_replay_cpu.json).
PAIR: Final = "pair"
LEAN: Final = "lean"
FOLD: Final = "fold"
PTX: Final = "ptx"
TL: Final = "tl"
#: (FORM, OPS) on CUDA: float32; bf16 and fp16 with the gradient; bf16 and fp16 loss only.
FLOAT32_CUDA: Final = (PAIR, PTX)
HALF_CUDA: Final = (FOLD, PTX)
HALF_LOSS_CUDA: Final = (LEAN, PTX)


@attrs.frozen
class KernelConfig:
    """One launch configuration, and where it came from.

    Attributes:
        block_v: Columns per tile.
        num_warps: Warps per program.
        programs_per_sm: Persistent programs per multiprocessor.
        source: The table entry that chose it (``sm_90``), or ``default`` for a device
            the table does not know, ``interpreter`` off the GPU.
        stages: Software pipelining stages of the tile loop (1: none; one flat row only:
            no labels, rows back to back). Last and defaulted, so that a config built as
            before this field existed still means what it did.
    """

    block_v: int
    num_warps: int
    programs_per_sm: int
    source: str
    stages: int = 1

    def as_dict(self) -> dict[str, Any]:
        """The config as JSON-ready data (for a record's annotations)."""
        return attrs.asdict(self)


# Fastest configs per (element size, gradient) on one H200 (sm_90), at 1024..8192 x 128256:
# the whole space swept (results/jsd_config_sweep_h200.json), then a few candidates in
# three interleaved rounds of CUDA-graph medians (results/jsd_pipeline_probe_h200.json).
# With the gradient, small programs with Triton's software pipelining ran fastest
# (results/jsd_variant_probe_*_h200.json): 1024 or 2048 columns, 4 or 8 warps, 2 or 3
# stages; larger tiles with pipelining ran 1.2-1.4x slower, and without it every tile size
# ran 2-5% slower (registers cap the warps per SM at half). benchmarks/README.md names the
# commit of each probe. Devices not in the table use the sm_90 row: every entry is valid on
# sm_100 (tests compile them for it ahead of time).
#: (element size, gradient) -> (BLOCK_V, num_warps, programs per SM, pipelining stages).
CONFIG_TABLE: Final[dict[str, dict[tuple[int, bool], tuple[int, int, int, int]]]] = {
    "sm_90": {
        (4, False): (4096, 16, 4, 1),
        (4, True): (1024, 4, 8, 2),
        (2, False): (8192, 16, 4, 1),
        (2, True): (2048, 8, 4, 3),
    },
}
# One flat row (no labels, rows back to back) of 2-byte values with the gradient has its own
# entry (results/jsd_tma_probe_round5_h200.json: three interleaved repeats beside torch.add's
# same bytes, each candidate's plan built once as a user's call builds it): as called (the
# harness's timer, L2 cleared by a read before each call) (2048, 4, 4, 3) ran at 95.5%,
# 96.1%, 95.9% and 95.6% of the same-bytes rate at 1024-8192 x 128256, CONFIG_TABLE's entry
# at 94.6%, 94.7%, 94.5% and 94.4%; under CUDA graphs the two lie within 0.3 points. Only the
# flat loop asks for pipelining (tl.range's num_stages): the row-by-row loop (labels, or
# rows not back to back) keeps CONFIG_TABLE's entry, where it was never measured against
# this one. Only bf16 was measured; fp16 shares the entry by element size.
#: (element size, gradient) -> (BLOCK_V, num_warps, programs per SM, pipelining stages) for
#: one flat row, in place of CONFIG_TABLE's.
FLAT_TABLE: Final[dict[str, dict[tuple[int, bool], tuple[int, int, int, int]]]] = {
    "sm_90": {
        (2, True): (2048, 4, 4, 3),
    },
}
_INTERPRETER_CONFIG: Final = KernelConfig(
    block_v=128, num_warps=1, programs_per_sm=2, stages=1, source="interpreter"
)
# Keep at least this many elements per thread when a short vocabulary shrinks the tile.
_MIN_PER_THREAD: Final = 8

# The kernel that scales dL/dinput by grad_output in backward: a plain elementwise pass.
#: Elements per tile and warps per program of ``jsd_scale_kernel``.
SCALE_BLOCK: Final = 4096
SCALE_WARPS: Final = 8
_SCALE_PROGRAMS_PER_SM: Final = 2


def kernel_config(
    device: torch.device, element_size: int, cols: int, grad: bool, flat: bool = False
) -> KernelConfig:
    """The launch configuration for tiles of ``cols`` columns of ``element_size``-byte values.

    Args:
        device: Where the kernel runs.
        element_size: Bytes per input element (4, 2).
        cols: Columns per row as the kernel sees them (BT*V for the flat layout).
        grad: Whether the launch also writes dL/dinput.
        flat: Whether the kernel sees one flat row (no labels, rows back to back): then
            :data:`FLAT_TABLE`'s entry comes first.

    Returns:
        The entry for the device's architecture (the sm_90 entries when it has none): for
        one flat row :data:`FLAT_TABLE`'s where it has one, else :data:`CONFIG_TABLE`'s;
        the tile shrunk to the next power of two of ``cols``.
    """
    if device.type != "cuda" or INTERPRET:
        return _INTERPRETER_CONFIG
    props = torch.cuda.get_device_properties(device)
    arch = f"sm_{props.major}{props.minor}"
    source = arch if arch in CONFIG_TABLE else "default"
    known = arch if arch in CONFIG_TABLE else "sm_90"
    key = (min(element_size, 4), grad)
    entry = CONFIG_TABLE[known][key]
    if flat:
        entry = FLAT_TABLE.get(known, {}).get(key, entry)
    block, warps, per_sm, stages = entry
    block = min(block, max(triton.next_power_of_2(cols), 32 * _MIN_PER_THREAD))
    warps = max(1, min(warps, block // (32 * _MIN_PER_THREAD)))
    return KernelConfig(
        block_v=block,
        num_warps=warps,
        programs_per_sm=per_sm,
        stages=stages,
        source=source,
    )


def layout(
    bt: int, v: int, stride_x: int, stride_y: int, labels: torch.Tensor | None
) -> tuple[int, int, bool]:
    """How the kernel sees a (BT, V) input: (rows, columns, whether it runs the flat loop).

    Without labels and with both inputs row after row, one row of BT*V (no partly filled
    tile at each row's end); else BT rows of V. One row without labels takes the flat
    loop whatever its stride: a single row has no row stride to follow. The launch and
    :func:`config_for` both ask this, so a record's config is the launch's.
    """
    if labels is None and stride_x == v and stride_y == v:
        return 1, bt * v, True
    return bt, v, bt == 1 and labels is None


def config_for(
    input: torch.Tensor,
    *,
    target: torch.Tensor | None = None,
    labels: torch.Tensor | None = None,
    compute_grad: bool = False,
) -> KernelConfig:
    """The launch configuration ``jsd_triton`` uses for ``input`` (for a record's annotations).

    Args:
        input: The (BT, V) input as it would be passed.
        target: The target as it would be passed (its row stride matters); ``input``'s
            layout when not given.
        labels: Whether labels would be passed (their values do not matter).
        compute_grad: Whether the call would also write dL/dinput.

    Returns:
        The config from the committed tables (:func:`kernel_config` with the columns and
        layout the launch gives it); the same in every process on one device kind.
    """
    bt, v = input.shape
    stride_y = (target if target is not None else input).stride(0)
    _, cols, flat = layout(bt, v, input.stride(0), stride_y, labels)
    return kernel_config(input.device, input.dtype.itemsize, cols, compute_grad, flat)


def math_for(device: torch.device, dtype: torch.dtype, compute_grad: bool) -> tuple[str, str]:
    """The kernel's (FORM, OPS) for ``dtype`` on ``device``.

    Returns:
        :data:`FLOAT32_CUDA`, :data:`HALF_CUDA` or :data:`HALF_LOSS_CUDA` on NVIDIA's
        backend (bf16 and fp16 from sm_80); the same form with :data:`TL` elsewhere.
    """
    # The inline PTX exists on NVIDIA's backend only.
    cuda = (
        not INTERPRET
        and device.type == "cuda"
        and triton.runtime.driver.active.get_current_target().backend == "cuda"
    )
    if dtype == torch.float32:
        return FLOAT32_CUDA if cuda else (PAIR, TL)
    half = HALF_CUDA if compute_grad else HALF_LOSS_CUDA
    # The bf16 floor's max.NaN.bf16x2 needs sm_80.
    return half if cuda and torch.cuda.get_device_capability(device) >= (8, 0) else (half[0], TL)


def _loss_unit(form: str, beta_mode: int) -> float:
    """What the kernel's sums are in, times the loss: ln 2 where ``form`` sums in base 2
    (PAIR and FOLD at 0 < beta < 1), 1 where it sums in nats (LEAN, and beta 0 or 1 in
    every form)."""
    return math.log(2.0) if beta_mode == 2 and form != LEAN else 1.0


_SM_COUNTS: dict[torch.device, int] = {}


def sm_count(device: torch.device) -> int:
    """Multiprocessors of ``device`` (2 off the GPU), asked once per device."""
    count = _SM_COUNTS.get(device)
    if count is None:
        count = _SM_COUNTS[device] = (
            int(torch.cuda.get_device_properties(device).multi_processor_count)
            if device.type == "cuda"
            else 2
        )
    return count


def scale_programs(n: int, device: torch.device) -> int:
    """The grid of ``jsd_scale_kernel`` over ``n`` elements: two programs per SM at most."""
    return min(int(triton.cdiv(n, SCALE_BLOCK)), sm_count(device) * _SCALE_PROGRAMS_PER_SM)


@attrs.define
class Plan:
    """What one (device, stream, shape, dtype, flags) needs, kept between calls.

    Attributes:
        config: The launch configuration from the table.
        programs: The persistent grid.
        partials: One float32 partial sum per program.
        ticket: The counter that elects the program adding the partials (0 between calls:
            the kernel resets it).
        constexprs: The kernel's meta-parameters, passed by name.
        unit: What the kernel's sums are in, times the loss (ln 2 or 1).
        captured: Whether a CUDA graph captured a launch with this plan.
    """

    config: KernelConfig
    programs: int
    partials: torch.Tensor
    ticket: torch.Tensor
    constexprs: dict[str, Any]
    unit: float
    captured: bool = False


_PLANS: dict[tuple[Any, ...], Plan] = {}
_PLAN_LIMIT: Final = 256
#: Plans a CUDA graph captured: kept for the life of the process (see :func:`keep_if_captured`).
_CAPTURED_PLANS: list[Plan] = []


def _new_plan(
    device: torch.device,
    dtype: torch.dtype,
    rows: int,
    cols: int,
    flat: bool,
    beta_mode: int,
    has_labels: bool,
    compute_grad: bool,
) -> Plan:
    config = kernel_config(device, dtype.itemsize, cols, compute_grad, flat)
    programs = min(
        rows * triton.cdiv(cols, config.block_v), sm_count(device) * config.programs_per_sm
    )
    form, ops = math_for(device, dtype, compute_grad)
    return Plan(
        config=config,
        programs=programs,
        partials=torch.empty(programs, device=device, dtype=torch.float32),
        ticket=torch.zeros((), device=device, dtype=torch.int32),
        constexprs={
            "BETA_MODE": beta_mode,
            "HAS_LABELS": has_labels,
            "COMPUTE_GRAD": compute_grad,
            "FORM": form,
            "OPS": ops,
            "BLOCK_V": config.block_v,
            "BLOCK_P": triton.next_power_of_2(programs),
            "BLOCK_L": 1024,
            "FLAT": flat,
            "STAGES": config.stages,
        },
        unit=_loss_unit(form, beta_mode),
    )


def plan_for(
    device: torch.device,
    stream: int,
    dtype: torch.dtype,
    rows: int,
    cols: int,
    strides: tuple[int, int, int],
    flat: bool,
    beta_mode: int,
    has_labels: bool,
    compute_grad: bool,
) -> Plan:
    """The plan of a launch on ``stream``, made on first use and kept (up to 256 at a time).

    The partials and the ticket of a plan are used by one launch at a time: one plan per
    stream, so launches on two streams never share them.

    Args:
        device: Where the kernel runs.
        stream: The raw CUDA stream it is launched on (0 off the GPU).
        dtype: The inputs' dtype.
        rows: Rows as the kernel sees them (:func:`layout`).
        cols: Columns as the kernel sees them.
        strides: Row strides of input, target and dL/dinput (zeros for the flat loop).
        flat: Whether the kernel runs the flat loop.
        beta_mode: 0 (beta 0), 1 (beta 1) or 2 (in between).
        has_labels: Whether labels are passed.
        compute_grad: Whether the launch also writes dL/dinput.
    """
    key = (device, stream, dtype, rows, cols, strides, beta_mode, has_labels, compute_grad)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _PLAN_LIMIT:
            _PLANS.clear()
        plan = _PLANS[key] = _new_plan(
            device, dtype, rows, cols, flat, beta_mode, has_labels, compute_grad
        )
    return plan


def keep_if_captured(plan: Plan, capturing: bool) -> None:
    """Keep ``plan`` for the life of the process when a CUDA graph is capturing its launch.

    A captured graph replays with the plan's buffers for as long as the graph lives: they
    must outlive the cache's eviction, or the allocator hands their memory to other tensors
    while replays still write it.
    """
    if capturing and not plan.captured:
        plan.captured = True
        _CAPTURED_PLANS.append(plan)
