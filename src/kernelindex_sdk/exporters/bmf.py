"""Bencher Metric Format (BMF): what ``bencher run --file`` reads.

One JSON object: benchmark name -> measure -> ``{"value", "lower_value", "upper_value"}``
(https://bencher.dev/docs/reference/bencher-metric-format/). A record's latency becomes
Bencher's built-in ``latency`` measure in nanoseconds; each other metric a measure named
by it (``cpu_time`` is ``cpu-time``) in its dimension's base unit (ns, B, B/s, FLOP/s,
1). The value is the run's primary statistic (median or mean where the metric lacks it),
the bounds its p20 and p80 (else p25 and p75, p10 and p90, min and max).

What BMF cannot hold is lost: the environment and the commit (Bencher takes them as the
report's testbed and branch), the protocol beyond its family's name, every other
statistic, failed runs, and all provenance and annotations. A BMF file holds one value
per benchmark and measure: a second run of one benchmark (another commit, host or
replicate) is left out, and ``on_notice`` hears of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ._points import Point, Value, points

__all__ = ["bmf_chunks", "measure_slug"]


def measure_slug(metric: str) -> str:
    """A record metric as a Bencher measure slug: ``latency``, ``cpu-time``."""
    return metric.replace("_", "-")


def _measure(value: Value) -> dict[str, float]:
    found = {"value": value.value}
    if value.lower is not None and value.upper is not None:
        found["lower_value"] = value.lower
        found["upper_value"] = value.upper
    return found


def bmf_chunks(
    records: Iterable[Any], *, on_notice: Callable[[str], None] | None = None
) -> Iterator[str]:
    """The BMF text of ``records``, in pieces, one benchmark at a time.

    Args:
        records: Record bundles or single documents, as JSON values.
        on_notice: Hears, one line each, of a run left out because its benchmark
            already has a value.
    """
    seen: dict[str, str] = {}
    first = True
    yield "{"
    for point in points(records):
        if _repeated(point, seen, on_notice):
            continue
        measures = {measure_slug(v.metric): _measure(v) for v in point.values}
        body = json.dumps({point.benchmark: measures}, ensure_ascii=False, indent=2)
        yield ("\n" if first else ",\n") + body[2:-2]
        first = False
    yield "\n}\n" if not first else "}\n"


def _repeated(point: Point, seen: dict[str, str], on_notice: Callable[[str], None] | None) -> bool:
    if point.benchmark not in seen:
        seen[point.benchmark] = point.run
        return False
    earlier = seen[point.benchmark]
    if on_notice is not None:
        on_notice(
            f"run {point.run!r} left out: {point.benchmark!r} already has the value of"
            f" run {earlier!r} (one value per benchmark; export one commit and machine)"
        )
    return True
