"""The state a run met while it was timed, and whether that state makes it unfit to compare.

A GPU run records the GPU's state over its timed loop in ``run.spec.conditions.gpu``:
clocks, power, temperature and the driver's throttle reasons. A CPU (wall-clock) run
records in ``run.spec.conditions.cpu`` how much of the machine's CPUs other processes used
meanwhile. That state is an observation, never digested (DESIGN.md, "Identity and
conditions"): two runs of one benchmark keep their digests whatever state they met. But a
run whose GPU was held down, or whose CPUs were busy with other work, while it was timed
measured that state, not the kernel, so no verdict is drawn from it: it is *degraded*.
:func:`degraded_reason` is the one rule, used by the harness summary, ``validate``,
compare, history, the gate and the dashboard.

:func:`sample_gpu` records the GPU's state around any timed loop (the harness's, or a
team's own ``do_bench``), through NVML (``nvidia-ml-py``, imported only when a sampler
starts); :func:`sample_cpu` records the CPUs' around a CPU timing, from ``/proc/stat``;
:func:`gpu_settings` reads the settings that belong in the environment instead
(docs/conditions.md says which fact goes where, and why).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from .cpu import DEFAULT_MIN_WINDOW_S, CpuSampler, CpuStateWarning, sample_cpu
from .nvml import GpuStateWarning, gpu_settings
from .sampler import DEFAULT_INTERVAL_S, GpuSampler, sample_gpu

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEFAULT_MIN_WINDOW_S",
    "DEGRADED_CLOCK_FRACTION",
    "DEGRADED_OTHERS_BUSY_FRACTION",
    "IDLE_REASON",
    "SETTING_REASONS",
    "CpuSampler",
    "CpuStateWarning",
    "GpuSampler",
    "GpuStateWarning",
    "degraded_reason",
    "gpu_settings",
    "record_degraded_reason",
    "sample_cpu",
    "sample_gpu",
]

#: A timed loop whose smallest SM clock sample is below this fraction of its largest one is
#: degraded: the kernel ran at two speeds, and its statistics mix them.
DEGRADED_CLOCK_FRACTION: Final = 0.90

#: NVML's name for the reason an idle GPU gives: the GPU had nothing to do, which says
#: nothing about the timed kernel. Never a cause of degradation.
IDLE_REASON: Final = "GpuIdle"

#: NVML's reasons that name a setting holding the clocks where someone put them: the
#: applications clocks (``nvidia-smi -ac``; nvml.h's older name for the bit is
#: ``UserDefinedClocks``) and the display clocks. They are recorded, but never a cause of
#: degradation: clocks held steady on purpose are the state benchmarks ask for, and a
#: setting that lasts belongs to the environment's ``settings``, where it separates
#: comparisons. A clock that drops below the setting still degrades a run (the clock rule).
SETTING_REASONS: Final = frozenset({"ApplicationsClocksSetting", "DisplayClockSetting"})

#: A CPU timing during which other processes used more than this share of the CPUs it
#: could run on is degraded: its wall clock measured the neighbours too. Chosen from
#: readings on a shared 2-core machine (docs/conditions.md, "The CPU's state").
DEGRADED_OTHERS_BUSY_FRACTION: Final = 0.10


def degraded_reason(spec: Mapping[str, Any]) -> str | None:
    """Why a run's timing is unfit to compare, from the state it recorded; None when fit.

    A run is degraded when its GPU gave any throttle reason other than idle
    (:data:`IDLE_REASON`) and the settings' own (:data:`SETTING_REASONS`) during the timed
    loop, or when its smallest SM clock sample fell below :data:`DEGRADED_CLOCK_FRACTION`
    of its largest, or when other processes used more than
    :data:`DEGRADED_OTHERS_BUSY_FRACTION` of the CPUs a CPU timing could run on. A run
    that recorded no state is not degraded: nothing says it was.

    Args:
        spec: The run's ``spec`` as a JSON value (a validated record's).

    Returns:
        One line naming each cause with its numbers, such as ``throttled (HwSlowdown,
        SwPowerCap); SM clock 1410-1980 MHz, its smallest 71% of its largest (below
        90%)`` or ``CPU shared: other processes used 48% of 2 CPUs during the timed loop
        (limit 10%)``, or None.
    """
    conditions = spec.get("conditions")
    if not isinstance(conditions, Mapping):
        return None
    causes = [*_gpu_causes(conditions.get("gpu")), *_cpu_causes(conditions.get("cpu"))]
    return "; ".join(causes) or None


def _gpu_causes(gpu: Any) -> list[str]:
    """What in a GPU's recorded state degrades its run (none for anything else)."""
    if not isinstance(gpu, Mapping):
        return []
    causes = []
    reasons = [
        r for r in gpu.get("throttleReasons") or () if r != IDLE_REASON and r not in SETTING_REASONS
    ]
    if reasons:
        causes.append(f"throttled ({', '.join(sorted(reasons))})")
    clock = gpu.get("smClockMhz")
    if isinstance(clock, Mapping):
        low, high = clock.get("min"), clock.get("max")
        if (
            isinstance(low, (int, float))
            and isinstance(high, (int, float))
            and high > 0
            and low < DEGRADED_CLOCK_FRACTION * high
        ):
            causes.append(
                f"SM clock {low:g}-{high:g} MHz, its smallest {low / high:.0%} of its largest"
                f" (below {DEGRADED_CLOCK_FRACTION:.0%})"
            )
    return causes


def _cpu_causes(cpu: Any) -> list[str]:
    """What in a CPU timing's recorded state degrades its run (none for anything else)."""
    if not isinstance(cpu, Mapping):
        return []
    others, cpus = cpu.get("othersBusyFraction"), cpu.get("availableCpus")
    if not _real(others) or others <= DEGRADED_OTHERS_BUSY_FRACTION:
        return []
    of = f" of {cpus:g} CPU{'' if cpus == 1 else 's'}" if _real(cpus) else ""
    limit = f"{DEGRADED_OTHERS_BUSY_FRACTION:.0%}"
    # Never "used 10% (limit 10%)": a share just above the limit shows its decimal.
    used = f"{others:.0%}" if f"{others:.0%}" != limit else f"{others:.1%}"
    return [f"CPU shared: other processes used {used}{of} during the timed loop (limit {limit})"]


def _real(value: object) -> TypeGuard[float]:
    """A JSON number (not a boolean, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def record_degraded_reason(record: Any) -> str | None:
    """:func:`degraded_reason` of a record: a bundle's run, or a BenchmarkRun itself.

    Args:
        record: A document's JSON value (a validated one's); anything else is no run.

    Returns:
        Why its run is degraded, or None (not degraded, or not a run).
    """
    if not isinstance(record, Mapping):
        return None
    run = record.get("run", record)
    spec = run.get("spec") if isinstance(run, Mapping) else None
    if not isinstance(spec, Mapping) or run.get("kind") != "BenchmarkRun":
        return None
    return degraded_reason(spec)
