"""What the benchmarks share: writing results, the machine's facts, and the timing loops.

- :func:`write_results`: the ``--out`` file (committed under benchmarks/results/), else
  standard output, as indented JSON with a final newline.
- :func:`machine_facts`: the host a figure was measured on (architecture, Python, CPUs and
  the load when asked); :func:`gpu_facts` adds the GPU and the torch and Triton versions.
- :func:`load_module`: a Python file (an earlier ``fused.py``, say) loaded as a module
  beside this tree's, for before/after runs in one process.
- :func:`instructions`: one process's instructions under valgrind (a count the load does
  not move); :func:`head_lines`: a file's first lines, for inputs of two sizes.
- GPU timing loops: :func:`host_us` (host time to issue a call, the GPU kept busy),
  :func:`graph_ms` (GPU time alone, under a CUDA graph).

torch is imported by the GPU helpers only, so that CPU benchmarks load none of it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

#: Host batches: calls per batch and batches per measure (medians over the batches).
HOST_CALLS = 100
HOST_BATCHES = 15

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def write_results(results: dict[str, Any], out: Path | str | None) -> None:
    """Write ``results`` to ``out`` (UTF-8), or to standard output when it is None."""
    text = json.dumps(results, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        Path(out).write_text(text, encoding="utf-8")


def instructions(args: list[str], env: dict[str, str]) -> int:
    """Instructions (valgrind's I refs, cachegrind without its cache simulation) of one
    process running our interpreter with ``args`` in ``env``: a count the machine's load
    does not move."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    # Our own interpreter on our own code and files: S603 does not apply.
    done = subprocess.run(  # noqa: S603
        [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = _REFS.search(done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind: {done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def head_lines(path: Path, count: int, out: Path) -> Path:
    """The first ``count`` lines of ``path`` written to ``out``; ``out``."""
    with path.open("rb") as lines, out.open("wb") as kept:
        for number, line in enumerate(lines):
            if number == count:
                break
            kept.write(line)
    return out


def machine_facts(*, load: bool = False) -> dict[str, Any]:
    """The host's architecture, Python version and CPU count; with ``load``, the load average
    over the last minute too (the shared machine's neighbours move CPU timings)."""
    facts: dict[str, Any] = {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    if load:
        facts["load_average_1min"] = round(os.getloadavg()[0], 2)
    return facts


def gpu_facts() -> dict[str, Any]:
    """:func:`machine_facts` with the current GPU's name and the torch and Triton versions."""
    import torch
    import triton

    return {
        **machine_facts(),
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        "torch": str(torch.__version__),
        "triton": str(triton.__version__),
    }


def load_module(path: str | Path, name: str, package: str | None = None) -> ModuleType:
    """The Python file at ``path`` as module ``name``, beside the modules of this tree.

    Args:
        path: The file, e.g. an earlier ``fused.py`` (``git show COMMIT:PATH > FILE``).
        name: Its module name: inside ``package`` when given, so that the file's relative
            imports resolve against this tree's package.
        package: The package it is loaded into, e.g.
            ``kernelindex_sdk.reference_kernels.jsd``.

    Raises:
        SystemExit: when the file cannot be loaded.
    """
    full = f"{package}.{name}" if package else name
    spec = importlib.util.spec_from_file_location(full, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass
class HostTimes:
    """What :func:`host_us` measured.

    Attributes:
        us: Per function, its host us per call in each batch.
        outlasted: Batches that ran past the GPU's sleep: a call in them may have waited
            for the GPU (a host sync), and their figures may include GPU time.
    """

    us: list[list[float]]
    outlasted: int


def host_us(
    *fns: Callable[[], Any],
    calls: int = HOST_CALLS,
    batches: int = HOST_BATCHES,
    sleep_cycles: int = int(200e6),
) -> HostTimes:
    """Host microseconds to issue one call of each of ``fns``, in each of ``batches``.

    Each batch first queues a GPU sleep of ``sleep_cycles`` clock cycles (about 0.1 s on
    an H100 or H200), then times ``calls`` calls of each function back to back: while the
    sleep runs, no call can wait for the GPU unless it synchronizes with it, and a batch
    that ends before the sleep did proves that none did. The functions of one batch see
    the host at the same speed, which drifts between batches and runs.
    """
    import torch

    for _ in range(3):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    per_fn: list[list[float]] = [[] for _ in fns]
    outlasted = 0
    for _ in range(batches):
        torch.cuda._sleep(sleep_cycles)
        asleep = torch.cuda.Event()
        asleep.record()
        for fn, out in zip(fns, per_fn, strict=True):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - start) / calls * 1e6)
        outlasted += bool(asleep.query())
        torch.cuda.synchronize()
    return HostTimes(us=per_fn, outlasted=outlasted)


def graph_ms(fn: Callable[[], Any], rep: int = 20) -> float:
    """Median ms of ``fn`` under ``triton.testing.do_bench_cudagraph`` (GPU time alone), on
    a side stream (a capture needs one other than the legacy default stream)."""
    import torch
    from triton.testing import do_bench_cudagraph

    with torch.cuda.stream(torch.cuda.Stream()):
        return float(do_bench_cudagraph(fn, rep=rep, return_mode="median"))
