"""The GPU's state on a real GPU: the sampler reads NVML, the harness records it.

Run on a machine with CUDA and nvidia-ml-py: ``python3 -m pytest -m gpu tests/reference_kernels``.
Nothing here changes a setting of the GPU; it only reads.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk.conditions import gpu_settings, sample_gpu
from kernelindex_sdk.reference_kernels import harness
from kernelindex_sdk.reference_kernels.device import nvml_device

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
pynvml = pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")

SRC = Path(__file__).resolve().parents[2] / "src"
REASON = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def _busy(ms: float) -> None:
    """Keep the GPU working for about ``ms`` milliseconds."""
    a = torch.randn(4096, 4096, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    a @ a
    end.record()
    torch.cuda.synchronize()
    for _ in range(max(1, int(ms / max(start.elapsed_time(end), 1e-3)))):
        a @ a
    torch.cuda.synchronize()


def test_the_sampler_reads_every_field_of_a_working_gpu() -> None:
    gpu = nvml_device(torch.device("cuda", 0))
    assert isinstance(gpu, str)
    _busy(50)
    with sample_gpu(gpu) as state:
        _busy(300)
    assert state.unavailable is None, state.unavailable
    assert state.result is not None
    got: dict[str, Any] = state.result["gpu"]
    assert got["samples"] >= 3
    for name in ("smClockMhz", "memoryClockMhz", "powerW", "temperatureC"):
        low, middle, high = got[name]["min"], got[name]["median"], got[name]["max"]
        assert 0 < low <= middle <= high, name
    assert 0 < got["temperatureC"]["max"] < 150
    assert got["maxSmClockMhz"] > 0
    assert got["powerLimitW"] > 0
    assert all(REASON.match(r) for r in got["throttleReasons"])
    assert "GpuIdle" not in got["throttleReasons"]


def test_the_nvml_device_is_the_cuda_device() -> None:
    gpu = nvml_device(torch.device("cuda", 0))
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByUUID(gpu)
    uuid = pynvml.nvmlDeviceGetUUID(handle)
    assert (uuid.decode() if isinstance(uuid, bytes) else uuid) == gpu


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_a_pinned_process_samples_its_own_gpu() -> None:
    """Under CUDA_VISIBLE_DEVICES a worker's cuda:0 is the GPU it was pinned to, which NVML
    (numbering every GPU of the machine) knows by its UUID, not as its index 0."""
    last = torch.cuda.device_count() - 1
    code = (
        "import torch\n"
        "from kernelindex_sdk.reference_kernels.device import nvml_device\n"
        "from kernelindex_sdk.conditions import sample_gpu\n"
        "gpu = nvml_device(torch.device('cuda', 0))\n"
        "with sample_gpu(gpu) as state:\n"
        "    torch.ones(1, device='cuda'); torch.cuda.synchronize()\n"
        "print(gpu, state.result is not None)\n"
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(last), "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.split() == [str(nvml_device(torch.device("cuda", last))), "True"], (
        done.stderr
    )


def test_the_harness_records_the_state_and_keeps_its_digests() -> None:
    x = torch.randn(4096, 4096, device="cuda")
    kwargs: dict[str, Any] = {
        "reference": lambda: torch.softmax(x.double(), dim=-1).float(),
        "workload": {"operation": "softmax", "pass": "forward", "parameters": {"n": 4096}},
        "implementation": {"provider": "torch"},
        "atol": 1e-6,
        "rtol": 1e-4,
    }
    with_state = harness.bench(lambda: torch.softmax(x, dim=-1), **kwargs)
    without = harness.bench(lambda: torch.softmax(x, dim=-1), gpu_state=False, **kwargs)
    record = ki.dump(with_state)
    conditions = record["run"]["spec"]["conditions"]
    assert conditions["gpu"]["samples"] >= 2
    assert ki.validate(record, verify_digests=True) == []
    assert without.run.spec.conditions is None
    for key in ("protocol", "environment", "workload", "implementation"):
        assert getattr(with_state.run.spec, f"{key}_digest") == getattr(
            without.run.spec, f"{key}_digest"
        )
    graph = ki.dump(harness.bench(lambda: torch.softmax(x, dim=-1), timer="cuda-graph", **kwargs))
    assert graph["run"]["spec"]["conditions"]["gpu"]["samples"] >= 2


def test_settings_are_none_or_only_the_known_fields() -> None:
    settings = gpu_settings(nvml_device(torch.device("cuda", 0)) or 0)
    known = {"applicationsSmClockMhz", "applicationsMemoryClockMhz", "powerLimitW"}
    assert settings is None or (settings and set(settings) <= known)
