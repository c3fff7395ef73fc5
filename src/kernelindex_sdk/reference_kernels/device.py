"""Where benchmarks run: the GPU when there is one, else the CPU with Triton's interpreter."""

from __future__ import annotations

import os
import sys

import torch

from ..errors import StateError

__all__ = ["nvml_device", "select_device"]


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


def nvml_device(device: torch.device) -> int | str | None:
    """How NVML names a CUDA device: ``GPU-`` and its UUID, else its index, else None.

    NVML numbers every GPU of the machine in its own order, whatever
    ``CUDA_VISIBLE_DEVICES`` leaves visible (a worker pinned to GPU 3 sees it as
    ``cuda:0``), so a CUDA index names the right NVML device only where that variable is
    unset. The UUID names it everywhere.

    Args:
        device: A CUDA device.

    Returns:
        The UUID (``GPU-...``; :func:`kernelindex_sdk.conditions.sample_gpu` also tries it
        as a MIG instance's), the index when torch gives no UUID and nothing is hidden, or
        None when NVML's device cannot be told (an AMD GPU, hidden devices without a UUID).
    """
    if device.type != "cuda" or torch.version.hip:
        return None
    index = device.index if device.index is not None else torch.cuda.current_device()
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    if uuid is not None and str(uuid):
        text = str(uuid)
        return text if text.startswith(("GPU-", "MIG-")) else f"GPU-{text}"
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        return None
    return index
