"""NVML, NVIDIA's management library, as the conditions read it: loaded once, never required.

NVML comes through ``nvidia-ml-py`` (NVIDIA's own bindings, imported as ``pynvml``; the
``[bench]`` extra installs them). It is imported on first use, never by
``import kernelindex_sdk``. Where it is missing or refuses (no NVIDIA driver, a container
without access to the device), :func:`load` says why once per process, as a
:class:`GpuStateWarning`, and every reading here gives None: a run then records no GPU
state, and nothing fails.

The public readings are the driver's version and the device settings an administrator
changed away from the GPU's defaults (:func:`gpu_settings`), which belong in the
environment spec; :mod:`.sampler` reads the state that varies while a run is timed.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "REASON_NAMES",
    "GpuStateWarning",
    "device_handle",
    "driver_version",
    "gpu_settings",
    "load",
    "reason_names",
    "say_once",
]

#: NVML's clock event (throttle) reason bits and their names, as nvml.h writes them after
#: ``nvmlClocksEventReason`` / ``nvmlClocksThrottleReason``. A bit not named here is
#: written ``Unknown`` and its hexadecimal value (``Unknown0x800``).
REASON_NAMES: Final = {
    0x1: "GpuIdle",
    0x2: "ApplicationsClocksSetting",
    0x4: "SwPowerCap",
    0x8: "HwSlowdown",
    0x10: "SyncBoost",
    0x20: "SwThermalSlowdown",
    0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown",
    0x100: "DisplayClockSetting",
    0x200: "BoardLimit",
    0x400: "Reliability",
    1 << 63: "Unknown",
}
# NVML's return codes that mean "this reading does not exist here" (nvml.h: NOT_SUPPORTED,
# NO_PERMISSION, FUNCTION_NOT_FOUND): a quantity to leave out, not a failure.
_ABSENT_CODES: Final = frozenset({3, 4, 13})
# NVML_ERROR_NOT_FOUND: a device identifier NVML does not know.
_NOT_FOUND: Final = 6

_lock = threading.Lock()
# The bindings module NVML was started through, and why it could not be (None: it was).
_loaded: tuple[Any, str | None] | None = None
# The reasons already said in this process (say_once).
_said: set[str] = set()


class GpuStateWarning(UserWarning):
    """The GPU's state cannot be recorded here (no NVML, no access, the GPU gone).

    Issued once per process and reason; the runs go on and record no state.
    """


def say_once(reason: str) -> None:
    """Warn that the GPU's state is not recorded, once per process for each reason."""
    with _lock:
        if reason in _said:
            return
        _said.add(reason)
    warnings.warn(f"GPU state not recorded: {reason}", GpuStateWarning, stacklevel=3)


def load() -> tuple[Any, str | None]:
    """The NVML bindings, started once per process, or None and why not.

    Returns:
        ``(pynvml, None)`` once ``nvmlInit`` succeeded, else ``(None, reason)``; the
        reason is said once (:func:`say_once`).
    """
    global _loaded  # noqa: PLW0603 - one NVML start per process, as NVML itself counts them
    try:
        # On first use only: `import kernelindex_sdk` never imports NVML's bindings.
        import pynvml  # noqa: PLC0415
    except ImportError:
        reason = "NVML's Python bindings are not installed (pip install nvidia-ml-py)"
        say_once(reason)
        return None, reason
    with _lock:
        if _loaded is None or _loaded[0] is not pynvml:
            try:
                pynvml.nvmlInit()
                _loaded = (pynvml, None)
            except Exception as err:  # NVMLError, or a library that cannot be opened
                _loaded = (pynvml, f"NVML could not start ({_message(err)})")
        found = _loaded
    if found[1] is not None:
        say_once(found[1])
        return None, found[1]
    return found[0], None


def _message(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _error_code(err: BaseException) -> int | None:
    """NVML's return code of an NVMLError (``err.value``), else None."""
    value = getattr(err, "value", None)
    return value if isinstance(value, int) else None


def _is_absent(err: BaseException) -> bool:
    """Whether an error means the reading does not exist here (not supported, not allowed,
    not in these bindings), rather than that NVML failed."""
    if isinstance(err, (AttributeError, NotImplementedError)):
        return True
    return _error_code(err) in _ABSENT_CODES


def _value(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, or None when the reading does not exist or NVML fails."""
    try:
        return call(*args)
    except Exception:
        return None


def device_handle(nvml: Any, device: int | str) -> Any:
    """NVML's handle of ``device``: an index in NVML's order, a UUID, or a PCI bus id.

    A UUID ``GPU-...`` that NVML does not know is tried as ``MIG-...`` (CUDA gives a MIG
    instance's UUID without saying which it is). A MIG instance's clocks, power and
    temperature are its GPU's, so the handle of its GPU is returned.

    Raises:
        Exception: whatever NVML raised for a device it cannot find.
    """
    if isinstance(device, int):
        handle = nvml.nvmlDeviceGetHandleByIndex(device)
    elif device.startswith(("GPU-", "MIG-")):
        try:
            handle = nvml.nvmlDeviceGetHandleByUUID(device)
        except Exception as err:
            if _error_code(err) != _NOT_FOUND or not device.startswith("GPU-"):
                raise
            handle = nvml.nvmlDeviceGetHandleByUUID("MIG-" + device[4:])
    else:
        handle = nvml.nvmlDeviceGetHandleByPciBusId(device)
    try:
        if nvml.nvmlDeviceIsMigDeviceHandle(handle):
            handle = nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
    except Exception as err:
        if not _is_absent(err):
            raise
    return handle


def reason_names(mask: int) -> list[str]:
    """The names of the reason bits set in ``mask``, in bit order (:data:`REASON_NAMES`)."""
    names = []
    bit = 1
    while bit <= mask:
        if mask & bit:
            names.append(REASON_NAMES.get(bit, f"Unknown{bit:#x}"))
        bit <<= 1
    return names


def driver_version() -> str | None:
    """The NVIDIA driver's version (``580.159.04``), or None without NVML."""
    nvml, _ = load()
    if nvml is None:
        return None
    try:
        version = nvml.nvmlSystemGetDriverVersion()
    except Exception:
        return None
    return version.decode() if isinstance(version, bytes) else str(version)


def gpu_settings(device: int | str = 0) -> dict[str, Any] | None:
    """The settings of a GPU that an administrator changed away from their defaults.

    These are identity, for the environment spec's ``settings``: they stay the same from
    run to run on a machine and change what a kernel's time means. A setting appears
    only when it differs from the GPU's default, so that a machine left at its defaults
    keeps the environment digest it had before settings were recorded; absent means "at
    its default, or unknown".

    - ``applicationsSmClockMhz`` and ``applicationsMemoryClockMhz``: the applications
      clocks (``nvidia-smi -ac``), both, when either differs from NVML's default
      applications clock;
    - ``powerLimitW``: the power management limit (``nvidia-smi -pl``), when it differs
      from the default limit.

    A clock lock (``nvidia-smi -lgc``) cannot be read back: NVML offers only calls that
    set and reset it. A locked GPU shows in each run's conditions instead (docs/conditions.md).

    Args:
        device: An index in NVML's order, a UUID (``GPU-...``) or a PCI bus id.

    Returns:
        The changed settings, or None when none is (or NVML cannot say).
    """
    nvml, _ = load()
    if nvml is None:
        return None
    try:
        handle = device_handle(nvml, device)
    except Exception:
        return None
    settings: dict[str, Any] = {}
    sm, mem = nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM
    clocks = [_value(nvml.nvmlDeviceGetApplicationsClock, handle, t) for t in (sm, mem)]
    defaults = [_value(nvml.nvmlDeviceGetDefaultApplicationsClock, handle, t) for t in (sm, mem)]
    if None not in clocks and None not in defaults and clocks != defaults:
        settings["applicationsSmClockMhz"] = int(clocks[0])
        settings["applicationsMemoryClockMhz"] = int(clocks[1])
    limit = _value(nvml.nvmlDeviceGetPowerManagementLimit, handle)
    default_limit = _value(nvml.nvmlDeviceGetPowerManagementDefaultLimit, handle)
    if limit is not None and default_limit is not None and limit != default_limit:
        # NVML reports milliwatts.
        settings["powerLimitW"] = limit / 1000
    return settings or None
