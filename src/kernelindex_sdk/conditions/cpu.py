"""How much of the machine's CPUs other processes used while something was timed on the CPU.

    from kernelindex_sdk.conditions import sample_cpu

    with sample_cpu() as state:
        ...  # the timed loop, on the CPU (a wall clock)
    spec["conditions"] = state.result  # run.spec.conditions, or None

A wall-clock timing on a shared machine measures the neighbours too: on a busy 2-core
machine the same code's medians moved 1.9 to 500 times between reruns, with nothing in
either run's own spread to show it (docs/conditions.md). The sampler reads the kernel's
CPU counters (``/proc/stat``) and this process's own CPU time
(:func:`resource.getrusage`, microseconds) on entry and on exit, and records which share
of the CPUs this process may run on (``os.sched_getaffinity``) was busy with anything
else: ``(busy - own) / (cpus * window)``, where a CPU's busy time is the window less its
idle and I/O-wait time. Steal (the hypervisor running another guest) counts as busy: the
timed code lost that time too.

``/proc/stat`` counts in clock ticks (10 ms): over a 10 ms loop the share is a guess. So
a loop shorter than ``min_window_s`` (0.25 s by default) is watched on, by waiting after
it, until the window is that long: the state of the machine in the moment after the loop,
as close as the counters can say. ``windowMs`` records how long was watched.

Nothing here can fail the timed code. Where ``/proc/stat`` does not exist (macOS,
Windows) the result is None and nothing is said; where it cannot be read or parsed, the
sampler says why once per process (:class:`CpuStateWarning`) and the result is None.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Final, NamedTuple

from .._base.arguments import at_least
from ..errors import StateError

__all__ = ["DEFAULT_MIN_WINDOW_S", "CpuSampler", "CpuStateWarning", "sample_cpu"]

#: The shortest window the state is read over, seconds: at /proc/stat's 10 ms ticks, the
#: share of 2 CPUs read over 0.25 s is within about 4 points of the truth (one tick per
#: CPU); over a 10 ms loop it could be off by 50. A longer loop is watched as it is.
DEFAULT_MIN_WINDOW_S: Final = 0.25
# Where the kernel keeps its per-CPU time counters; tests point it at a fake.
_PROC_STAT = "/proc/stat"
# Columns of a `cpuN` line of /proc/stat after its name (proc(5)): idle and iowait are
# the time the CPU had nothing to run.
_IDLE, _IOWAIT = 3, 4

_lock = threading.Lock()
_said: set[str] = set()


class CpuStateWarning(UserWarning):
    """The CPU's state cannot be recorded here (``/proc/stat`` unreadable or unparsed).

    Issued once per process and reason; the runs go on and record no state. A system
    without ``/proc/stat`` (macOS, Windows) records none and says nothing.
    """


class _Reading(NamedTuple):
    """One reading of the counters: the clock, each CPU's idle seconds, our CPU seconds."""

    clock_s: float
    idle_s: Mapping[int, float]
    own_s: float
    load_1m: float | None


class _UnreadableError(Exception):
    """/proc/stat exists but cannot be read or makes no sense: said once."""


def _say_once(reason: str) -> None:
    with _lock:
        if reason in _said:
            return
        _said.add(reason)
    # 4: past this function, the sampler's reading and its __enter__ or __exit__.
    warnings.warn(f"CPU state not recorded: {reason}", CpuStateWarning, stacklevel=4)


def _idle_seconds(text: str, ticks_per_s: float) -> dict[int, float]:
    """Each CPU's idle and I/O-wait time in seconds, from /proc/stat's ``cpuN`` lines.

    Raises:
        _UnreadableError: when no ``cpuN`` line has the idle and iowait columns as integers.
    """
    found: dict[int, float] = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields or not fields[0].startswith("cpu") or not fields[0][3:].isdigit():
            continue
        try:
            idle = int(fields[1 + _IDLE]) + int(fields[1 + _IOWAIT])
        except (IndexError, ValueError):
            reason = f"{_PROC_STAT} has a line it cannot read: {line[:80]!r}"
            raise _UnreadableError(reason) from None
        found[int(fields[0][3:])] = idle / ticks_per_s
    if not found:
        raise _UnreadableError(f"{_PROC_STAT} lists no cpuN line")
    return found


def _own_cpu_s() -> float:
    """This process's CPU time (all its threads, user and system), in seconds."""
    try:
        import resource  # noqa: PLC0415 - Unix only; absent where /proc/stat is too

        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    except ImportError:  # pragma: no cover - not Unix: no /proc/stat either
        times = os.times()
        return times.user + times.system


def _affinity() -> set[int] | None:
    """The CPUs this process may run on, or None where the system cannot say."""
    getter: Callable[[int], set[int]] | None = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return None
    try:
        return set(getter(0))
    except OSError:
        return None


def _load_1m() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _read() -> _Reading | None:
    """Read the counters now; None where there is no /proc/stat.

    Raises:
        _UnreadableError: when /proc/stat exists but cannot be read or parsed.
    """
    try:
        with open(_PROC_STAT, encoding="ascii") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        reason = f"{_PROC_STAT} cannot be read ({type(err).__name__}: {err})"
        raise _UnreadableError(reason) from None
    try:
        ticks = float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        ticks = 100.0  # USER_HZ, 100 on every Linux architecture
    idle = _idle_seconds(text, ticks)
    # Clock last: the window then never includes time spent reading before it.
    return _Reading(time.perf_counter(), idle, _own_cpu_s(), _load_1m())


class CpuSampler:
    """Reads the CPUs' state around a block; its :attr:`result` is the record's value.

    Use :func:`sample_cpu` to make one. A sampler is used once.

    Attributes:
        result: After the block: ``run.spec.conditions`` as a JSON value,
            ``{"cpu": {"availableCpus": ..., "othersBusyFraction": ..., ...}}``, or None
            when nothing was recorded.
        unavailable: Why nothing was recorded (no /proc/stat, unreadable, a window of no
            time), or None.
    """

    def __init__(self, *, min_window_s: float = DEFAULT_MIN_WINDOW_S) -> None:
        """Prepare a sampler; nothing is read before the block starts.

        Args:
            min_window_s: The shortest window to read the state over, seconds: a block
                that ends sooner is watched on, by waiting, until it is this long. 0
                reads over the block alone.

        Raises:
            ArgumentError: for a window that is not a finite number >= 0.
        """
        self._min_window_s = float(at_least(min_window_s, "min_window_s", what="seconds"))
        self._start: _Reading | None = None
        self._used = False
        self.result: dict[str, Any] | None = None
        self.unavailable: str | None = None

    def __enter__(self) -> CpuSampler:
        if self._used:
            raise StateError(call="CpuSampler.__enter__", reason="a sampler is used once")
        self._used = True
        self._start = self._reading()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._start is None or kind is not None:
            return
        short = self._min_window_s - (time.perf_counter() - self._start.clock_s)
        if short > 0:
            time.sleep(short)
        end = self._reading()
        if end is not None:
            self.result = self._summary(self._start, end)

    def _reading(self) -> _Reading | None:
        try:
            found = _read()
        except _UnreadableError as err:
            self.unavailable = str(err)
            _say_once(self.unavailable)
            return None
        if found is None:
            self.unavailable = f"{_PROC_STAT} does not exist here (not Linux)"
        return found

    def _summary(self, start: _Reading, end: _Reading) -> dict[str, Any] | None:
        window = end.clock_s - start.clock_s
        allowed = _affinity()
        cpus = [c for c in start.idle_s if c in end.idle_s and (allowed is None or c in allowed)]
        if window <= 0 or not cpus:
            self.unavailable = (
                "the window took no measurable time"
                if window <= 0
                else f"{_PROC_STAT} lists none of the CPUs this process may run on"
            )
            return None
        # A CPU's busy time is the window less its idle time, within [0, window]: its
        # counters tick every 10 ms, so a short window can read a little past either end.
        busy = sum(min(max(window - (end.idle_s[c] - start.idle_s[c]), 0.0), window) for c in cpus)
        own = max(end.own_s - start.own_s, 0.0)
        capacity = len(cpus) * window
        cpu: dict[str, Any] = {
            "availableCpus": len(cpus),
            "onlineCpus": len(end.idle_s),
            "windowMs": round(window * 1000, 3),
            "othersBusyFraction": _fraction((busy - own) / capacity),
            "ownBusyFraction": _fraction(own / capacity),
        }
        if start.load_1m is not None:
            cpu["loadAverage1mAtStart"] = start.load_1m
        if end.load_1m is not None:
            cpu["loadAverage1mAtEnd"] = end.load_1m
        return {"cpu": cpu}


def _fraction(value: float) -> float:
    """A share within [0, 1] to three digits, as the record holds it."""
    number = round(min(max(value, 0.0), 1.0), 3)
    return int(number) if number.is_integer() else number


def sample_cpu(*, min_window_s: float = DEFAULT_MIN_WINDOW_S) -> CpuSampler:
    """A context manager that records how much of the CPUs others used while its block ran.

    Put it around a CPU timing's timed loop only (after warm-up). The result goes into the
    run as ``run.spec.conditions``: an observation, never digested.
    :func:`kernelindex_sdk.conditions.degraded_reason` says whether the state makes the
    timing unfit to compare. A GPU timing does not need it: its host is often shared by
    design, and what the GPU met is :func:`kernelindex_sdk.conditions.sample_gpu`'s.

    Args:
        min_window_s: The shortest window to read over, seconds (0.25 by default): a block
            that ends sooner is watched on, by waiting after it, since the kernel's
            counters tick every 10 ms. 0 reads over the block alone.

    Returns:
        A :class:`CpuSampler`; after the block its ``result`` is the conditions' JSON value,
        or None (and ``unavailable`` says why) where the state cannot be read, or when the
        block raised.

    Raises:
        ArgumentError: for a bad ``min_window_s``.
    """
    return CpuSampler(min_window_s=min_window_s)
