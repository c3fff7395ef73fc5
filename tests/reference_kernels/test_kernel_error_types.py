"""The kernels' and the harness's errors that reach a caller are KernelIndexErrors, still
the ValueError or RuntimeError they were; the harness's own failures stay in the record."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk.errors import ArgumentError, KernelIndexError, StateError
from kernelindex_sdk.reference_kernels import device, harness, workers
from kernelindex_sdk.reference_kernels.jsd import reference, sweep

CPU = torch.device("cpu")
CASE = sweep.JSDCase(tokens=4, vocab=256, dtype="fp32")


def _xy() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (
        torch.randn(3, 64, generator=g).log_softmax(-1),
        torch.randn(3, 64, generator=g).log_softmax(-1),
    )


X, Y = _xy()


def _bench_with_timer(timer: str) -> Any:
    return harness.bench(
        lambda: reference.jsd_torch(X, Y),
        workload=CASE.workload(),
        implementation={"provider": "test"},
        device=CPU,
        timer=timer,
    )


def _no_devices() -> Any:
    running = workers.run_on_devices(
        sweep.work, [("torch", CASE)], [], failed=lambda *_: None, cost=sweep.point_cost
    )
    return next(running)  # a generator: the check runs at the first next()


TIMER = "timer: unknown timer 'stopwatch'; expected one of cuda-events, cuda-graph"
CASES: list[tuple[str, Callable[[], Any], str, str]] = [
    ("protocol-spec-timer", lambda: harness.protocol_spec(CPU, timer="stopwatch"), "timer", TIMER),
    ("bench-timer", lambda: _bench_with_timer("stopwatch"), "timer", TIMER),
    # run_case records a point's failures, but a timer no record can name is raised.
    (
        "run-case-timer",
        lambda: sweep.run_case("torch", CASE, CPU, timer="stopwatch"),
        "timer",
        TIMER,
    ),
    ("run-on-devices", _no_devices, "devices", "devices: expected at least one device"),
    (
        "jsd-input-ndim",
        lambda: reference.jsd_torch(X[0], Y[0]),
        "input",
        "input: must be 2-D (BT, V), got shape (64,)",
    ),
    (
        "jsd-input-empty",
        lambda: reference.jsd_torch(X[:0], Y[:0]),
        "input",
        "input: must not be empty, got shape (0, 64)",
    ),
    (
        "jsd-target-shape",
        lambda: reference.jsd_torch(X, Y[:, :-1]),
        "target",
        "target: shape (3, 63) != input shape (3, 64)",
    ),
    (
        "jsd-target-dtype",
        lambda: reference.jsd_torch(X, Y.double()),
        "target",
        "target: dtype torch.float64 != input dtype torch.float32",
    ),
    (
        "jsd-input-dtype",
        lambda: reference.jsd_torch(X.int(), Y.int()),
        "input",
        "input: dtype torch.int32 is not supported; use float32, bfloat16 or float16",
    ),
    (
        "jsd-target-device",
        lambda: reference.check_jsd_inputs(X, Y.to("meta"), 0.5, None),
        "target",
        "target: on meta, input on cpu",
    ),
    (
        "jsd-beta",
        lambda: reference.jsd_torch(X, Y, beta=1.5),
        "beta",
        "beta: must be in [0, 1], got 1.5",
    ),
    (
        "jsd-beta-nan",
        lambda: reference.jsd_torch(X, Y, beta=float("nan")),
        "beta",
        "beta: must be in [0, 1], got nan",
    ),
    (
        "jsd-labels-shape",
        lambda: reference.jsd_torch(X, Y, labels=torch.zeros(4, dtype=torch.long)),
        "labels",
        "labels: must have shape (3,), got (4,)",
    ),
    (
        "jsd-labels-dtype",
        lambda: reference.jsd_torch(X, Y, labels=torch.zeros(3)),
        "labels",
        "labels: must be integers, got torch.float32",
    ),
    (
        "jsd-labels-device",
        lambda: reference.jsd_torch(X, Y, labels=torch.zeros(3, dtype=torch.long, device="meta")),
        "labels",
        "labels: on meta, input on cpu",
    ),
]


SIZES = "an integer in [1, 2^53 - 1]"
CASES += [
    (f"jsd-case-{name}", lambda fields=fields: sweep.JSDCase(**fields), argument, message)
    for name, fields, argument, message in [
        (
            "dtype",
            {"tokens": 4, "vocab": 8, "dtype": "fp64"},
            "dtype",
            "dtype: expected one of fp32, bf16, fp16, got 'fp64'",
        ),
        (
            "tokens-0",
            {"tokens": 0, "vocab": 8, "dtype": "fp32"},
            "tokens",
            f"tokens: expected {SIZES}, got 0",
        ),
        (
            "tokens-float",
            {"tokens": 4.0, "vocab": 8, "dtype": "fp32"},
            "tokens",
            f"tokens: expected {SIZES}, got 4.0",
        ),
        (
            "vocab-huge",
            {"tokens": 4, "vocab": 2**53, "dtype": "fp32"},
            "vocab",
            f"vocab: expected {SIZES}, got {2**53}",
        ),
        (
            "beta-nan",
            {"tokens": 4, "vocab": 8, "dtype": "fp32", "beta": float("nan")},
            "beta",
            "beta: expected a number in [0, 1], got nan",
        ),
        (
            "beta-2",
            {"tokens": 4, "vocab": 8, "dtype": "fp32", "beta": 2},
            "beta",
            "beta: expected a number in [0, 1], got 2",
        ),
        (
            "beta-bool",
            {"tokens": 4, "vocab": 8, "dtype": "fp32", "beta": True},
            "beta",
            "beta: expected a number in [0, 1], got True",
        ),
        (
            "grad-int",
            {"tokens": 4, "vocab": 8, "dtype": "fp32", "input_grad": 1},
            "input_grad",
            "input_grad: expected True or False, got 1",
        ),
    ]
]


@pytest.mark.parametrize(
    ("call", "argument", "message"), [pytest.param(*case[1:], id=case[0]) for case in CASES]
)
def test_bad_arguments_raise_argument_error_which_is_a_value_error(
    call: Callable[[], Any], argument: str, message: str
) -> None:
    with pytest.raises(KernelIndexError) as caught:
        call()
    err = caught.value
    assert type(err) is ArgumentError
    assert isinstance(err, ValueError)
    assert err.argument == argument
    assert str(err) == message


def test_no_gpu_and_triton_imported_too_early_is_a_state_error_and_a_runtime_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setitem(
        sys.modules, "triton", sys.modules.get("triton", types.ModuleType("triton"))
    )
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(RuntimeError) as caught:
        device.select_device()
    err = caught.value
    assert type(err) is StateError
    assert isinstance(err, KernelIndexError)
    assert str(err) == (
        "select_device(): no GPU found and Triton was imported before TRITON_INTERPRET=1 was set"
    )


def test_a_harness_failure_stays_the_harness_s_in_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not raised, not blamed on the kernel: even an out-of-memory of the harness is an
    ``error`` whose message says ``RuntimeError: harness error: ...``."""
    real_bench = harness.bench
    calls = []

    def bench_once_out_of_memory(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("the harness ran out")
        return real_bench(*args, **kwargs)

    monkeypatch.setattr(harness, "bench", bench_once_out_of_memory)
    record = ki.dump(sweep.run_case("torch", CASE, CPU))
    # The failed record comes from harness.failed_record, not from a second bench().
    assert len(calls) == 1
    spec = record["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"] == {
        "reason": "error",
        "message": "RuntimeError: harness error: OutOfMemoryError: the harness ran out",
    }


def test_a_kernel_s_own_error_is_recorded_as_it_was_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def bad_inputs(case: sweep.JSDCase, where: torch.device, seed: int) -> Any:
        return X, Y[:, :-1]

    monkeypatch.setattr(sweep, "_inputs", bad_inputs)
    spec = ki.dump(sweep.run_case("torch", CASE, CPU))["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"] == {
        "reason": "error",
        "message": "ArgumentError: target: shape (3, 63) != input shape (3, 64)",
    }
