"""The state a run met while it was timed, and whether that state makes it unfit to compare.

A run records the GPU's state over its timed loop in ``run.spec.conditions.gpu``: clocks,
power, temperature and the driver's throttle reasons. That state is an observation, never
digested (DESIGN.md, "Identity and conditions"): two runs of one benchmark keep their
digests whatever state they met. But a run whose GPU was held down while it was timed
measured the GPU's state, not the kernel, so no verdict is drawn from it: it is
*degraded*. :func:`degraded_reason` is the one rule, used by the harness summary,
``validate``, compare, history, the gate and the dashboard.

:func:`sample_gpu` records that state around any timed loop (the harness's, or a team's own
``do_bench``), through NVML (``nvidia-ml-py``, imported only when a sampler starts);
:func:`gpu_settings` reads the settings that belong in the environment instead
(docs/conditions.md says which fact goes where, and why).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .nvml import GpuStateWarning, gpu_settings
from .sampler import DEFAULT_INTERVAL_S, GpuSampler, sample_gpu

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEGRADED_CLOCK_FRACTION",
    "IDLE_REASON",
    "SETTING_REASONS",
    "GpuSampler",
    "GpuStateWarning",
    "degraded_reason",
    "gpu_settings",
    "record_degraded_reason",
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


def degraded_reason(spec: Mapping[str, Any]) -> str | None:
    """Why a run's timing is unfit to compare, from the state it recorded; None when fit.

    A run is degraded when its GPU gave any throttle reason other than idle
    (:data:`IDLE_REASON`) and the settings' own (:data:`SETTING_REASONS`) during the timed
    loop, or when its smallest SM clock sample fell below :data:`DEGRADED_CLOCK_FRACTION`
    of its largest. A run that recorded no state is not degraded: nothing says it was.

    Args:
        spec: The run's ``spec`` as a JSON value (a validated record's).

    Returns:
        One line naming each cause with its numbers, such as ``throttled (HwSlowdown,
        SwPowerCap); SM clock 1410-1980 MHz, its smallest 71% of its largest (below
        90%)``, or None.
    """
    conditions = spec.get("conditions")
    gpu = conditions.get("gpu") if isinstance(conditions, Mapping) else None
    if not isinstance(gpu, Mapping):
        return None
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
    return "; ".join(causes) or None


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
