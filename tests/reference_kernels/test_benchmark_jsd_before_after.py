"""benchmarks/jsd_before_after.py on the CPU: its bit-for-bit comparison can fail.

The GPU run and the full check over the CPU tests' cases are the script's own (results in
benchmarks/results/jsd_before_after_cpu.json); here, that "the same bits" means the same
bits, and that an earlier fused.py loads beside this tree's.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from kernelindex_sdk.reference_kernels.jsd import fused, jsd_triton

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(
        "jsd_before_after", BENCHMARKS / "jsd_before_after.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["jsd_before_after"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("jsd_before_after", None)


def test_raw_bits_tell_zeros_and_nans_apart(script: ModuleType) -> None:
    """-0.0 == 0.0 and NaN != NaN as floats; as bits, the first pair differs and a NaN
    equals itself."""
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        zero, negative = torch.zeros((), dtype=dtype), -torch.zeros((), dtype=dtype)
        assert not torch.equal(script._bits(zero), script._bits(negative))
        nan = torch.full((3,), float("nan"), dtype=dtype)
        assert torch.equal(script._bits(nan), script._bits(nan.clone()))


def test_one_ulp_in_the_loss_or_the_gradient_is_a_difference(script: ModuleType) -> None:
    x, y = script._inputs(3, 130, torch.float32, seed=1)
    assert script._same_bits(jsd_triton, jsd_triton, x, y, beta=0.3)

    def loss_off(input: torch.Tensor, target: torch.Tensor, **kw: Any) -> torch.Tensor:
        return torch.nextafter(jsd_triton(input, target, **kw), torch.tensor(1.0))

    class _GradOff(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, loss: torch.Tensor) -> torch.Tensor:
            return loss.clone()

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
            return torch.nextafter(grad, torch.tensor(2.0))

    def grad_off(input: torch.Tensor, target: torch.Tensor, **kw: Any) -> torch.Tensor:
        return _GradOff.apply(jsd_triton(input, target, **kw))  # type: ignore[no-any-return]

    assert not script._same_bits(jsd_triton, loss_off, x, y, beta=0.3)
    assert not script._same_bits(jsd_triton, grad_off, x, y, beta=0.3)


def test_an_earlier_fused_py_loads_beside_this_trees(script: ModuleType) -> None:
    """A copy of fused.py loads as its own module, its relative imports resolved here."""
    import _results

    before = _results.load_module(fused.__file__, "_copy_fused", script.PACKAGE)
    try:
        assert before is not fused
        assert before.jsd_fwd_kernel is not fused.jsd_fwd_kernel
        x, y = script._inputs(2, 100, torch.bfloat16)
        assert script._same_bits(before.jsd_triton, jsd_triton, x, y, beta=0.5)
    finally:
        sys.modules.pop(f"{script.PACKAGE}._copy_fused", None)
