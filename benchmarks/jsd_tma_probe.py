"""Does TMA, or another launch config, make the bf16 forward with the gradient faster?

TMA: Hopper's tensor memory accelerator. The forward with the gradient reads X and Y and
writes dL/dinput: the same bytes as ``torch.add(x, y, out=out)``. In bf16 the kernel of
b60a39a reached 93.9-94.0% of that rate at 4096-8192 x 128256 as called
(results/jsd_forward_h200_b60a39a_bf16_grad_4096_8192.json; issue 24 asks for 95%), while
the loss alone (no write) reaches the read roofline. This probe times, in one process,
interleaved repeats of CUDA-graph medians (``do_bench_cudagraph``) of ``torch.add``'s same
bytes, the production forward with the gradient (``production``: the config ``jsd_triton``
picks at this commit), and, by round (:data:`ROUNDS`):

- the production kernel launching other entries for bf16 with the gradient
  (``table_<BLOCK_V>_<warps>_<programs per SM>_<stages>``, rounds 2-5; round 5 also as
  called, ``as_called_ms``: the harness's timer, CUDA events around each call and L2
  cleared by a read before it, as benchmarks/jsd_forward.py times a call);
- a probe kernel with FOLD's arithmetic on tiles of R x 256 values of the flat BT*V row,
  written up to four ways (``<kind>_<R*256>_<warps>_<programs per SM>_st<stages>``, rounds
  1-2): ``ptr``, pointer loads and stores as the production kernel does (the control);
  ``tma_load``, X and Y read through host-made tensor descriptors, dx by pointer;
  ``tma_store``, pointer loads, dx written through a descriptor; ``tma_both``.

Every candidate's dx is compared with the production kernel's bit for bit (a probe
kernel's loss within 2^-8 relative: the production loss is rounded to bf16) and a table
entry's config with what the launch reports (``fused.config_for``) before it is timed; a
candidate that fails is recorded under ``checks`` and not timed. ``same_bytes_over_best``
is the same bytes' best time over each candidate's best: its fraction of the same-bytes
rate. Progress goes to standard error, the results (JSON) to ``--out`` or standard output.
On a GPU, round N as committed:

    PYTHONPATH=src python3 benchmarks/jsd_tma_probe.py --round N \
        --out benchmarks/results/jsd_tma_probe_roundN_h200.json

Rounds 1-4 ran before FLAT_TABLE existed (``production`` then launched CONFIG_TABLE's
(2048, 8, 4, 3)), with the round chosen by the environment (``KI_PROBE_ROUND``) and the
JSON on standard output: the same candidates, in the same order, with the same repeats as
:data:`ROUNDS`. Rounds 2-4 also built the production kernel's plan anew on every call (its
buffers allocated and its ticket zeroed inside each timed call, CUDA graphs included);
under them (8192, 8, 1, 3) led at 1024 and 2048 rows by 3-4 points. Round 5 builds each
candidate's plan once, as a user's call does: there that lead is gone (the entries within
0.3 points under CUDA graphs), and as called (2048, 4, 4, 3) leads at every size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import torch
import triton
import triton.language as tl
from _results import write_results
from triton.testing import do_bench_cudagraph
from triton.tools.tensor_descriptor import TensorDescriptor

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import fused

V = 128256
C = 256  # a TMA box holds at most 256 values along each dimension
BETA = 0.5
# Samples of the as-called timer at least (as benchmarks/jsd_forward.py takes).
AS_CALLED_SAMPLES = 100
#: The table key this probe varies: 2-byte values with the gradient.
KEY = (2, True)


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


@dataclass(frozen=True)
class Round:
    """What one round times.

    Attributes:
        kinds: Ways of writing the probe kernel (``ptr``, ``tma_load``, ``tma_store``,
            ``tma_both``).
        configs: The probe kernel's (R, warps, programs per SM, stages), each in every kind.
        entries: Entries (BLOCK_V, warps, programs per SM, stages) the production kernel
            launches.
        shapes: Rows of 128256 values.
        repeats: Interleaved repeats of every candidate's CUDA-graph median.
        as_called: Whether each repeat also times every candidate as called (the
            harness's timer: CUDA events around each call, L2 cleared by a read before it).
    """

    kinds: tuple[str, ...]
    configs: tuple[tuple[int, int, int, int], ...]
    entries: tuple[tuple[int, int, int, int], ...]
    shapes: tuple[int, ...]
    repeats: int
    as_called: bool = False


ROUNDS: dict[int, Round] = {
    # TMA against pointers, at a few configs of the probe kernel.
    1: Round(
        kinds=("ptr", "tma_load", "tma_store", "tma_both"),
        configs=(
            (8, 8, 4, 3),
            (4, 4, 8, 3),
            (8, 8, 4, 4),
            (16, 8, 2, 3),
            (8, 4, 4, 3),
            (8, 8, 4, 5),
            (4, 4, 8, 5),
        ),
        entries=(),
        shapes=(4096, 8192),
        repeats=2,
    ),
    # Pointer loads only, around the first round's best (8, 4, 4, 3), and the production
    # kernel with the nearest entries.
    2: Round(
        kinds=("ptr",),
        configs=(
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
        ),
        entries=((2048, 4, 4, 3), (2048, 4, 5, 3), (4096, 8, 2, 3), (2048, 4, 6, 3)),
        shapes=(4096, 8192),
        repeats=3,
    ),
    # The production kernel alone, at 1024-8192 rows.
    3: Round(
        kinds=(),
        configs=(),
        entries=(
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
        ),
        shapes=(1024, 2048, 4096, 8192),
        repeats=3,
    ),
    # Around the third round's two best, (2048, 4, 4, 3) and (8192, 8, 1, 3).
    4: Round(
        kinds=(),
        configs=(),
        entries=(
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
        ),
        shapes=(1024, 2048, 4096, 8192),
        repeats=3,
    ),
    # As called too: round 4's two best against CONFIG_TABLE's entry, which the graph
    # medians alone cannot settle at 1024 and 2048 rows.
    5: Round(
        kinds=(),
        configs=(),
        entries=((2048, 8, 4, 3), (8192, 8, 1, 3), (2048, 4, 4, 3)),
        shapes=(1024, 2048, 4096, 8192),
        repeats=3,
        as_called=True,
    ),
}


def variants(spec: Round) -> dict[str, tuple[int, int, int, int, bool, bool]]:
    """The probe kernel's variants of a round: name -> make_probe's arguments after x, y."""
    return {
        f"{kind}_{r * C}_{w}_{p}_st{s}": (
            r,
            w,
            p,
            s,
            kind in ("tma_load", "tma_both"),
            kind in ("tma_store", "tma_both"),
        )
        for kind in spec.kinds
        for r, w, p, s in spec.configs
    }


def entry_name(entry: tuple[int, int, int, int]) -> str:
    return "table_" + "_".join(map(str, entry))


@contextlib.contextmanager
def launching(entry: tuple[int, int, int, int] | None) -> Iterator[None]:
    """Within it, the production kernel launches ``entry`` for bf16/fp16 with the gradient
    in every layout (None: the committed tables); the tables are restored after it.

    Both tables are patched: a flat row looks in FLAT_TABLE first. Plans are cleared on
    entry and exit, so that no plan built with one entry serves another.
    """
    with contextlib.ExitStack() as stack:
        if entry is not None:
            for arch, entries in fused.CONFIG_TABLE.items():
                stack.enter_context(mock.patch.dict(entries, {KEY: entry}))
                flat = {**fused.FLAT_TABLE.get(arch, {}), KEY: entry}
                stack.enter_context(mock.patch.dict(fused.FLAT_TABLE, {arch: flat}))
        fused._PLANS.clear()
        try:
            yield
        finally:
            fused._PLANS.clear()


def _production(
    x: torch.Tensor, y: torch.Tensor, entry: tuple[int, int, int, int] | None = None
) -> Callable[[], Any]:
    """A call of the production forward with the gradient launching ``entry`` (None: the
    committed tables). Each call keeps its own plans, built under ``entry`` on its first
    launch and reused after it, so that a timed call pays what a user's call pays."""
    plans: dict[Any, Any] = {}

    def launch() -> Any:
        saved = fused._PLANS
        fused._PLANS = plans
        try:
            return fused._launch(x, y, BETA, None, -100, True)
        finally:
            fused._PLANS = saved

    def call() -> Any:
        if plans:
            return launch()
        # launching() clears the module's own plans, not this call's.
        with launching(entry):
            return launch()

    return call


def _graph(fn: Callable[[], Any]) -> float:
    with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
        return float(do_bench_cudagraph(fn, rep=20, return_mode="median"))


def _shape(bt: int, spec: Round) -> dict[str, Any]:
    """Checks and graph medians of every candidate of ``spec`` at bt x V, bf16."""
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
    for entry in spec.entries:
        name = entry_name(entry)
        call = _production(x, y, entry)
        with launching(entry):
            config = fused.config_for(x, target=y, compute_grad=True)
        launched = (config.block_v, config.num_warps, config.programs_per_sm, config.stages)
        loss, dx = call()
        checks[name] = {
            "dx_bitwise_equal": bool(torch.equal(dx, ref_dx)),
            "launched": list(launched),
        }
        if checks[name]["dx_bitwise_equal"] and launched == entry:
            calls[name] = call
    for name, args in variants(spec).items():
        try:
            call = make_probe(x, y, *args)
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
    called: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(spec.repeats):
        for name, call in calls.items():
            times[name].append(_graph(call))
            if spec.as_called:
                measured = timing.time_cuda_events(call, [], AS_CALLED_SAMPLES)
                called[name].append(measured.quantile_ns(0.5) / 1e6)
    found = {
        "checks": checks,
        "graph_ms": times,
        "same_bytes_over_best": _over_best(times),
    }
    if spec.as_called:
        found["as_called_ms"] = called
        found["as_called_same_bytes_over_best"] = _over_best(called)
    return found


def _over_best(times: dict[str, list[float]]) -> dict[str, float]:
    """The same bytes' best time over each candidate's best, best first."""
    same_bytes = min(times["same_bytes"])
    ranked = sorted(times.items(), key=lambda kv: min(kv[1]))
    return {name: round(same_bytes / min(t), 4) for name, t in ranked}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--round", type=int, choices=sorted(ROUNDS), required=True)
    parser.add_argument("--out", help="results file (JSON); standard output when not given")
    args = parser.parse_args()
    spec = ROUNDS[args.round]
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "round": args.round,
        "variants": {k: list(v) for k, v in variants(spec).items()},
    }
    for bt in spec.shapes:
        out[f"bfloat16-{bt}"] = result = _shape(bt, spec)
        print(json.dumps({bt: result["same_bytes_over_best"]}), file=sys.stderr)
        if "as_called_same_bytes_over_best" in result:
            print(json.dumps({bt: result["as_called_same_bytes_over_best"]}), file=sys.stderr)
        torch.cuda.empty_cache()
    write_results(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
