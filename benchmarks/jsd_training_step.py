"""A training step with our JSD loss against the bytes it must move, and against an earlier kernel.

One process, one GPU. ``KI_BASELINE_FUSED`` names an earlier ``fused.py`` (e.g. ``git show
<commit>:src/kernelindex_sdk/reference_kernels/jsd/fused.py``), loaded beside this tree's;
``KI_VARIANTS`` (``name=path,...``) adds more, timed as this tree's is.

- ``profile``: torch.profiler over 20 training steps (forward + ``loss.backward()``) of each,
  at 1024 x 128256: device-to-host copies and host synchronizations per step, and the GPU's
  idle time between kernels per step (the timeline of a host that waits for the GPU).
- ``host``: host us per call of this tree's launch path and its parts (loss, forward with
  the gradient, a whole step, the launch without autograd, the scale kernel's launch, the
  current stream, a scalar allocation) beside a torch ``add_`` launch.
- ``step``: at 1024..8192 x 128256, fp32 and bf16, three interleaved rounds (``KI_ROUNDS``)
  of baseline and this tree (medians, ms):
  ``step_ms`` (triton.testing.do_bench of forward + backward with ``grad_to_none``, as the
  step is called; its L2 flush writes 256 MB), ``step_harness_ms`` (the harness's timer:
  CUDA events, L2 cleared by a read), ``forward_grad_graph_ms`` (the forward that writes
  dL/dinput, under a CUDA graph), ``loss_graph_ms`` (the loss alone, CUDA graph: what
  the masked-entry floor costs), ``step_graph_ms`` (the whole step captured in one CUDA
  graph; this tree only: the baseline's backward copies grad_output to the host, which a
  capture refuses), at 1024 rows host us per forward with the gradient and per loss-only
  call (``host_us_grad``, ``host_us_loss``: calls issued back to back while the GPU is kept
  busy); beside them the same bytes moved
  by ``torch.add(x, y, out=out)`` (``same_bytes_ms`` by do_bench, ``same_bytes_graph_ms``).

    KI_BASELINE_FUSED=old_fused.py PYTHONPATH=src python3 benchmarks/jsd_training_step.py \
        profile step > benchmarks/results/jsd_training_step_h200.json
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
from triton.testing import do_bench, do_bench_cudagraph

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import jsd_triton

V = 128256
ROUNDS = int(os.environ.get("KI_ROUNDS", "3"))


def _load(path: str, name: str) -> Any:
    """A fused.py as a module beside this tree's (its relative imports resolve)."""
    full = f"kernelindex_sdk.reference_kernels.jsd._{name}_fused"
    spec = importlib.util.spec_from_file_location(full, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


def _impls() -> dict[str, Callable[..., torch.Tensor]]:
    """Baseline, this tree, and the variants in ``KI_VARIANTS`` (``name=path,...``)."""
    impls = {"baseline": _load(os.environ["KI_BASELINE_FUSED"], "baseline").jsd_triton}
    impls["new"] = jsd_triton
    for item in filter(None, os.environ.get("KI_VARIANTS", "").split(",")):
        name, path = item.split("=", 1)
        impls[name] = _load(path, name).jsd_triton
    return impls


def _inputs(bt: int, dtype: torch.dtype, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).to(dtype)
    y = torch.randn(bt, V, device="cuda", generator=g).log_softmax(-1).to(dtype)
    return x, y


def _graph(fn: Callable[[], Any]) -> float:
    with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
        return float(do_bench_cudagraph(fn, rep=30, return_mode="median"))


def _step_graph(impl: Callable[..., torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> float:
    """Median ms of replays of one CUDA graph holding forward and backward."""
    stream = torch.cuda.Stream()  # type: ignore[no-untyped-call]
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # type: ignore[no-untyped-call]
        for _ in range(2):
            x.grad = None
            impl(x, y).backward()
    torch.cuda.current_stream().wait_stream(stream)
    x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        impl(x, y).backward()
    graph.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(50)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(50)]
    for start, end in zip(starts, ends, strict=True):
        start.record()
        graph.replay()
        end.record()
    torch.cuda.synchronize()
    x.grad = None
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))


def profile() -> dict[str, Any]:
    """Host copies, synchronizations and GPU idle time per training step, from a profile."""
    out: dict[str, Any] = {}
    impls = _impls()
    for dtype in (torch.float32, torch.bfloat16):
        x, y = _inputs(1024, dtype)
        x.requires_grad_()
        for name in ("baseline", "new"):
            impl = impls[name]
            for _ in range(3):
                x.grad = None
                impl(x, y).backward()
            torch.cuda.synchronize()
            steps = 20
            with torch.profiler.profile(
                activities=[
                    torch.profiler.ProfilerActivity.CPU,
                    torch.profiler.ProfilerActivity.CUDA,
                ]
            ) as prof:
                for _ in range(steps):
                    x.grad = None
                    impl(x, y).backward()
                torch.cuda.synchronize()
            events = prof.events()
            kernels = sorted(
                (e for e in events if e.device_type == torch.autograd.DeviceType.CUDA),
                key=lambda e: e.time_range.start,
            )
            busy = sum(e.time_range.end - e.time_range.start for e in kernels)
            span = kernels[-1].time_range.end - kernels[0].time_range.start
            names = [e.name for e in events]
            key = f"{name}-{str(dtype).removeprefix('torch.')}"
            out[key] = {
                "steps": steps,
                "dtoh_copies_per_step": sum("DtoH" in n or "Device -> Pageable" in n for n in names)
                / steps,
                "syncs_per_step": sum(
                    n in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")
                    for n in names
                )
                / steps,
                "item_calls_per_step": sum(
                    n in ("aten::item", "aten::is_nonzero", "aten::_local_scalar_dense")
                    for n in names
                )
                / steps,
                "gpu_busy_us_per_step": busy / steps,
                "gpu_span_us_per_step": span / steps,
                "gpu_idle_us_per_step": (span - busy) / steps,
                "kernels_per_step": len(kernels) / steps,
            }
            if os.environ.get("OUT"):
                prof.export_chrome_trace(os.path.join(os.environ["OUT"], f"trace-{key}.json"))
            print(key, json.dumps(out[key]), file=sys.stderr, flush=True)
    return out


def _point(
    impls: dict[str, Callable[..., torch.Tensor]],
    flush: timing.ReadFlush,
    dtype: torch.dtype,
    bt: int,
) -> dict[str, Any]:
    x, y = _inputs(bt, dtype)
    xg = x.clone().requires_grad_()
    add_out = torch.empty_like(x)
    row: dict[str, Any] = {"same_bytes_ms": [], "same_bytes_graph_ms": []}

    def add() -> torch.Tensor:
        return torch.add(x, y, out=add_out)

    for _ in range(ROUNDS):
        row["same_bytes_ms"].append(float(do_bench(add, return_mode="median")))
        row["same_bytes_graph_ms"].append(_graph(add))
        for name, impl in impls.items():
            got = row.setdefault(name, {})

            def train(impl: Callable[..., torch.Tensor] = impl) -> None:
                impl(xg, y).backward()

            def forward_grad(impl: Callable[..., torch.Tensor] = impl) -> torch.Tensor:
                return impl(xg, y)

            def loss(impl: Callable[..., torch.Tensor] = impl) -> torch.Tensor:
                return impl(x, y)

            got.setdefault("step_ms", []).append(
                float(do_bench(train, grad_to_none=[xg], return_mode="median"))
            )
            events = timing.time_cuda_events(train, [xg], 100, flush=flush)
            got.setdefault("step_harness_ms", []).append(statistics.median(events.samples_ms))
            got.setdefault("forward_grad_graph_ms", []).append(_graph(forward_grad))
            got.setdefault("loss_graph_ms", []).append(_graph(loss))
            if name != "baseline":
                # Not tried for the baseline: its backward copies grad_output to the host,
                # which a capture refuses (and a refused capture can leave the stream
                # unusable for the rest of the run).
                got.setdefault("step_graph_ms", []).append(_step_graph(impl, xg, y))
            if bt == 1024:  # host time does not depend on the shape
                grad_host, loss_host = host_us(forward_grad, loss, calls=100, batches=5)
                got.setdefault("host_us_grad", []).append(statistics.median(grad_host))
                got.setdefault("host_us_loss", []).append(statistics.median(loss_host))
            xg.grad = None
    return row


def step() -> dict[str, Any]:
    """Step, forward and loss times of baseline and this tree beside the same bytes."""
    impls = _impls()
    flush = timing.ReadFlush(torch.device("cuda"))
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.bfloat16):
        for bt in (1024, 2048, 4096, 8192):
            key = f"{str(dtype).removeprefix('torch.')}-{bt}"
            out[key] = _point(impls, flush, dtype, bt)
            print(key, json.dumps(_medians(out[key])), file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
    return out


def _medians(row: dict[str, Any]) -> dict[str, Any]:
    """Each list's median (strings, e.g. a refused capture, kept as they are)."""
    result: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            result[key] = _medians(value)
        elif value and all(isinstance(v, float) for v in value):
            result[key] = round(statistics.median(value), 4)
        else:
            result[key] = value[0] if value else None
    return result


def host() -> dict[str, Any]:
    """Host us per call of this tree's launch path and its parts, at 1024 x 128256: five
    batches of 100 calls issued while the GPU is kept busy, three rounds, beside a torch
    elementwise launch timed in the same batches."""
    from kernelindex_sdk.reference_kernels.jsd import fused

    out: dict[str, list[float]] = {}
    small = torch.zeros((), device="cuda")
    for dtype in (torch.float32, torch.bfloat16):
        x, y = _inputs(1024, dtype)
        xg = x.clone().requires_grad_()
        loss = fused.jsd_triton(xg, y)
        dx = torch.empty_like(x)
        ones = torch.ones((), device="cuda", dtype=dtype)
        name = str(dtype).removeprefix("torch.")

        def step(xg: torch.Tensor = xg, y: torch.Tensor = y) -> None:
            xg.grad = None
            fused.jsd_triton(xg, y).backward()

        parts: dict[str, Callable[[], Any]] = {
            "torch_add_": lambda: small.add_(1.0),
            "loss_jsd_triton": lambda x=x, y=y: fused.jsd_triton(x, y),
            "forward_grad_jsd_triton": lambda xg=xg, y=y: fused.jsd_triton(xg, y),
            "step_forward_backward": step,
            "launch_loss_no_autograd": lambda x=x, y=y: fused._launch(x, y, 0.5, None, -100, False),
            "scale_kernel_launch": lambda dx=dx, ones=ones: fused._scale(dx, ones),
            "current_stream": lambda: (
                torch.cuda.current_stream(torch.device("cuda", 0)).cuda_stream
            ),
            "new_empty_scalar": lambda x=x: x.new_empty(()),
        }
        del loss
        for _ in range(3):
            per_fn = host_us(*parts.values(), calls=100, batches=5)
            for key, values in zip(parts, per_fn, strict=True):
                out.setdefault(f"{name}-{key}", []).append(statistics.median(values))
        xg.grad = None
    print(json.dumps(out), file=sys.stderr, flush=True)
    return out


def main() -> int:
    which = sys.argv[1:] or ["profile", "step"]
    out: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "baseline": os.environ.get("KI_BASELINE_FUSED"),
    }
    parts = {"profile": profile, "step": step, "host": host}
    for part in which:
        out[part] = parts[part]()
        if part == "step":
            out["step_medians"] = {k: _medians(v) for k, v in out[part].items()}
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
