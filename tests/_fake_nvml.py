"""A fake ``pynvml`` (NVIDIA's NVML bindings) whose readings and failures a test scripts.

Each reading is a list: the n-th call returns its n-th entry (the last one repeats), and an
entry that is an exception is raised instead. ``install`` puts the fake in
``sys.modules["pynvml"]`` and forgets what the conditions had loaded or said, so each test
starts a fresh process's NVML.
"""

from __future__ import annotations

import sys
import threading
import time
import types
from collections.abc import Sequence
from typing import Any

import pytest

from kernelindex_sdk.conditions import nvml as conditions_nvml

# nvml.h's return codes.
NOT_SUPPORTED = 3
NO_PERMISSION = 4
NOT_FOUND = 6
GPU_IS_LOST = 15
UNKNOWN = 999
_TEXT = {
    NOT_SUPPORTED: "Not Supported",
    NO_PERMISSION: "Insufficient Permissions",
    NOT_FOUND: "Not Found",
    GPU_IS_LOST: "GPU is lost",
    9: "Driver Not Loaded",
    UNKNOWN: "Unknown Error",
}
# nvml.h's reason bits.
SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
GPU_IDLE = 0x1
APPLICATIONS_CLOCKS = 0x2
UUID = "GPU-3f5b2e0a-1111-2222-3333-444455556666"


class NVMLError(Exception):
    """As pynvml's: the return code in ``value``."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _TEXT.get(self.value, f"NVML error {self.value}")


class FakeNvml(types.ModuleType):
    """The NVML calls the conditions make, answering from scripted lists."""

    NVML_CLOCK_GRAPHICS = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVMLError = NVMLError

    def __init__(
        self,
        *,
        sm: Sequence[Any] = (1980,),
        memory: Sequence[Any] = (2619,),
        power_mw: Sequence[Any] = (412345,),
        temperature: Sequence[Any] = (41,),
        reasons: Sequence[Any] = (0,),
        applications: tuple[Any, Any] = (1980, 2619),
        default_applications: tuple[Any, Any] = (1980, 2619),
        max_clocks: tuple[Any, Any] = (1980, 2619),
        enforced_limit_mw: Any = 700000,
        limit_mw: Any = 700000,
        default_limit_mw: Any = 700000,
        init_error: BaseException | None = None,
        handle_error: BaseException | None = None,
        devices: Sequence[str] = (UUID,),
        driver: Any = "580.159.04",
    ) -> None:
        super().__init__("pynvml")
        self.script: dict[str, list[Any]] = {
            "sm": list(sm),
            "memory": list(memory),
            "power": list(power_mw),
            "temperature": list(temperature),
            "reasons": list(reasons),
        }
        self.reads: dict[str, int] = dict.fromkeys(self.script, 0)
        self.applications = applications
        self.default_applications = default_applications
        self.max_clocks = max_clocks
        self.enforced_limit_mw = enforced_limit_mw
        self.limit_mw = limit_mw
        self.default_limit_mw = default_limit_mw
        self.init_error = init_error
        self.handle_error = handle_error
        self.devices = list(devices)
        self.driver = driver
        self.inits = 0
        self.lookups: list[Any] = []
        self._lock = threading.Lock()

    # Scripted readings.
    def _next(self, name: str) -> Any:
        with self._lock:
            entries = self.script[name]
            value = entries[min(self.reads[name], len(entries) - 1)]
            self.reads[name] += 1
        if isinstance(value, BaseException):
            raise value
        return value

    def wait_reads(self, name: str, count: int, timeout_s: float = 30.0) -> None:
        """Block until ``name`` was read at least ``count`` times (the sampling thread)."""
        deadline = time.monotonic() + timeout_s
        while self.reads[name] < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} read {self.reads[name]} times, wanted {count}")
            time.sleep(0.001)

    @staticmethod
    def _static(value: Any) -> Any:
        if isinstance(value, BaseException):
            raise value
        return value

    # The NVML API.
    def nvmlInit(self) -> None:
        self.inits += 1
        if self.init_error is not None:
            raise self.init_error

    def nvmlSystemGetDriverVersion(self) -> Any:
        return self._static(self.driver)

    def _handle(self, key: Any) -> Any:
        self.lookups.append(key)
        if self.handle_error is not None:
            raise self.handle_error
        return ("handle", key)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        if index >= len(self.devices):
            raise NVMLError(NOT_FOUND)
        return self._handle(index)

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> Any:
        if uuid not in self.devices:
            raise NVMLError(NOT_FOUND)
        return self._handle(uuid)

    def nvmlDeviceGetHandleByPciBusId(self, bus: str) -> Any:
        return self._handle(bus)

    def nvmlDeviceIsMigDeviceHandle(self, handle: Any) -> bool:
        return False

    def nvmlDeviceGetClockInfo(self, handle: Any, clock: int) -> Any:
        return self._next("sm" if clock == self.NVML_CLOCK_SM else "memory")

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> Any:
        return self._next("power")

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> Any:
        return self._next("temperature")

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> Any:
        return self._next("reasons")

    def nvmlDeviceGetApplicationsClock(self, handle: Any, clock: int) -> Any:
        return self._static(self.applications[0 if clock == self.NVML_CLOCK_SM else 1])

    def nvmlDeviceGetDefaultApplicationsClock(self, handle: Any, clock: int) -> Any:
        return self._static(self.default_applications[0 if clock == self.NVML_CLOCK_SM else 1])

    def nvmlDeviceGetMaxClockInfo(self, handle: Any, clock: int) -> Any:
        return self._static(self.max_clocks[0 if clock == self.NVML_CLOCK_SM else 1])

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any) -> Any:
        return self._static(self.enforced_limit_mw)

    def nvmlDeviceGetPowerManagementLimit(self, handle: Any) -> Any:
        return self._static(self.limit_mw)

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: Any) -> Any:
        return self._static(self.default_limit_mw)


def forget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what the conditions loaded and said: a fresh process, as NVML sees it."""
    monkeypatch.setattr(conditions_nvml, "_loaded", None)
    monkeypatch.setattr(conditions_nvml, "_said", set())


def install(monkeypatch: pytest.MonkeyPatch, fake: FakeNvml | None) -> FakeNvml | None:
    """Make ``import pynvml`` give ``fake`` (None: an ImportError, as when it is missing)."""
    forget(monkeypatch)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    return fake
