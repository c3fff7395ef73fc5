"""Host time of Triton's public launch of the fused JSD kernel, on a machine without a GPU.

Triton's driver is replaced by one whose launcher does nothing (``triton.runtime.driver
.set_active``), and the kernel is compiled for sm_90 as on an H200: what is timed is the
host's side of ``jsd_fwd_kernel[grid](...)`` (argument binding, specialization, the cache
lookup, the check of every module-level constexpr the kernel reads), not the GPU's. Each
``fused.py`` given is loaded as its own module and launched with the arguments ``_launch``
passes for a 1024 x 128256 float32 training step; medians of seven rounds of 2000 launches,
the files interleaved. A profile of the launch (``--profile``) says where the time goes.

    PYTHONPATH=src python benchmarks/jsd_launch_replay.py before=OLD.py after=NEW.py \\
        > benchmarks/results/jsd_launch_replay_cpu.json
"""

from __future__ import annotations

import cProfile
import importlib.util
import io
import json
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.compiler.compiler as triton_compiler
from triton.backends.compiler import GPUTarget
from triton.runtime import driver

ROUNDS = 7
CALLS = 2000


class _Utils:
    def load_binary(self, name: str, kernel: bytes, shared: int, device: int) -> tuple[int, ...]:
        return (1, 1, 64, 0, 1024)

    def get_device_properties(self, device: int) -> dict[str, int]:
        return {"max_shared_mem": 232448, "multiprocessor_count": 132}


class _Driver:
    """Triton's driver interface, with an H200's target and a launcher that does nothing."""

    def __init__(self) -> None:
        self.utils = _Utils()
        self.launcher_cls = lambda src, metadata: lambda *args: None

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", 90, 32)

    def is_active(self) -> bool:
        return True

    def get_active_torch_device(self) -> torch.device:
        return torch.device("cpu")


def _load(name: str, path: str) -> Any:
    full = f"kernelindex_sdk.reference_kernels.jsd._replay_{name}"
    spec = importlib.util.spec_from_file_location(full, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


def _launcher(module: Any) -> Callable[[], Any]:
    """One launch as ``_launch`` makes it: flat float32 1024 x 128256 with the gradient."""
    x = torch.empty(1024 * 128256)
    dx, loss = torch.empty_like(x), torch.empty(())
    partials, ticket = torch.empty(1056), torch.zeros((), dtype=torch.int32)
    args = [x, x, x, dx, partials, ticket, loss, 1, x.numel(), 0, 0, 0]
    args += [0.5, -1.0, -1.0, 0.6931471805599453, 1 / 1024, -100]
    constexprs = {
        "BETA_MODE": 2,
        "HAS_LABELS": False,
        "COMPUTE_GRAD": True,
        "FORM": module.PAIR,
        "OPS": module.PTX,
        "BLOCK_V": 1024,
        "BLOCK_P": 2048,
        "BLOCK_L": 1024,
    }
    names = module.jsd_fwd_kernel.arg_names
    # The flags this tree added, where the file has them.
    constexprs.update({k: v for k, v in (("FLAT", True), ("STAGES", 2)) if k in names})

    def launch() -> Any:
        return module.jsd_fwd_kernel[(1056,)](*args, **constexprs, num_warps=4)

    return launch


def main() -> int:
    pairs = [a.split("=", 1) for a in sys.argv[1:] if not a.startswith("--")]
    driver.set_active(_Driver())  # type: ignore[arg-type]
    triton_compiler.max_shared_mem = lambda device: 232448
    launches = {name: _launcher(_load(name, path)) for name, path in pairs}
    for launch in launches.values():
        for _ in range(200):
            launch()
    rounds: dict[str, list[float]] = {name: [] for name in launches}
    for _ in range(ROUNDS):
        for name, launch in launches.items():
            start = time.perf_counter()
            for _ in range(CALLS):
                launch()
            rounds[name].append((time.perf_counter() - start) / CALLS * 1e6)
    out: dict[str, Any] = {
        "triton": triton.__version__,
        "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "us_per_launch": {name: round(statistics.median(v), 2) for name, v in rounds.items()},
        "us_per_launch_rounds": rounds,
    }
    if "--profile" in sys.argv:
        for name, launch in launches.items():
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(CALLS):
                launch()
            profile.disable()
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(8)
            out[f"profile_{name}"] = text.getvalue().splitlines()[:24]
    json.dump(out, sys.stdout, indent=1)
    print(file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
