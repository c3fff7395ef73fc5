"""Measured statistics as a run's timing and measurements, in the unit the file declares.

A tool writes a latency in its own unit (nvbench and pytest-benchmark in seconds, Google
Benchmark in its ``time_unit``, TritonBench in ms). The run keeps each statistic twice:
``timing.latencyNs`` in integer nanoseconds (what compare and the dashboard read: the
value times the unit's nanoseconds, rounded to the nearest integer, as the semantic
checks compute it) and a ``latency`` measurement holding the file's number unchanged, in
the file's unit, so no digit is lost to the rounding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final, get_args

from .._base.display import short_repr
from .._base.schemas import SAFE_INT
from .._base.units import NS_PER, UNITS
from ..models import Statistic

__all__ = ["Timing", "extend", "measurement", "timing", "to_ns"]

Timing = tuple[dict[str, Any] | None, list[dict[str, Any]]]

# The schema's statistics in the order a run lists them (the generated enum's order).
_ORDER: Final = get_args(Statistic)


def to_ns(value: float, unit: str, what: str) -> int:
    """A duration in ``unit`` as integer nanoseconds, rounded to nearest.

    Raises:
        ValueError: for a negative or non-finite duration, or one beyond 2^53 - 1 ns.
    """
    ns = float(value) * NS_PER[unit]
    if not math.isfinite(ns) or ns < 0:
        raise ValueError(f"{what} is {short_repr(value)} {unit}; expected a duration >= 0")
    if ns > SAFE_INT:
        raise ValueError(f"{what} {short_repr(value)} {unit} is beyond 2^53 - 1 ns")
    return round(ns)


def _usable(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def measurement(metric: str, statistic: str, unit: str, value: Any) -> dict[str, Any] | None:
    """One measurement, or None when ``value`` is no finite number >= 0 (the file's
    value then stays in ``sourceNative.metrics`` only)."""
    if unit not in UNITS or not _usable(value):
        return None
    return {"metric": metric, "statistic": statistic, "unit": unit, "value": value}


def timing(
    statistics: Mapping[str, Any],
    unit: str,
    *,
    primary: str,
    samples: int | None = None,
    where: str = "latency",
) -> Timing:
    """A run's timing and latency measurements from statistics of one timer.

    Args:
        statistics: Schema statistic (``mean``, ``p25``...) to the value in ``unit``.
        unit: The file's time unit (``ns``, ``us``, ``ms``, ``s``).
        primary: The statistic that represents the run; it must be among them.
        samples: How many timed samples the statistics come from, when known.
        where: The file's name for the primary value, for messages.

    Returns:
        ``(timing, measurements)``. A statistic that is no duration (negative, NaN) is
        left out of both; its value stays in the run's ``sourceNative.metrics``.

    Raises:
        ValueError: when the primary statistic is missing or no usable duration.
    """
    value = statistics.get(primary)
    if not _usable(value):
        raise ValueError(f"{where} is {short_repr(value)}; expected a duration >= 0")
    latency: dict[str, int] = {}
    measurements: list[dict[str, Any]] = []
    for statistic in _ORDER:
        raw = statistics.get(statistic)
        if raw is None or not _usable(raw):
            continue
        latency[statistic] = to_ns(raw, unit, where if statistic == primary else statistic)
        measurements.append(
            {"metric": "latency", "statistic": statistic, "unit": unit, "value": raw}
        )
    result: dict[str, Any] = {"latencyNs": latency, "primaryStatistic": primary}
    if samples is not None and 1 <= samples <= SAFE_INT:
        result["samples"] = samples
    return result, measurements


def extend(measurements: list[dict[str, Any]], extra: Iterable[dict[str, Any] | None]) -> None:
    """Append the measurements that are not None and whose metric and statistic are new."""
    seen = {(m["metric"], m["statistic"]) for m in measurements}
    for item in extra:
        if item is not None and (item["metric"], item["statistic"]) not in seen:
            seen.add((item["metric"], item["statistic"]))
            measurements.append(item)
