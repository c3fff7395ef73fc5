"""Where benchmarks run: the GPU when there is one, else the CPU with Triton's interpreter."""

from __future__ import annotations

import os
import sys

import torch

from ..errors import StateError

__all__ = ["select_device"]


def select_device() -> torch.device:
    """Return the current CUDA device, or the CPU after switching Triton to its interpreter.

    Call before anything imports Triton kernels: Triton reads TRITON_INTERPRET when a
    kernel is defined, not when it runs.

    Raises:
        StateError: when there is no GPU and Triton was imported before
            ``TRITON_INTERPRET=1`` was set (it is a RuntimeError too).
    """
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        raise StateError(
            call="select_device()",
            reason="no GPU found and Triton was imported before TRITON_INTERPRET=1 was set",
        )
    os.environ["TRITON_INTERPRET"] = "1"
    return torch.device("cpu")
