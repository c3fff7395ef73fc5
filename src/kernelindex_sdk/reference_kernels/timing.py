"""The harness's timers: CUDA events around each call, CUDA-graph replays, a wall clock.

The events timer clears L2 before each call by *reading* a buffer several times the L2's
size. ``triton.testing.do_bench`` clears it by *writing* its buffer instead, which leaves L2
full of dirty lines; the next kernel pays for writing them back to memory. On an H200 a
plain read stream of 0.5 to 8 GB took 12 to 51 us longer after the write than after a
read, and 1 to 2 us for inputs that fit in L2 (``benchmarks/jsd_pipeline_probe.py``,
results in ``benchmarks/results/``): a cost of the timer, not of the kernel. After a read
the lines are clean and simply dropped.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final

import attrs
import torch

__all__ = [
    "CPU_WARMUP_CALLS",
    "WARMUP_MS",
    "Measured",
    "ReadFlush",
    "flush_bytes",
    "l2_bytes",
    "time_cuda_events",
    "time_cuda_graph",
    "time_wall_clock",
]

WARMUP_MS: Final = 25.0
CPU_WARMUP_CALLS: Final = 3
#: The flush buffer is at least this large (Triton's own is 256 MiB) and four times the L2.
_MIN_FLUSH_BYTES: Final = 256 * 2**20
_L2_MULTIPLE: Final = 4
# The events timer runs for about this long once warm, or longer to reach the sample floor.
_REP_MS: Final = 100.0
# One CUDA-graph sample is the mean of the calls unrolled in one graph replay of this long.
_GRAPH_REP_MS: Final = 5.0


@attrs.frozen
class Measured:
    """Timing samples in milliseconds, in the order they were taken."""

    samples_ms: Sequence[float]

    def quantile_ns(self, q: float) -> int:
        """The q-quantile in integer ns, interpolated linearly (numpy's default)."""
        ordered = sorted(self.samples_ms)
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        value = ordered[low] + (ordered[high] - ordered[low]) * (position - low)
        return round(value * 1e6)


def l2_bytes(device: torch.device) -> int:
    """The device's L2 size as the CUDA runtime reports it (0 when it does not)."""
    return int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0))


def flush_bytes(device: torch.device) -> int:
    """Size of the buffer :class:`ReadFlush` reads on ``device``: 4x L2, at least 256 MiB."""
    return max(_MIN_FLUSH_BYTES, _L2_MULTIPLE * l2_bytes(device))


class ReadFlush:
    """Clears a GPU's L2 by reading a buffer four times its size: the lines it leaves are clean."""

    def __init__(self, device: torch.device) -> None:
        words = flush_bytes(device) // 4
        self._buffer = torch.ones(words, dtype=torch.int32, device=device)
        self._total = torch.empty((), dtype=torch.int64, device=device)

    def __call__(self) -> None:
        # A plain reduction: ordinary loads, which allocate in L2 and evict what was there.
        torch.sum(self._buffer, dim=0, out=self._total)


def _event() -> torch.cuda.Event:
    return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]


def time_cuda_events(
    fn: Callable[[], Any],
    grad_to_none: Sequence[torch.Tensor],
    min_samples: int,
    *,
    flush: Callable[[], Any] | None = None,
    around: AbstractContextManager[Any] | None = None,
) -> Measured:
    """CUDA events around each call of ``fn``, L2 cleared before each, grads reset.

    As ``triton.testing.do_bench`` (warm-up, then about 100 ms of calls), with a read flush
    instead of its write flush, and never fewer than ``min_samples`` samples.

    Args:
        fn: The call to time, on the current CUDA stream.
        grad_to_none: Tensors whose ``.grad`` is set to None before each call.
        min_samples: The fewest samples to take.
        flush: What clears L2 before each call; a :class:`ReadFlush` on the current device
            when not given.
        around: Entered after the warm-up, just before the first timed call, and left once
            the GPU finished the last (after the synchronize): the GPU-state sampler
            (:func:`kernelindex_sdk.conditions.sample_gpu`).
    """
    flush = (
        flush if flush is not None else ReadFlush(torch.device("cuda", torch.cuda.current_device()))
    )
    fn()
    torch.cuda.synchronize()
    probe = [_event() for _ in range(2)]
    probe[0].record()
    for _ in range(5):
        flush()
        fn()
    probe[1].record()
    torch.cuda.synchronize()
    estimate_ms = max(probe[0].elapsed_time(probe[1]) / 5, 1e-3)
    for _ in range(max(1, int(WARMUP_MS / estimate_ms))):
        fn()
    count = max(min_samples, int(_REP_MS / estimate_ms))
    starts = [_event() for _ in range(count)]
    ends = [_event() for _ in range(count)]
    with around if around is not None else contextlib.nullcontext():
        for start, end in zip(starts, ends, strict=True):
            for tensor in grad_to_none:
                tensor.grad = None
            flush()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
    return Measured(samples_ms=[s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)])


def time_cuda_graph(
    fn: Callable[[], Any],
    grad_to_none: Sequence[torch.Tensor],
    min_samples: int,
    *,
    around: AbstractContextManager[Any] | None = None,
) -> Measured:
    """``triton.testing.do_bench_cudagraph`` until at least ``min_samples`` samples.

    Args:
        fn: The call to time.
        grad_to_none: Tensors whose ``.grad`` is set to None before each call.
        min_samples: The fewest samples to take.
        around: Entered before the first graph is captured and left after the last replay
            was timed (``do_bench_cudagraph`` synchronizes before it returns): the
            GPU-state sampler.
    """
    from triton.testing import do_bench_cudagraph

    samples: list[float] = []
    with around if around is not None else contextlib.nullcontext():
        # Each call captures a fresh graph and gives a handful of samples (ten in Triton 3.x).
        while len(samples) < min_samples:
            # Graph capture needs a stream other than the legacy default one.
            with torch.cuda.stream(torch.cuda.Stream()):  # type: ignore[no-untyped-call]
                got = do_bench_cudagraph(
                    fn, rep=_GRAPH_REP_MS, grad_to_none=list(grad_to_none), return_mode="all"
                )
            samples += list(got) if isinstance(got, (list, tuple)) else [float(got)]
    return Measured(samples_ms=samples)


def time_wall_clock(
    fn: Callable[[], Any],
    min_samples: int,
    grad_to_none: Sequence[torch.Tensor] = (),
    *,
    around: AbstractContextManager[Any] | None = None,
) -> Measured:
    """``time.perf_counter_ns`` around each call, after a few warm-up calls.

    Args:
        fn: The call to time.
        min_samples: How many samples to take.
        grad_to_none: Tensors whose ``.grad`` is set to None before each call (outside the
            timed span), as the GPU timers do: a step that ends in ``backward()`` then
            writes a fresh gradient each time instead of adding to the last one.
        around: Entered after the warm-up, just before the first timed call, and left after
            the last: the CPU-state sampler (:func:`kernelindex_sdk.conditions.sample_cpu`).
    """
    for _ in range(CPU_WARMUP_CALLS):
        for tensor in grad_to_none:
            tensor.grad = None
        fn()
    samples = []
    with around if around is not None else contextlib.nullcontext():
        for _ in range(min_samples):
            for tensor in grad_to_none:
                tensor.grad = None
            start = time.perf_counter_ns()
            fn()
            samples.append((time.perf_counter_ns() - start) / 1e6)
    return Measured(samples_ms=samples)
