"""benchmarks/gpu_state_overhead.py on the CPU, a fake GPU and a fake NVML: what it compares.

The figures come from the device; here we check that on and off time the same call the same
number of times, alternating which goes first, and that only "on" loops are sampled.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from _fake_gpu import FakeGpu
from _fake_nvml import SW_POWER_CAP, UUID, FakeNvml, install

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import sweep

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(
        "gpu_state_overhead", BENCHMARKS / "gpu_state_overhead.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_on_and_off_alternate_over_the_same_call(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpu = FakeGpu(monkeypatch)
    install(monkeypatch, FakeNvml(reasons=[SW_POWER_CAP]))
    order: list[bool] = []
    real = timing.time_cuda_events

    def events(call: Any, grads: Any, n: int, *, flush: Any, around: Any) -> timing.Measured:
        order.append(around is not None)
        # Each call takes 1 ms on the fake clock; sampling costs it 0.4% here.
        cost = 1.0 if around is None else 1.004

        def timed() -> Any:
            gpu.now += cost
            return call()

        return real(timed, grads, n, flush=flush, around=around)

    monkeypatch.setattr(script.timing, "time_cuda_events", events)
    case = sweep.JSDCase(tokens=4, vocab=64, dtype="fp32", input_grad=True)
    point = script._point(
        "torch", case, "cuda-events", 3, lambda: None, UUID, 0.01, torch.device("cpu")
    )
    # A warm-up loop off, then rounds that alternate which goes first.
    assert order == [False, True, False, False, True, True, False]
    assert len(point["on_ns"]) == len(point["off_ns"]) == 3
    assert point["ratio"] == pytest.approx(1.004)
    assert point["ratio"] == sorted(point["on_ns"])[1] / sorted(point["off_ns"])[1]
    assert point["readings_per_loop"]
    assert min(point["readings_per_loop"]) >= 2
    assert point["throttle_reasons"] == ["SwPowerCap"]
    assert point["degraded"] == ["throttled (SwPowerCap)"] * 3
    summary = script._summary([point])["cuda-events"]
    assert summary["points"] == 1
    assert summary["max_ratio"] == point["ratio"]
