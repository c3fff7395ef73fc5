"""The harness's timers on the CPU, with a fake CUDA clock (test_gpu.py runs them for real)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk.digest import protocol_digest
from kernelindex_sdk.reference_kernels import harness, timing

MiB = 2**20


class FakeClock:
    """Stands in for torch.cuda's events: each recorded event reads a clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0
        self.log: list[str] = []

    def event(self, enable_timing: bool = False) -> Any:
        clock = self

        class Event:
            at = 0.0

            def record(self) -> None:
                self.at = clock.now
                clock.log.append("record")

            def elapsed_time(self, end: Any) -> float:
                return float(end.at - self.at)

        return Event()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(torch.cuda, "Event", fake.event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    return fake


def test_events_flush_before_every_timed_call_and_reset_grads(clock: FakeClock) -> None:
    x = torch.zeros(3, requires_grad=True)
    calls: list[bool] = []

    def fn() -> None:
        calls.append(x.grad is None)
        x.grad = torch.ones(3)
        clock.now += 2.0  # each call takes 2 ms
        clock.log.append("call")

    def flush() -> None:
        clock.log.append("flush")

    measured = timing.time_cuda_events(fn, [x], min_samples=150, flush=flush)
    # 2 ms a call: 100 ms of calls would be 50; the floor asks for more.
    assert len(measured.samples_ms) == 150
    assert set(measured.samples_ms) == {2.0}
    timed = clock.log[-4 * 150 :]
    assert timed == ["flush", "record", "call", "record"] * 150
    # Every timed call started from x.grad None (the warm-up calls did not).
    assert calls[-150:] == [True] * 150


def test_events_take_about_100_ms_of_calls_when_the_floor_asks_for_fewer(
    clock: FakeClock,
) -> None:
    def fn() -> None:
        clock.now += 0.5

    measured = timing.time_cuda_events(fn, [], min_samples=10, flush=lambda: None)
    assert len(measured.samples_ms) == 200


def test_the_protocol_names_a_read_flush_four_times_the_l2(monkeypatch: pytest.MonkeyPatch) -> None:
    class Props:
        L2_cache_size = 100 * MiB

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Props())
    spec = harness.protocol_spec(torch.device("cuda", 0))
    flush = spec["measurement"]["l2Flush"]
    assert flush == {"policy": "buffer_read", "flushBytes": 400 * MiB, "l2Bytes": 100 * MiB}
    Props.L2_cache_size = 50 * MiB
    small = harness.protocol_spec(torch.device("cuda", 0))["measurement"]["l2Flush"]
    assert small["flushBytes"] == 256 * MiB  # never below Triton's own 256 MiB
    protocol = {
        "apiVersion": "kernelindex.dev/v1alpha1",
        "kind": "BenchmarkProtocol",
        "metadata": {"name": "harness-events"},
        "spec": spec,
    }
    ki.check(protocol)
    graph = harness.protocol_spec(torch.device("cuda", 0), timer="cuda-graph")
    assert protocol_digest(spec) != protocol_digest(graph)


def test_a_flush_buffer_that_cannot_be_allocated_is_the_harness_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_memory(device: torch.device) -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 256.00 MiB")

    monkeypatch.setattr(harness, "ReadFlush", no_memory)
    attempt = harness._attempt(
        fn=lambda: None,
        output=lambda: torch.zeros(2),
        reference=None,
        reference_name="none",
        checks=[],
        grad_to_none=[],
        device=torch.device("cuda", 0),
        min_samples=10,
        timer="cuda-events",
    )
    measured, failure = attempt.measured, attempt.failure
    assert measured is None
    assert failure is not None
    assert failure["reason"] == "error"  # not the kernel's out_of_memory
    assert failure["message"].startswith("harness could not allocate its L2 flush buffer")


def test_the_read_flush_reads_every_byte_of_its_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    class Props:
        L2_cache_size = 80 * MiB  # four times that, 320 MiB, is above the 256 MiB floor

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Props())
    flush = timing.ReadFlush(torch.device("cpu"))
    flush()
    # A sum of ones: the count of 4-byte words read, so nothing was skipped.
    assert int(flush._total) * 4 == 320 * MiB == timing.flush_bytes(torch.device("cpu"))
