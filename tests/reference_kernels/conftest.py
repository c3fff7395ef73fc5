"""Kernel tests run Triton through its interpreter on the CPU unless a GPU is present."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="the [bench] extra (torch, Triton) is not installed")

# Triton reads TRITON_INTERPRET when a kernel is defined: set it before any import of ours.
if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"
