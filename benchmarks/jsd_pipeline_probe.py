"""Where the JSD kernel's time goes: the timer's L2 flush, host cost, launch configs.

Three questions, one process, one GPU (a fourth, software pipelining with
``tl.range(num_stages=S)``, was measured at commit 9f32a84: results/jsd_pipeline_stages_h200.json):

1. ``flush``: the gap between do_bench and the CUDA-graph median. The same kernel (the plain
   read stream of jsd_forward.py, and jsd_triton) timed with CUDA events around each call
   after different L2 flushes: writing 256 MB (as do_bench), the harness's read flush
   (timing.ReadFlush), writing then reading (the dirty lines written back before the timed
   call), and none; inputs that fit in L2 show whether the read flush evicts them.
2. ``host``: host microseconds per call, medians of 5 batches of 200 calls issued while the
   GPU is busy, for jsd_triton with and without the gradient and for their parts.
3. ``configs``: CUDA-graph medians of the config table's candidates, three interleaved
   rounds (the spread between rounds is the noise a single run would hide).
4. ``versus``: this tree's ``jsd_triton`` against an earlier ``fused.py`` (the path in
   ``KI_BASELINE_FUSED``, e.g. from ``git show <commit>:src/.../fused.py``), three
   interleaved rounds: the harness's timer (read flush, CUDA events) and the CUDA-graph
   median at 1024..8192 rows, with and without the gradient, and host us per call.
5. ``host_versus``: host us per call only, this tree against ``KI_BASELINE_FUSED``, five
   interleaved rounds, beside a torch launch, an allocation and a no-op autograd.Function.

    PYTHONPATH=src python3 benchmarks/jsd_pipeline_probe.py \
        > benchmarks/results/jsd_pipeline_probe_h200.json
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
from jsd_forward import READ_CONFIGS, _read_kernel, host_us
from triton.testing import do_bench, do_bench_cudagraph

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import fused, jsd_triton

V = 128256


def _inputs(bt: int, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).to(dtype)
    y = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).to(dtype)
    return x, y


def _graph(fn: Callable[[], Any]) -> float:
    with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
        return float(do_bench_cudagraph(fn, rep=30, return_mode="median"))


def _events(fn: Callable[[], Any], flush: Callable[[], Any] | None, n: int = 200) -> float:
    for _ in range(5):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    torch.cuda.synchronize()
    for i in range(n):
        if flush is not None:
            flush()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))


def configs() -> dict[str, Any]:
    """CUDA-graph medians of table candidates, three interleaved rounds, at 1024 x 128256."""
    out: dict[str, Any] = {}
    table = fused.CONFIG_TABLE["sm_90"]
    original = dict(table)
    # A flat row looks in FLAT_TABLE first: emptied here, so that each candidate launches.
    flat = fused.FLAT_TABLE.get("sm_90", {})
    flat_original = dict(flat)
    flat.clear()
    candidates = {
        (torch.float32, True): [(4096, 16, 4), (8192, 16, 2), (4096, 8, 4)],
        (torch.bfloat16, True): [(16384, 32, 2), (4096, 8, 4), (8192, 16, 2)],
        (torch.float32, False): [(4096, 16, 4), (8192, 16, 2), (8192, 16, 4)],
        (torch.bfloat16, False): [(4096, 16, 8), (8192, 16, 4), (4096, 8, 8)],
    }
    for (dtype, grad), entries in candidates.items():
        x, y = _inputs(1024, dtype)
        x.requires_grad_(grad)
        for rnd in range(3):
            for config in entries:
                table[(dtype.itemsize, grad)] = (*config, False)
                fused._PLANS.clear()
                key = f"{dtype}-grad{grad}-{config}"
                jsd_triton(x, y)
                row = out.setdefault(key, [])
                row.append(_graph(lambda: jsd_triton(x, y)))  # noqa: B023
                if rnd == 2:
                    print(key, row, file=sys.stderr, flush=True)
        table.update(original)
    flat.update(flat_original)
    fused._PLANS.clear()
    return out


def flush() -> dict[str, Any]:
    out: dict[str, Any] = {}
    cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
    part = torch.empty(4096, device="cuda")
    read_flush = timing.ReadFlush(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flushes: dict[str, Callable[[], Any] | None] = {
        "write": cache.zero_,
        "read": read_flush,
        "write_then_read": lambda: (cache.zero_(), read_flush()),
        "none": None,
    }
    # 16 and 40 rows fit in L2 (16 and 41 MB): there a flush that fails to evict shows as
    # a time near "none" (inputs served from L2).
    for dtype, bt in (
        (torch.float32, 16),
        (torch.float32, 40),
        (torch.float32, 1024),
        (torch.float32, 2048),
        (torch.float32, 8192),
        (torch.bfloat16, 1024),
    ):
        x, y = _inputs(bt, dtype)
        n = x.numel()
        block, warps, per_sm = READ_CONFIGS[2]
        grid = (min(triton.cdiv(n, block), sms * per_sm),)

        def read(grid: tuple[int] = grid, block: int = block, warps: int = warps) -> None:
            _read_kernel[grid](x, y, part, n, BLOCK=block, num_warps=warps)  # noqa: B023

        for name, fn in (("read_stream", read), ("jsd_triton", lambda: jsd_triton(x, y))):  # noqa: B023
            row = {f"events_{k}": _events(fn, f) for k, f in flushes.items()}
            row["do_bench"] = float(do_bench(fn, rep=200, return_mode="median"))
            row["cudagraph"] = _graph(fn)
            key = f"{dtype}-{bt}-{name}"
            out[key] = row
            print(key, row, file=sys.stderr, flush=True)
    return out


def _host_us(fn: Callable[[], Any], calls: int = 200, batches: int = 5) -> float:
    return statistics.median(host_us(fn, calls=calls, batches=batches)[0])


def host() -> dict[str, float]:
    x, y = _inputs(1024, torch.float32)
    xg = x.clone().requires_grad_()
    small = torch.empty((), device="cuda")

    class Noop(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(b)
            return small

        @staticmethod
        def backward(ctx: Any, g: torch.Tensor) -> Any:
            return None, None

    out = {
        "jsd_triton_loss": _host_us(lambda: jsd_triton(x, y)),
        "jsd_triton_grad": _host_us(lambda: jsd_triton(xg, y)),
        "launch_grad_no_autograd": _host_us(lambda: fused._launch(x, y, 0.5, None, -100, True)),
        "launch_loss": _host_us(lambda: fused._launch(x, y, 0.5, None, -100, False)),
        "autograd_function_noop": _host_us(lambda: Noop.apply(xg, small)),
        "torch_empty_like_input": _host_us(lambda: torch.empty_like(x)),
        "torch_empty_scalar": _host_us(lambda: torch.empty((), device="cuda")),
        "torch_add_": _host_us(lambda: small.add_(1.0)),
    }
    print(out, file=sys.stderr, flush=True)
    return out


def _baseline() -> Any:
    """The earlier fused.py as a module beside this tree's (its relative imports resolve)."""
    path = os.environ["KI_BASELINE_FUSED"]
    name = "kernelindex_sdk.reference_kernels.jsd._baseline_fused"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _versus_case(
    impls: dict[str, Callable[..., torch.Tensor]],
    dtype: torch.dtype,
    grad: bool,
    bt: int,
    flush_: timing.ReadFlush,
) -> dict[str, dict[str, list[float]]]:
    x, y = _inputs(bt, dtype)
    x.requires_grad_(grad)
    rows: dict[str, dict[str, list[float]]] = {n: {} for n in impls}
    for _ in range(3):
        for name, impl in impls.items():

            def call(impl: Callable[..., torch.Tensor] = impl) -> torch.Tensor:
                with torch.set_grad_enabled(grad):
                    return impl(x, y)

            events = timing.time_cuda_events(call, [x], 100, flush=flush_)
            got = rows[name]
            got.setdefault("harness_ms", []).append(statistics.median(events.samples_ms))
            got.setdefault("cudagraph_ms", []).append(_graph(call))
            got.setdefault("host_us", []).append(_host_us(call, calls=100))
    return rows


def versus() -> dict[str, Any]:
    """This tree's jsd_triton against the baseline's, interleaved, one process."""
    impls = {"baseline": _baseline().jsd_triton, "new": jsd_triton}
    flush_ = timing.ReadFlush(torch.device("cuda"))
    out: dict[str, Any] = {}
    for grad in (False, True):
        for dtype in (torch.bfloat16, torch.float32):
            for bt in (1024, 2048, 4096, 8192):
                key = f"{str(dtype).removeprefix('torch.')}-{bt}{'-grad' if grad else ''}"
                out[key] = _versus_case(impls, dtype, grad, bt, flush_)
                print(key, json.dumps(out[key]), file=sys.stderr, flush=True)
                torch.cuda.empty_cache()
    return out


def host_versus() -> dict[str, Any]:
    """Host us per call of this tree's jsd_triton against the baseline's (as ``versus``),
    five interleaved rounds at 1024 rows, beside the parts of a call that torch and
    Triton cost on this host (a torch elementwise launch, a scalar allocation, a no-op
    autograd.Function)."""
    impls = {"baseline": _baseline().jsd_triton, "new": jsd_triton}
    small = torch.empty((), device="cuda")

    class Noop(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: torch.Tensor) -> torch.Tensor:
            return small

        @staticmethod
        def backward(ctx: Any, g: torch.Tensor) -> Any:
            return None

    out: dict[str, Any] = {}
    cases = [(dtype, grad) for grad in (False, True) for dtype in (torch.float32, torch.bfloat16)]
    inputs = {case: _inputs(1024, case[0]) for case in cases}
    for x, _ in inputs.values():
        x.requires_grad_()
    for _ in range(5):
        for dtype, grad in cases:
            x, y = inputs[dtype, grad]
            key = f"{str(dtype).removeprefix('torch.')}{'-grad' if grad else ''}"
            for name, impl in impls.items():

                def call(
                    impl: Callable[..., torch.Tensor] = impl,
                    x: torch.Tensor = x,
                    y: torch.Tensor = y,
                    grad: bool = grad,
                ) -> torch.Tensor:
                    with torch.set_grad_enabled(grad):
                        return impl(x, y)

                out.setdefault(f"{key}-{name}", []).append(_host_us(call, calls=100))
        xg = inputs[torch.float32, True][0]
        refs: dict[str, Callable[[], Any]] = {
            "torch_add_": lambda: small.add_(1.0),
            "torch_empty_scalar": lambda: torch.empty((), device="cuda"),
            "autograd_function_noop": lambda xg=xg: Noop.apply(xg),
        }
        for name, fn in refs.items():
            out.setdefault(name, []).append(_host_us(fn, calls=100))
    print(json.dumps(out), file=sys.stderr, flush=True)
    return out


def main() -> int:
    which = sys.argv[1:] or ["host", "flush", "configs"]
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "triton": triton.__version__,
    }
    for part in which:
        parts = {
            "host": host,
            "flush": flush,
            "configs": configs,
            "versus": versus,
            "host_versus": host_versus,
        }
        out[part] = parts[part]()
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
