"""sweep.plan's option checks: no point twice, no size a record cannot hold."""

from __future__ import annotations

import pytest
import torch

from kernelindex_sdk.errors import SweepOptionError
from kernelindex_sdk.reference_kernels.jsd.sweep import SweepOptionError as FromSweep
from kernelindex_sdk.reference_kernels.jsd.sweep import plan


def test_plan_refuses_repeats_and_sizes_beyond_2_53() -> None:
    """The library names its parameters; the CLI maps them to its flags (test_harness)."""
    cpu = torch.device("cpu")
    with pytest.raises(SweepOptionError, match="providers: 'torch' is given twice"):
        plan(providers=["torch", "torch"], device=cpu)
    with pytest.raises(SweepOptionError, match="tokens: 4 is given twice"):
        plan(providers=["torch"], device=cpu, tokens=[4, 4])
    with pytest.raises(SweepOptionError, match=r"^tokens: expected integers in \[1, 2\^53 - 1\]"):
        plan(providers=["torch"], device=cpu, tokens=[2**53], vocab=[1])
    # fp32, input and target read once: 8 bytes per element.
    edge = (2**53 - 1) // 8
    assert plan(providers=["torch"], device=cpu, tokens=[edge], vocab=[1], dtypes=["fp32"])
    with pytest.raises(SweepOptionError, match=r"^tokens/vocab: .* more than a record can hold"):
        plan(providers=["torch"], device=cpu, tokens=[edge + 1], vocab=[1], dtypes=["fp32"])
    with pytest.raises(SweepOptionError, match="more than a record can hold"):
        plan(
            providers=["torch"],
            device=cpu,
            tokens=[edge],
            vocab=[1],
            dtypes=["fp32"],
            input_grad="both",
        )


def test_the_sweep_option_error_is_the_one_in_errors() -> None:
    assert FromSweep is SweepOptionError
