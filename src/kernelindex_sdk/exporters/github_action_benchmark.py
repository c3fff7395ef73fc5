"""github-action-benchmark's custom JSON, ``customSmallerIsBetter``: what its action reads
to draw history charts on a repository's GitHub Pages.

An array of ``{"name", "unit", "value", "range", "extra"}``
(https://github.com/benchmark-action/github-action-benchmark#examples). Its tool setting
says whether smaller or bigger is better for the whole file, so this writer keeps the
metrics where smaller is better: the latency (ns) and every other duration or size
(``cpu_time`` in ns, ``memory`` in B), each its own entry. ``range`` is ``± stddev``, else
the bounds (``p20-p80``); ``extra`` names the run, the GPU and the commit.

What is lost: rates (bandwidth, throughput) and dimensionless values (speedup), whose
larger values are better; every statistic but the one shown; failed runs; the protocol
but its family (in the name); annotations. A second run of one name is left out, and
``on_notice`` hears of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from ._points import Value, points

__all__ = ["github_action_benchmark_chunks"]

_SMALLER_IS_BETTER: Final = ("time", "bytes")


def _number(value: float) -> str:
    return f"{value:.6g}"


def _range(value: Value) -> str | None:
    if value.stddev is not None:
        return f"± {_number(value.stddev)}"
    if value.lower is not None and value.upper is not None:
        return f"{_number(value.lower)} - {_number(value.upper)}"
    return None


def github_action_benchmark_chunks(
    records: Iterable[Any], *, on_notice: Callable[[str], None] | None = None
) -> Iterator[str]:
    """The JSON array of ``records``' smaller-is-better values, in pieces.

    Args:
        records: Record bundles or single documents, as JSON values.
        on_notice: Hears, one line each, of a run left out because its name already
            has a value.
    """
    seen: dict[str, str] = {}
    first = True
    yield "["
    for point in points(records):
        for value in point.values:
            if value.dimension not in _SMALLER_IS_BETTER:
                continue
            name = (
                point.benchmark
                if value.metric == "latency"
                else f"{point.benchmark} {value.metric}"
            )
            if name in seen:
                earlier = seen[name]
                if on_notice is not None:
                    on_notice(
                        f"run {point.run!r} left out: {name!r} already has the value of run"
                        f" {earlier!r} (one value per name; export one commit and machine)"
                    )
                continue
            seen[name] = point.run
            entry: dict[str, Any] = {"name": name, "unit": value.unit, "value": value.value}
            shown = _range(value)
            if shown is not None:
                entry["range"] = shown
            extra = [f"run {point.run}", f"{value.statistic}"]
            if point.hardware:
                extra.append(point.hardware)
            if point.commit:
                extra.append(f"commit {point.commit}")
            entry["extra"] = "\n".join(extra)
            yield ("\n  " if first else ",\n  ") + json.dumps(entry, ensure_ascii=False)
            first = False
    yield "\n]\n" if not first else "]\n"
