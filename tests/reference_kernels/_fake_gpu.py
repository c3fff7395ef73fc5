"""A fake CUDA device for the harness's GPU path on the CPU: events on a clock the calls move,
a no-op synchronize and flush, and device properties with a UUID."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _fake_nvml import UUID

from kernelindex_sdk.reference_kernels import harness


class FakeGpu:
    """torch.cuda's events, synchronize and device properties, on a clock the calls move."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, uuid: str | None = UUID[4:]) -> None:
        self.now = 0.0
        self.log: list[str] = []
        gpu = self

        class Event:
            at = 0.0

            def __init__(self, enable_timing: bool = False) -> None:
                pass

            def record(self) -> None:
                self.at = gpu.now

            def elapsed_time(self, end: Any) -> float:
                return float(end.at - self.at)

        class Props:
            name = "NVIDIA H100 80GB HBM3"
            major, minor = 9, 0
            total_memory = 85017493504
            multi_processor_count = 132
            L2_cache_size = 50 * 2**20

        if uuid is not None:
            Props.uuid = uuid  # type: ignore[attr-defined]
        monkeypatch.setattr(torch.cuda, "Event", Event)
        monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: gpu.log.append("sync"))
        monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Props())
        monkeypatch.setattr(harness, "ReadFlush", lambda device: lambda: None)

    def call(self) -> torch.Tensor:
        self.now += 0.5
        self.log.append("call")
        return torch.ones(3)
