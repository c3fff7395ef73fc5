"""Generalized Jensen-Shannon divergence loss: a PyTorch reference and a fused Triton kernel."""

from .fused import jsd_triton
from .reference import jsd_torch

__all__ = ["jsd_torch", "jsd_triton"]
