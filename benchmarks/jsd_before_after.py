"""The JSD kernel before and after a change, in one process: the same bits, then the time.

``--before`` names an earlier ``fused.py``, loaded beside this tree's package (its relative
imports resolve there); ``jsd_triton`` of this tree is "after".

1. Bits. Every case of the CPU tests (``tests/reference_kernels/test_jsd.py``: rows of 63
   to 1000 columns, float32, bfloat16 and float16, beta 0 to 1, with and without labels, a
   masked vocabulary), on Triton's interpreter (on a GPU only with ``--cases``: each case's
   variant compiles twice, minutes on a bare machine), and on a GPU at the timed shapes:
   the loss and dL/dinput of both, bit for bit (their raw bits compared, so -0.0 against
   0.0 differs, and a NaN equals only the same NaN).
2. Time (skipped with ``--check-only``). At the timed shapes (the sweep's on a GPU: 1024 to
   8192 x 128256, float32 and bfloat16), the loss alone, the forward with the gradient and
   the training step (forward and ``loss.backward()``, ``x.grad`` reset before each),
   ``--rounds`` rounds, the two taking turns first. Each is timed as called (the harness's
   timer: CUDA events around each call, L2 cleared before each by a read) and under a CUDA
   graph (GPU time alone); off the GPU by the wall clock, a smoke test of the plumbing and
   nothing more. ``after_over_before`` is the median of after over the median of before;
   ``slower`` lists the points where it passes ``1 + --tolerance``.

    git show 1c4cc2e:src/kernelindex_sdk/reference_kernels/jsd/fused.py > before_fused.py
    PYTHONPATH=src python3 benchmarks/jsd_before_after.py --before before_fused.py \\
        --out benchmarks/results/jsd_before_after_h200.json

On the CPU (``TRITON_INTERPRET=1`` set by the script), tiny sizes:

    PYTHONPATH=src python3 benchmarks/jsd_before_after.py --before before_fused.py \\
        --tokens 4 --vocab 300 --rounds 1 --out /tmp/jsd_before_after_cpu.json
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _results import gpu_facts, graph_ms, load_module, write_results

from kernelindex_sdk.reference_kernels.device import select_device

DEVICE = select_device()  # before any kernel module: off the GPU it turns the interpreter on

import torch  # noqa: E402

from kernelindex_sdk.reference_kernels import timing  # noqa: E402
from kernelindex_sdk.reference_kernels.jsd import jsd_triton  # noqa: E402

PACKAGE = "kernelindex_sdk.reference_kernels.jsd"
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# The CPU tests' shapes, betas and label patterns (tests/reference_kernels/test_jsd.py).
CHECK_SHAPES = [(1, 63), (2, 1000), (7, 130), (16, 257)]
CHECK_BETAS = [0.0, 0.1, 0.215, 0.5, 0.9, 1.0]
# The harness's timer, fewer samples: a round of every point stays well inside a minute.
MIN_SAMPLES = 50
KINDS = ("loss", "forward_grad", "step")

Jsd = Callable[..., torch.Tensor]


def _inputs(
    bt: int, v: int, dtype: torch.dtype, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = (torch.randn(bt, v, generator=g, device=DEVICE) * 2).log_softmax(-1)
    y = (torch.randn(bt, v, generator=g, device=DEVICE) * 2).log_softmax(-1)
    return x.to(dtype), y.to(dtype)


def _bits(t: torch.Tensor) -> torch.Tensor:
    """``t``'s raw bits as integers of its width (NaN payloads and the sign of 0 kept)."""
    return t.detach().contiguous().view({4: torch.int32, 2: torch.int16}[t.element_size()])


def _outputs(
    fn: Jsd, x: torch.Tensor, y: torch.Tensor, grad: bool, **kw: Any
) -> list[torch.Tensor]:
    """The loss, and with ``grad`` dL/dinput after ``loss.backward()``."""
    if not grad:
        with torch.no_grad():
            return [fn(x, y, **kw)]
    xg = x.clone().requires_grad_()
    loss = fn(xg, y, **kw)
    loss.backward()
    assert xg.grad is not None
    return [loss.detach(), xg.grad]


def _same_bits(before: Jsd, after: Jsd, x: torch.Tensor, y: torch.Tensor, **kw: Any) -> bool:
    """Whether both give the same bits, loss alone and with the gradient."""
    for grad in (False, True):
        got = _outputs(before, x, y, grad, **kw), _outputs(after, x, y, grad, **kw)
        if not all(torch.equal(_bits(a), _bits(b)) for a, b in zip(*got, strict=True)):
            return False
    return True


def check_cases(before: Jsd, after: Jsd) -> dict[str, Any]:
    """The CPU tests' cases, bit for bit: how many, and the ids of those that differ."""
    cases, differ = 0, []
    for (bt, v), dtype, beta, labelled in itertools.product(
        CHECK_SHAPES, DTYPES, CHECK_BETAS, (False, True)
    ):
        x, y = _inputs(bt, v, DTYPES[dtype], seed=bt * 1000 + v)
        labels = (
            torch.tensor([-100 if i % 3 == 1 else i for i in range(bt)], device=DEVICE)
            if labelled
            else None
        )
        cases += 1
        if not _same_bits(before, after, x, y, beta=beta, labels=labels):
            differ.append(f"B{bt}-V{v}-{dtype}-beta{beta}-{'labels' if labelled else 'none'}")
    for dtype, beta in itertools.product(DTYPES, (0.0, 0.5, 1.0)):
        # A vocabulary padded from 56 to 64 and a teacher with 4 entries masked.
        x, y = _inputs(3, 64, torch.float32, seed=7)
        x[:, 56:], y[:, 56:], y[:, :4] = float("-inf"), float("-inf"), float("-inf")
        cases += 1
        if not _same_bits(before, after, x.to(DTYPES[dtype]), y.to(DTYPES[dtype]), beta=beta):
            differ.append(f"masked-{dtype}-beta{beta}")
    return {"cases": cases, "differ": differ}


def _calls(fn: Jsd, x: torch.Tensor, xg: torch.Tensor, y: torch.Tensor) -> dict[str, Any]:
    def loss() -> torch.Tensor:
        with torch.no_grad():
            return fn(x, y)

    def forward_grad() -> torch.Tensor:
        return fn(xg, y)

    def step() -> torch.Tensor:
        # x.grad reset inside: the graph timer and the wall clock cannot reset it themselves.
        xg.grad = None
        out = fn(xg, y)
        out.backward()
        return out

    return {"loss": loss, "forward_grad": forward_grad, "step": step}


def _time(call: Callable[[], Any], gpu: bool) -> dict[str, float]:
    if not gpu:
        return {"wall_ms": timing.time_wall_clock(call, 5).quantile_ns(0.5) / 1e6}
    return {
        "as_called_ms": timing.time_cuda_events(call, [], MIN_SAMPLES).quantile_ns(0.5) / 1e6,
        "graph_ms": graph_ms(call),
    }


def time_point(impls: dict[str, Jsd], bt: int, v: int, dtype: str, rounds: int) -> dict[str, Any]:
    """Every kind of call of each implementation at one point, ``rounds`` times in turns."""
    x, y = _inputs(bt, v, DTYPES[dtype])
    xg = x.clone().requires_grad_()
    calls = {name: _calls(fn, x, xg, y) for name, fn in impls.items()}
    gpu = DEVICE.type == "cuda"
    found: dict[str, Any] = {"bits_equal": _same_bits(impls["before"], impls["after"], x, y)}
    names = list(impls)
    for kind in KINDS:
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in names}
        for r in range(rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                for timer, ms in _time(calls[name][kind], gpu).items():
                    samples[name].setdefault(timer, []).append(ms)
        row: dict[str, Any] = {"samples": samples}
        for timer in samples["after"]:
            before = statistics.median(samples["before"][timer])
            after = statistics.median(samples["after"][timer])
            row[timer] = {"before": before, "after": after, "after_over_before": after / before}
        found[kind] = row
        xg.grad = None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True, help="an earlier fused.py")
    parser.add_argument("--out", help="the JSON results (standard output when not given)")
    parser.add_argument("--tokens", help="rows BT, comma-separated (the sweep's on a GPU)")
    parser.add_argument("--vocab", type=int, help="V (128256 on a GPU, 256 off it)")
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--check-only", action="store_true", help="compare bits, time nothing")
    parser.add_argument("--cases", action="store_true", help="the CPU tests' cases on a GPU too")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    before = load_module(args.before, "_before_fused", PACKAGE).jsd_triton
    impls: dict[str, Jsd] = {"before": before, "after": jsd_triton}
    results: dict[str, Any] = {
        **gpu_facts(),
        "before": args.before,
        "interpreter": DEVICE.type != "cuda",
    }
    gpu = DEVICE.type == "cuda"
    if args.cases or not gpu:
        results["check"] = check_cases(before, jsd_triton)
        print(f"bits: {results['check']}", file=sys.stderr, flush=True)
    if not args.check_only:
        default = "1024,2048,4096,8192" if gpu else "4,16"
        tokens = [int(t) for t in (args.tokens or default).split(",")]
        vocab = args.vocab or (128256 if gpu else 256)
        points: dict[str, Any] = {}
        slower = []
        for dtype, bt in itertools.product(args.dtypes.split(","), tokens):
            key = f"{dtype}-{bt}x{vocab}"
            points[key] = time_point(impls, bt, vocab, dtype, args.rounds)
            ratios = {
                f"{kind} {timer}": row["after_over_before"]
                for kind in KINDS
                for timer, row in points[key][kind].items()
                if timer != "samples"
            }
            slower += [f"{key} {k} {r:.4f}" for k, r in ratios.items() if r > 1 + args.tolerance]
            shown = ", ".join(f"{k} {r:.3f}" for k, r in ratios.items())
            print(
                f"{key} bits equal: {points[key]['bits_equal']}; after/before: {shown}",
                file=sys.stderr,
                flush=True,
            )
            if gpu:
                torch.cuda.empty_cache()
        results.update(rounds=args.rounds, tolerance=args.tolerance, points=points, slower=slower)
        if not gpu:
            results["timing"] = "wall clock on Triton's interpreter: the plumbing, not a speed"
    results["seconds"] = round(time.perf_counter() - started, 1)
    write_results(results, args.out)
    differ = results.get("check", {}).get("differ")
    unequal = [k for k, p in results.get("points", {}).items() if p["bits_equal"] is False]
    return 1 if differ or unequal else 0


if __name__ == "__main__":
    sys.exit(main())
