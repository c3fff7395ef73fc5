"""Liger-Kernel's JSD entry points backed by ``jsd_triton``: a drop-in for Liger's own tests.

``benchmarks/jsd_h200_run.sh`` points Liger-Kernel's ``test/transformers/test_jsd.py`` (from
its source distribution) at these names instead of Liger's, so that its own tests, with its
own torch reference and tolerances, check our kernel:

- ``LigerJSD(beta, ignore_index)(log_q, log_p, shift_labels=None)``;
- ``LigerJSDFunction.apply(input, target, shift_labels, beta, ignore_index, *unused)``;
- ``liger_jsd(input, target, shift_labels=None, beta=0.5, ignore_index=-100)``.
"""

from __future__ import annotations

from typing import Any

import torch

from kernelindex_sdk.reference_kernels.jsd import jsd_triton

__all__ = ["LigerJSD", "LigerJSDFunction", "liger_jsd"]


def liger_jsd(
    input: torch.Tensor,
    target: torch.Tensor,
    shift_labels: torch.Tensor | None = None,
    beta: float = 0.5,
    ignore_index: int = -100,
) -> torch.Tensor:
    """Liger's functional form."""
    return jsd_triton(input, target, beta=beta, labels=shift_labels, ignore_index=ignore_index)


class LigerJSDFunction:
    """Liger's autograd.Function, as its tests call it (``apply`` only)."""

    @staticmethod
    def apply(
        input: torch.Tensor,
        target: torch.Tensor,
        shift_labels: torch.Tensor | None = None,
        beta: float = 0.5,
        ignore_index: int = -100,
        *unused: Any,
    ) -> torch.Tensor:
        return liger_jsd(input, target, shift_labels, beta, ignore_index)


class LigerJSD(torch.nn.Module):
    """Liger's module."""

    def __init__(self, beta: float = 0.5, ignore_index: int = -100) -> None:
        super().__init__()
        self.beta = beta
        self.ignore_index = ignore_index

    def forward(
        self, log_q: torch.Tensor, log_p: torch.Tensor, shift_labels: torch.Tensor | None = None
    ) -> torch.Tensor:
        return liger_jsd(log_q, log_p, shift_labels, self.beta, self.ignore_index)
