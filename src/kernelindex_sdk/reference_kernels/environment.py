"""What the machine is: the ExecutionEnvironment spec, and the volatile facts kept apart.

The spec holds only what stays the same from run to run on one machine (product,
architecture, sizes, software versions), so its digest is stable; clocks and the host
name go to annotations, which no digest covers.
"""

from __future__ import annotations

import contextlib
import platform
import re
import socket
from typing import Any

import torch

__all__ = ["describe_device", "environment_spec", "volatile_annotations"]


def _driver_version() -> str | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
    except pynvml.NVMLError:
        return None
    return version.decode() if isinstance(version, bytes) else str(version)


def _cpu_product() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def describe_device(device: torch.device) -> dict[str, Any]:
    """Return the ``hardware`` object of an environment spec for ``device``."""
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        vendor = "amd" if torch.version.hip else "nvidia"
        hardware: dict[str, Any] = {"vendor": vendor, "product": props.name}
        if vendor == "nvidia":
            hardware["architecture"] = f"sm_{props.major}{props.minor}"
        hardware["memoryBytes"] = int(props.total_memory)
        hardware["multiprocessors"] = int(props.multi_processor_count)
        l2 = int(getattr(props, "L2_cache_size", 0))
        if l2:
            hardware["l2CacheBytes"] = l2
        return hardware
    machine = re.sub(r"[^a-z0-9_]", "_", platform.machine().lower()) or "unknown"
    return {"vendor": "cpu", "product": _cpu_product(), "architecture": machine}


def environment_spec(device: torch.device) -> dict[str, Any]:
    """Return the ExecutionEnvironment ``spec`` of ``device`` and the software in use."""
    import triton

    software = {
        "python": platform.python_version(),
        # str(): torch's version is a str subclass, and records hold plain JSON strings.
        "torch": str(torch.__version__),
        "triton": str(triton.__version__),
    }
    if device.type == "cuda":
        if torch.version.cuda:
            software["cuda"] = str(torch.version.cuda)
        driver = _driver_version()
        if driver:
            software["driver"] = driver
    return {"hardware": describe_device(device), "software": software}


def volatile_annotations(device: torch.device) -> dict[str, str]:
    """Facts that change between runs (host, clocks): annotations, never digested."""
    notes = {"kernelindex.dev/host": socket.gethostname()}
    if device.type == "cuda":
        with contextlib.suppress(Exception):  # NVML is optional: no clocks without it
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)
            notes["kernelindex.dev/sm-clock-mhz"] = str(
                pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
            )
            notes["kernelindex.dev/memory-clock-mhz"] = str(
                pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)
            )
    return notes
