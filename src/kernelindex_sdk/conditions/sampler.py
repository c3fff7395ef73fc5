"""The GPU's state while something is timed, sampled through NVML from a thread.

    from kernelindex_sdk.conditions import sample_gpu

    with sample_gpu(0) as state:
        ...  # the timed loop, ending once the GPU has finished (synchronize)
    spec["conditions"] = state.result  # run.spec.conditions, or None

One reading on entry, one every ``interval_s`` from a daemon thread while the block runs,
and one on exit. Each reads the SM and memory clocks, the power draw, the temperature and
the driver's clock event (throttle) reasons; the applications and maximum clocks and the
enforced power limit are read once, on entry. The thread only reads NVML: nothing is
launched on the GPU, and the timed code never waits for it (``benchmarks/
gpu_state_overhead.py`` measures what it costs the timed medians).

Nothing here can fail the timed code. Without NVML, or where it refuses, the sampler says
why once per process (:class:`.nvml.GpuStateWarning`) and its result is None. A reading
NVML does not support here is left out; a reading that fails now and then is skipped; a
GPU that stops answering (NVML's GPU_IS_LOST) ends the sampling, and the result is None:
the state of a loop that was not watched to its end is not recorded.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final

from .._base.arguments import at_least
from ..errors import ArgumentError, StateError
from . import nvml as _nvml

__all__ = ["DEFAULT_INTERVAL_S", "GpuSampler", "sample_gpu"]

#: Seconds between two readings of the sampling thread: about ten readings in the
#: harness's 100 ms loop of CUDA-event samples.
DEFAULT_INTERVAL_S: Final = 0.01
# NVML_ERROR_GPU_IS_LOST: the GPU fell off the bus or stopped answering.
_GPU_LOST: Final = 15
_IDLE_MASK: Final = 0x1

# The quantities read at every sample: (field, reading of (bindings, handle)).
_SAMPLED: Final[tuple[tuple[str, Callable[[Any, Any], float]], ...]] = (
    ("smClockMhz", lambda n, h: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
    ("memoryClockMhz", lambda n, h: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
    # NVML reports milliwatts.
    ("powerW", lambda n, h: n.nvmlDeviceGetPowerUsage(h) / 1000),
    ("temperatureC", lambda n, h: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
)
# The quantities read once, on entry.
_ONCE: Final[tuple[tuple[str, Callable[[Any, Any], float]], ...]] = (
    ("applicationsSmClockMhz", lambda n, h: n.nvmlDeviceGetApplicationsClock(h, n.NVML_CLOCK_SM)),
    (
        "applicationsMemoryClockMhz",
        lambda n, h: n.nvmlDeviceGetApplicationsClock(h, n.NVML_CLOCK_MEM),
    ),
    ("maxSmClockMhz", lambda n, h: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM)),
    ("maxMemoryClockMhz", lambda n, h: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_MEM)),
    ("powerLimitW", lambda n, h: n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000),
)
_REASONS: Final = "throttleReasons"


def _reasons_reading(nvml: Any) -> Callable[[Any], int] | None:
    # The newer name first; the older one is deprecated (to go in CUDA 14).
    for name in (
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons",
    ):
        call = getattr(nvml, name, None)
        if call is not None:
            return call  # type: ignore[no-any-return]
    return None


class _GpuLostError(Exception):
    """NVML said the GPU is gone: the sampling ends."""


class GpuSampler:
    """Samples one GPU's state while a block runs; its :attr:`result` is the record's value.

    Use :func:`sample_gpu` to make one. A sampler is used once.

    Attributes:
        result: After the block: ``run.spec.conditions`` as a JSON value,
            ``{"gpu": {"samples": ..., "smClockMhz": {"min", "median", "max"}, ...}}``,
            or None when nothing was recorded.
        unavailable: Why nothing was recorded (no NVML, no access, the GPU gone), or None.
    """

    def __init__(self, device: int | str = 0, *, interval_s: float = DEFAULT_INTERVAL_S) -> None:
        """Prepare a sampler; nothing is read before the block starts.

        Args:
            device: The GPU: an index in NVML's order (which is not CUDA's under
                ``CUDA_VISIBLE_DEVICES``), a UUID (``GPU-...``, what
                ``torch.cuda.get_device_properties(d).uuid`` names) or a PCI bus id.
            interval_s: Seconds between two readings of the sampling thread.

        Raises:
            ArgumentError: for an interval that is not a positive finite number, or a
                device that is neither a non-negative index nor a non-empty string.
        """
        if isinstance(device, bool) or not (
            (isinstance(device, int) and device >= 0) or (isinstance(device, str) and device)
        ):
            raise ArgumentError(
                argument="device",
                reason=f"expected an NVML index >= 0, a UUID or a PCI bus id, got {device!r}",
            )
        self._device = device
        self._interval = float(at_least(interval_s, "interval_s", what="seconds", exclusive=True))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nvml: Any = None
        self._handle: Any = None
        self._reasons: Callable[[Any], int] | None = None
        self._sampled = list(_SAMPLED)
        self._values: dict[str, list[float]] = {name: [] for name, _ in _SAMPLED}
        self._once: dict[str, float] = {}
        self._mask = 0
        self._reasons_read = False
        self._samples = 0
        self._used = False
        self.result: dict[str, Any] | None = None
        self.unavailable: str | None = None

    def __enter__(self) -> GpuSampler:
        if self._used:
            raise StateError(call="GpuSampler.__enter__", reason="a sampler is used once")
        self._used = True
        nvml, reason = _nvml.load()
        if nvml is None:
            self.unavailable = reason
            return self
        try:
            self._handle = _nvml.device_handle(nvml, self._device)
        except Exception as err:
            self._give_up(f"NVML does not find GPU {self._device!r} ({_nvml._message(err)})")
            return self
        self._nvml = nvml
        self._reasons = _reasons_reading(nvml)
        for name, call in _ONCE:
            value = _nvml._value(lambda call=call: _number(call(nvml, self._handle)))
            if value is not None:
                self._once[name] = value
        if self._read():
            self._thread = threading.Thread(
                target=self._run, name="kernelindex-gpu-state", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._nvml is None:
            return
        if self.unavailable is None:
            self._read()
        if self.unavailable is None:
            self.result = self._summary()
            if self.result is None:
                self._give_up(f"NVML gave no reading of GPU {self._device!r}")

    def _give_up(self, reason: str) -> None:
        self.unavailable = reason
        self.result = None
        _nvml.say_once(reason)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            if not self._read():
                return

    def _read(self) -> bool:
        """Take one reading; False once the GPU is gone (the sampling ends)."""
        try:
            got = self._read_all()
        except _GpuLostError:
            self._give_up(f"GPU {self._device!r} stopped answering NVML while it was timed")
            return False
        self._samples += got
        return True

    def _read_all(self) -> bool:
        """One reading of every sampled quantity; whether any of them was read."""
        nvml, handle, got = self._nvml, self._handle, False
        for entry in list(self._sampled):
            name, call = entry
            try:
                value = _number(call(nvml, handle))
            except Exception as err:
                if _absent(err):
                    self._sampled.remove(entry)
                continue
            self._values[name].append(value)
            got = True
        if self._reasons is not None:
            try:
                mask = int(self._reasons(handle))
            except Exception as err:
                if _absent(err):
                    self._reasons = None
            else:
                self._mask |= mask
                self._reasons_read = got = True
        return got

    def _summary(self) -> dict[str, Any] | None:
        if self._samples == 0:
            return None
        gpu: dict[str, Any] = {"samples": self._samples}
        for name, values in self._values.items():
            if values:
                gpu[name] = {
                    "min": min(values),
                    "median": _number(statistics.median(values)),
                    "max": max(values),
                }
        gpu.update(self._once)
        if self._reasons_read:
            # An idle GPU's reason says nothing about the timed work (schema: left out).
            gpu[_REASONS] = sorted(_nvml.reason_names(self._mask & ~_IDLE_MASK))
        return {"gpu": gpu}


def _absent(err: BaseException) -> bool:
    """Whether a reading that raised is one NVML does not have here (never asked again).

    The GPU gone ends the sampling (:class:`_GpuLostError`); any other failure skips this
    reading only.
    """
    if _nvml._error_code(err) == _GPU_LOST:
        raise _GpuLostError from err
    return _nvml._is_absent(err)


def _number(value: Any) -> float:
    """A reading as JSON will hold it: an integer stays one, a float to 0.001."""
    if isinstance(value, int):
        return value
    number = round(float(value), 3)
    return int(number) if number.is_integer() else number


def sample_gpu(device: int | str = 0, *, interval_s: float = DEFAULT_INTERVAL_S) -> GpuSampler:
    """A context manager that samples a GPU's state while its block runs.

    Put it around the timed region only (after warm-up), and leave it once the GPU has
    finished the work (after ``torch.cuda.synchronize()``), so the readings cover the
    timed calls. The result goes into the run as ``run.spec.conditions``: an observation,
    never digested. :func:`kernelindex_sdk.conditions.degraded_reason` says whether the
    state makes the timing unfit to compare.

    Args:
        device: The GPU: an index in NVML's order, a UUID (``GPU-...``) or a PCI bus id.
            Under ``CUDA_VISIBLE_DEVICES`` NVML still numbers every GPU of the machine:
            name the GPU by its UUID.
        interval_s: Seconds between two readings of the sampling thread.

    Returns:
        A :class:`GpuSampler`; after the block its ``result`` is the conditions' JSON value,
        or None (and ``unavailable`` says why) when NVML cannot tell.

    Raises:
        ArgumentError: for a bad ``device`` or ``interval_s``.
    """
    return GpuSampler(device, interval_s=interval_s)
