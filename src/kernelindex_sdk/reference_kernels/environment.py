"""What the machine is: the ExecutionEnvironment spec, and the volatile facts kept apart.

The spec holds only what stays the same from run to run on one machine (product,
architecture, sizes, software versions, and the device settings changed away from their
defaults), so its digest is stable; the host name goes to annotations, and the GPU's
clocks, power and throttling while a run is timed to the run's conditions, which no digest
covers.
"""

from __future__ import annotations

import platform
import re
import socket
from typing import Any

import torch

from ..conditions import gpu_settings
from ..conditions.nvml import driver_version
from .device import nvml_device

__all__ = ["describe_device", "environment_spec", "volatile_annotations"]


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
    spec: dict[str, Any] = {"hardware": describe_device(device), "software": software}
    if device.type == "cuda" and not torch.version.hip:
        if torch.version.cuda:
            software["cuda"] = str(torch.version.cuda)
        driver = driver_version()
        if driver:
            software["driver"] = driver
        nvml = nvml_device(device)
        settings = gpu_settings(nvml) if nvml is not None else None
        if settings:
            # Only settings away from their defaults: a machine at its defaults keeps the
            # environment digest it had before settings were recorded (docs/conditions.md).
            spec["settings"] = settings
    return spec


def volatile_annotations(device: torch.device) -> dict[str, str]:
    """Facts that change between runs and are no GPU state (the host): annotations, never
    digested. The GPU's clocks are sampled over the timed loop into the run's conditions."""
    del device  # every device's host is the machine's
    return {"kernelindex.dev/host": socket.gethostname()}
