"""Kernel variants of the fused JSD forward side by side, and where a call's host time goes.

One process, one GPU. Each variant is this tree's ``fused.py`` (or ``KI_BASELINE_FUSED``, an
earlier one) loaded as its own module, with its form and config table set before the first
launch, so every variant compiles its own kernels:

- ``kernels``: CUDA-graph medians (ms) of the forward with the gradient and of the loss
  alone for every variant at 1024, 4096 and 8192 x 128256, fp32 and bf16, two interleaved
  rounds, beside the same bytes (``torch.add(x, y, out=out)``), with each variant's loss and
  gradient checked against float64 first (max relative error of the loss, of the gradient
  by norm).
- ``steps``: the training step (forward + ``loss.backward()``) as called, the harness's
  timer (CUDA events, L2 cleared by a read), for each variant at 1024 and 8192 rows.
- ``host``: host us per call, at 1024 x 128256, of a torch ``add_``, our loss call, the
  launch without our checks and plan lookup (Triton's ``kernel[grid](...)`` alone), the
  launch through the compiled kernel Triton returns (the fused-softmax tutorial's
  ``kernel[grid](*args)``), a do-nothing ``autograd.Function`` step, and our whole step.

    KI_BASELINE_FUSED=old_fused.py PYTHONPATH=src:benchmarks python3 \
        benchmarks/jsd_variant_probe.py kernels steps host > results.json
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any

import torch
import triton
from jsd_forward import host_us
from triton.testing import do_bench_cudagraph

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import fused, jsd_torch

V = 128256
HERE = fused.__file__

# name -> (file, FORM for bf16 with the gradient, {(size, grad): (BLOCK_V, num_warps,
# programs per SM, stages)}, {module constant: value}). Variants named bf16_* are timed
# for bf16 only, f32_* for float32 only.
VARIANTS: dict[str, tuple[str, int | None, dict[tuple[int, bool], Any], dict[str, Any]]] = {
    "base": ("baseline", None, {}, {}),
    "bf16_fold_8192_32_1": ("tree", fused.FOLD, {(2, True): (8192, 32, 1, 1)}, {}),
    "bf16_fold_2048_8_4_st3": ("tree", fused.FOLD, {(2, True): (2048, 8, 4, 3)}, {}),
    "bf16_fold_2048_8_5_st3": ("tree", fused.FOLD, {(2, True): (2048, 8, 5, 3)}, {}),
    "bf16_fold_2048_8_4_st4": ("tree", fused.FOLD, {(2, True): (2048, 8, 4, 4)}, {}),
    "bf16_fold_1024_4_8_st3": ("tree", fused.FOLD, {(2, True): (1024, 4, 8, 3)}, {}),
    "bf16_fold_1024_4_10_st3": ("tree", fused.FOLD, {(2, True): (1024, 4, 10, 3)}, {}),
    "bf16_fold_1024_4_8_st4": ("tree", fused.FOLD, {(2, True): (1024, 4, 8, 4)}, {}),
    "bf16_loss_2048_8_8_st3": ("tree", fused.FOLD, {(2, False): (2048, 8, 8, 3)}, {}),
    "bf16_loss_4096_8_4_st3": ("tree", fused.FOLD, {(2, False): (4096, 8, 4, 3)}, {}),
    "f32_4096_16_2": ("tree", None, {(4, True): (4096, 16, 2, 1)}, {}),
    "f32_1024_4_8_st3": (
        "tree",
        None,
        {(4, True): (1024, 4, 8, 3), (4, False): (1024, 4, 10, 3)},
        {},
    ),
    "f32_1024_4_10_st2": (
        "tree",
        None,
        {(4, True): (1024, 4, 10, 2), (4, False): (2048, 8, 5, 3)},
        {},
    ),
    "f32_1024_4_8_st2": ("tree", None, {(4, True): (1024, 4, 8, 2)}, {}),
    "f32_2048_8_4_st2": ("tree", None, {(4, True): (2048, 8, 4, 2)}, {}),
    "f32_2048_8_4_st3": ("tree", None, {(4, True): (2048, 8, 4, 3)}, {}),
}


def _load(path: str, name: str) -> Any:
    full = f"kernelindex_sdk.reference_kernels.jsd._probe_{name}"
    spec = importlib.util.spec_from_file_location(full, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


def _variants(names: list[str] | None = None) -> dict[str, Any]:
    out = {}
    for name, (where, form, table, constants) in VARIANTS.items():
        if names and name not in names:
            continue
        if where == "baseline":
            if not os.environ.get("KI_BASELINE_FUSED"):
                continue
            module = _load(os.environ["KI_BASELINE_FUSED"], name)
        else:
            module = _load(HERE, name)
            if form is not None:
                module.HALF_CUDA = (form, module.PTX)
            module.CONFIG_TABLE = {
                arch: {**entries, **table} for arch, entries in module.CONFIG_TABLE.items()
            }
            # A flat row looks in FLAT_TABLE first: the variant's entries must not hide there.
            module.FLAT_TABLE = {
                arch: {key: entry for key, entry in entries.items() if key not in table}
                for arch, entries in getattr(module, "FLAT_TABLE", {}).items()
            }
            for constant, value in constants.items():
                setattr(module, constant, value)
        out[name] = module
    return out


def _inputs(bt: int, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).to(dtype)
    y = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).to(dtype)
    return x, y


def _graph(fn: Callable[[], Any]) -> float:
    with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
        return float(do_bench_cudagraph(fn, rep=20, return_mode="median"))


def _step_graph(module: Any, x: torch.Tensor, y: torch.Tensor) -> float:
    """Median ms of replays of one CUDA graph holding forward and backward."""
    stream = torch.cuda.Stream()  # type: ignore[no-untyped-call]
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # type: ignore[no-untyped-call]
        for _ in range(2):
            x.grad = None
            module.jsd_triton(x, y).backward()
    torch.cuda.current_stream().wait_stream(stream)
    x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        module.jsd_triton(x, y).backward()
    graph.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(30)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(30)]
    for start, end in zip(starts, ends, strict=True):
        start.record()
        graph.replay()
        end.record()
    torch.cuda.synchronize()
    x.grad = None
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))


def _errors(module: Any, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    """Loss and gradient of ``module`` against float64 autograd of jsd_torch."""
    x64 = x.double().requires_grad_()
    ref = jsd_torch(x64, y.double())
    ref.backward()
    xg = x.clone().requires_grad_()
    got = module.jsd_triton(xg, y)
    got.backward()
    assert xg.grad is not None
    assert x64.grad is not None
    loss_only = module.jsd_triton(x, y)
    return {
        "loss_rel": abs(float(got) - float(ref)) / abs(float(ref)),
        "loss_only_rel": abs(float(loss_only) - float(ref)) / abs(float(ref)),
        "grad_rel": float((xg.grad.double() - x64.grad).norm() / x64.grad.norm()),
        "grad_finite": bool(torch.isfinite(xg.grad).all()),
    }


def _fits(name: str, dtype: torch.dtype) -> bool:
    """Whether variant ``name`` changes anything for ``dtype`` (skip the others' timings)."""
    if name.startswith("f32_"):
        return dtype == torch.float32
    if name.startswith("bf16_"):
        return dtype != torch.float32
    return True


class _Recorder:
    """Stands in for a module's kernel during ``kernels``: launches it as ``_launch`` does and
    records each compiled kernel's registers and spills (per config and form)."""

    def __init__(self, fn: Any, sink: dict[str, Any]) -> None:
        self.fn = fn
        self.sink = sink

    def __getitem__(self, grid: tuple[int, ...]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            compiled = self.fn[grid](*args, **kwargs)
            key = "{}-{}-{}-grad{}-flat{}-{}".format(
                kwargs.get("BLOCK_V"),
                kwargs.get("num_warps"),
                kwargs.get("FORM"),
                int(bool(kwargs.get("COMPUTE_GRAD"))),
                int(bool(kwargs.get("FLAT"))),
                str(args[0].dtype).removeprefix("torch."),
            )
            self.sink[key] = {
                "regs": getattr(compiled, "n_regs", None),
                "spills": getattr(compiled, "n_spills", None),
                "programs": grid[0],
            }
            return compiled

        return run


def kernels() -> dict[str, Any]:
    mods = _variants()
    out: dict[str, Any] = {"registers": {}}
    for module in mods.values():
        module.jsd_fwd_kernel = _Recorder(module.jsd_fwd_kernel, out["registers"])
    for dtype in (torch.bfloat16, torch.float32):
        for bt in (1024, 8192):
            x, y = _inputs(bt, dtype)
            xg = x.clone().requires_grad_()
            add_out = torch.empty_like(x)
            key = f"{str(dtype).removeprefix('torch.')}-{bt}"
            row: dict[str, Any] = {"same_bytes_graph_ms": []}
            if bt == 1024:
                for name, module in mods.items():
                    if not _fits(name, dtype):
                        continue
                    try:
                        row.setdefault("errors", {})[name] = _errors(module, x, y)
                    except Exception as exc:  # a variant that fails is reported, not fatal
                        row.setdefault("errors", {})[name] = repr(exc)[:300]
            for _ in range(3):
                row["same_bytes_graph_ms"].append(
                    _graph(lambda x=x, y=y, o=add_out: torch.add(x, y, out=o))
                )
                for name, module in mods.items():
                    if isinstance(row.get("errors", {}).get(name), str) or not _fits(name, dtype):
                        continue
                    got = row.setdefault(name, {})
                    got.setdefault("grad_graph_ms", []).append(
                        _graph(lambda m=module, xg=xg, y=y: m.jsd_triton(xg, y))
                    )
                    got.setdefault("loss_graph_ms", []).append(
                        _graph(lambda m=module, x=x, y=y: m.jsd_triton(x, y))
                    )
                    if name != "base":
                        got.setdefault("step_graph_ms", []).append(_step_graph(module, xg, y))
            out[key] = row
            print(key, json.dumps(_medians(row)), file=sys.stderr, flush=True)
            del x, y, xg, add_out
            torch.cuda.empty_cache()
    return out


def _step_point(
    mods: dict[str, Any], flush: timing.ReadFlush, dtype: torch.dtype, bt: int
) -> dict[str, Any]:
    x, y = _inputs(bt, dtype)
    xg = x.clone().requires_grad_()
    add_out = torch.empty_like(x)
    row: dict[str, Any] = {}

    def add() -> torch.Tensor:
        return torch.add(x, y, out=add_out)

    for _ in range(2):
        events = timing.time_cuda_events(add, [], 100, flush=flush)
        row.setdefault("same_bytes_harness_ms", []).append(statistics.median(events.samples_ms))
        for name, module in mods.items():
            if not _fits(name, dtype):
                continue

            def train(m: Any = module) -> None:
                m.jsd_triton(xg, y).backward()

            events = timing.time_cuda_events(train, [xg], 100, flush=flush)
            row.setdefault(name, []).append(statistics.median(events.samples_ms))
            xg.grad = None
    return row


def steps() -> dict[str, Any]:
    mods = _variants()
    flush = timing.ReadFlush(torch.device("cuda"))
    out: dict[str, Any] = {}
    for dtype in (torch.bfloat16, torch.float32):
        for bt in (1024, 8192):
            key = f"{str(dtype).removeprefix('torch.')}-{bt}"
            out[key] = _step_point(mods, flush, dtype, bt)
            print(key, json.dumps(_medians(out[key])), file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
    return out


class _Nothing(torch.autograd.Function):
    """Returns a saved gradient: what autograd costs around a kernel, without one."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dx: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(dx)
        return dx.new_empty(())

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, None]:
        (dx,) = ctx.saved_tensors
        return dx, None


def _host_parts(dtype: torch.dtype) -> tuple[dict[str, Callable[[], Any]], str]:
    """The calls whose host time ``host`` measures, and whether the compiled-kernel
    launch ran."""
    small = torch.zeros((), device="cuda")
    x, y = _inputs(1024, dtype)
    xg = x.clone().requires_grad_()
    dx = torch.empty_like(x)
    fused.jsd_triton(x, y)
    fused._launch(x, y, 0.5, None, -100, True)
    plans = {k[-1]: p for k, p in fused._PLANS.items() if k[2] == dtype}
    loss = x.new_empty(())

    def args(grad: bool) -> list[Any]:
        plan = plans[grad]
        return [
            *(x, y, x, dx if grad else x, plan.partials, plan.ticket, loss),
            *(1, x.numel(), 0, 0, 0, 0.5, -1.0, -1.0, plan.unit, 1.0 / 1024, -100),
        ]

    def jit(grad: bool) -> Any:
        plan = plans[grad]
        return fused.jsd_fwd_kernel[(plan.programs,)](
            *args(grad), **plan.constexprs, num_warps=plan.config.num_warps
        )

    plan = plans[False]
    grid = (plan.programs,)
    loss_args = args(False)
    compiled = jit(False)
    full = [*loss_args, *plan.constexprs.values()]
    stream = torch.cuda.current_stream().cuda_stream
    runner_ok = "yes"
    try:
        compiled[grid](*full)
        compiled[grid](*full, stream=stream)
        torch.cuda.synchronize()
    except Exception as exc:  # reported: whether this Triton takes the tutorial's call
        runner_ok = repr(exc)[:300]

    def step() -> None:
        xg.grad = None
        fused.jsd_triton(xg, y).backward()

    def nothing_step() -> None:
        xg.grad = None
        _Nothing.apply(xg, dx).backward()

    grad_args = args(True)
    plan_g = plans[True]
    parts: dict[str, Callable[[], Any]] = {
        "torch_add_": lambda: small.add_(1.0),
        "loss_jsd_triton": lambda: fused.jsd_triton(x, y),
        "forward_grad": lambda: fused.jsd_triton(xg, y),
        "step": step,
        "jit_launch_only": lambda: fused.jsd_fwd_kernel[grid](
            *loss_args, **plan.constexprs, num_warps=plan.config.num_warps
        ),
        "jit_launch_grad_only": lambda: fused.jsd_fwd_kernel[(plan_g.programs,)](
            *grad_args, **plan_g.constexprs, num_warps=plan_g.config.num_warps
        ),
        "autograd_nothing_step": nothing_step,
        "autograd_nothing_forward": lambda: _Nothing.apply(xg, dx),
        "scale_launch": lambda: fused._scale(dx, small.to(dtype)),
        "new_empty_scalar": lambda: x.new_empty(()),
        "new_empty_bt_v": lambda: x.new_empty(x.shape),
        "current_stream": lambda: torch.cuda.current_stream().cuda_stream,
        "current_device": torch.cuda.current_device,
        "check": lambda: fused._check(x, y, 0.5, None, -100),
        "launch_loss_no_autograd": lambda: fused._launch(x, y, 0.5, None, -100, False),
        "launch_grad_no_autograd": lambda: fused._launch(x, y, 0.5, None, -100, True),
    }
    if runner_ok == "yes":
        parts["compiled_runner"] = lambda: compiled[grid](*full)
        parts["compiled_runner_stream"] = lambda: compiled[grid](*full, stream=stream)
    return parts, runner_ok


def host() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.bfloat16):
        name = str(dtype).removeprefix("torch.")
        parts, runner_ok = _host_parts(dtype)
        out[f"{name}-compiled_runner"] = runner_ok
        for _ in range(3):
            per_fn = host_us(*parts.values(), calls=100, batches=5)
            for key, values in zip(parts, per_fn, strict=True):
                out.setdefault(f"{name}-{key}", []).append(statistics.median(values))
    print(json.dumps(_medians(out)), file=sys.stderr, flush=True)
    return out


def _medians(row: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            result[key] = _medians(value)
        elif isinstance(value, list) and value and all(isinstance(v, float) for v in value):
            result[key] = round(statistics.median(value), 4)
        else:
            result[key] = value
    return result


def main() -> int:
    which = sys.argv[1:] or ["kernels", "steps", "host"]
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "triton": triton.__version__,
    }
    parts = {"kernels": kernels, "steps": steps, "host": host}
    for part in which:
        try:
            out[part] = parts[part]()
        except Exception as exc:  # keep what the other parts measured
            out[part] = repr(exc)[:1000]
            print(part, "failed:", repr(exc)[:1000], file=sys.stderr, flush=True)
        out[f"{part}_medians"] = _medians(out[part]) if isinstance(out[part], dict) else None
        sys.stdout.flush()
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
