"""What NVML says about each GPU of a machine, read only: the facts behind docs/conditions.md.

For each GPU: its clocks (current, applications and their default, maximum, customer boost
maximum), power (draw, enforced limit, management limit and its default), temperature,
the clock event reasons it supports and gives now (named), its performance modes and
current clock frequencies as the driver's text (where a clock lock might show), and what
``kernelindex_sdk.conditions.gpu_settings`` makes of it. Nothing is set or reset.

    PYTHONPATH=src python3 benchmarks/gpu_state_probe.py [--out probe.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pynvml
from _results import write_results

from kernelindex_sdk.conditions import gpu_settings
from kernelindex_sdk.conditions.nvml import reason_names


def _call(name: str, *args: Any, scale: float = 1) -> Any:
    """NVML's ``name(*args)`` (divided by ``scale``), or the error it gave, as text."""
    try:
        value = getattr(pynvml, name)(*args)
    except Exception as err:  # a probe: say what NVML answered, whatever it was
        return f"error: {err}"
    if isinstance(value, bytes):
        return value.decode()
    return value / scale if scale != 1 else value


def _gpu(index: int) -> dict[str, Any]:
    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    sm, mem = pynvml.NVML_CLOCK_SM, pynvml.NVML_CLOCK_MEM
    names = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
    now = next((_call(n, h) for n in names if hasattr(pynvml, n)), "error: no call")
    names = (
        "nvmlDeviceGetSupportedClocksEventReasons",
        "nvmlDeviceGetSupportedClocksThrottleReasons",
    )
    can = next((_call(n, h) for n in names if hasattr(pynvml, n)), "error: no call")
    uuid = _call("nvmlDeviceGetUUID", h)
    pci = _call("nvmlDeviceGetPciInfo", h)
    bus = getattr(pci, "busId", pci)
    return {
        "index": index,
        "name": _call("nvmlDeviceGetName", h),
        "uuid": uuid,
        "pci_bus_id": bus.decode() if isinstance(bus, bytes) else bus,
        "sm_clock_mhz": _call("nvmlDeviceGetClockInfo", h, sm),
        "memory_clock_mhz": _call("nvmlDeviceGetClockInfo", h, mem),
        "applications_sm_clock_mhz": _call("nvmlDeviceGetApplicationsClock", h, sm),
        "applications_memory_clock_mhz": _call("nvmlDeviceGetApplicationsClock", h, mem),
        "default_applications_sm_clock_mhz": _call("nvmlDeviceGetDefaultApplicationsClock", h, sm),
        "default_applications_memory_clock_mhz": _call(
            "nvmlDeviceGetDefaultApplicationsClock", h, mem
        ),
        "max_sm_clock_mhz": _call("nvmlDeviceGetMaxClockInfo", h, sm),
        "max_memory_clock_mhz": _call("nvmlDeviceGetMaxClockInfo", h, mem),
        "customer_boost_max_sm_clock_mhz": _call(
            "nvmlDeviceGetClock", h, sm, getattr(pynvml, "NVML_CLOCK_ID_CUSTOMER_BOOST_MAX", 3)
        ),
        "power_w": _call("nvmlDeviceGetPowerUsage", h, scale=1000),
        "enforced_power_limit_w": _call("nvmlDeviceGetEnforcedPowerLimit", h, scale=1000),
        "power_management_limit_w": _call("nvmlDeviceGetPowerManagementLimit", h, scale=1000),
        "default_power_limit_w": _call("nvmlDeviceGetPowerManagementDefaultLimit", h, scale=1000),
        "temperature_c": _call("nvmlDeviceGetTemperature", h, pynvml.NVML_TEMPERATURE_GPU),
        "persistence_mode": _call("nvmlDeviceGetPersistenceMode", h),
        "mig_mode": _call("nvmlDeviceGetMigMode", h),
        "clock_event_reasons_now": reason_names(now) if isinstance(now, int) else now,
        "clock_event_reasons_supported": reason_names(can) if isinstance(can, int) else can,
        "performance_modes": _call("nvmlDeviceGetPerformanceModes", h),
        "current_clock_freqs": _call("nvmlDeviceGetCurrentClockFreqs", h),
        "gpu_settings": gpu_settings(uuid) if isinstance(uuid, str) else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the probe's JSON file (default stdout)")
    args = parser.parse_args(argv)
    pynvml.nvmlInit()
    count = pynvml.nvmlDeviceGetCount()
    results = {
        "benchmark": "gpu_state_probe",
        "driver": _call("nvmlSystemGetDriverVersion"),
        "nvml": _call("nvmlSystemGetNVMLVersion"),
        "cuda_driver": _call("nvmlSystemGetCudaDriverVersion_v2"),
        "gpus": [_gpu(i) for i in range(count)],
    }
    write_results(results, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
