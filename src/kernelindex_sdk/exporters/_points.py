"""Records as the points a dashboard plots: a stable benchmark name, and one value per
metric with its bounds, in the metric's base unit.

Records arrive as JSON values, one at a time: bundles, or single documents (the store
exports the protocols and environments that came on their own before the runs). A run
is named by what makes its series (DESIGN.md): the workload, the implementation's
provider and the protocol's family, never its time or host, so the same benchmark at
another commit gets the same name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, Final

import attrs

from .. import digest
from .._base.units import BASE_UNIT, UNITS
from ..errors import KernelIndexError

__all__ = ["Point", "Value", "points"]

# Statistic pairs that bound a value, the first found used.
_BOUNDS: Final = (("p20", "p80"), ("p25", "p75"), ("p10", "p90"), ("min", "max"))
# The statistic a metric is shown by when the run's primary one is missing.
_FALLBACK: Final = ("median", "mean")


@attrs.frozen
class Value:
    """One metric of a run in its dimension's base unit, with optional bounds."""

    metric: str
    statistic: str
    unit: str
    dimension: str
    value: float
    lower: float | None = None
    upper: float | None = None
    stddev: float | None = None


@attrs.frozen
class Point:
    """A run as a dashboard point: its benchmark name and its values.

    Attributes:
        benchmark: The series' name (workload, provider, protocol family).
        run: The run's record name.
        values: The latency first, then the other metrics in the run's order.
        hardware: The environment's product, when the input carried it.
        commit: The run's ``kernelindex.dev/commit`` annotation, when set.
    """

    benchmark: str
    run: str
    values: tuple[Value, ...]
    hardware: str | None = None
    commit: str | None = None


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def benchmark_name(run: dict[str, Any], family: str | None, hardware: str | None = None) -> str:
    """``operation/pass/provider[k=v,...]@family (hardware)``: stable across commits.

    The hardware is part of the name: github-action-benchmark has no other place for it,
    and one Bencher report (one testbed) may then still hold an nvbench file's two GPUs.
    """
    spec = run.get("spec", {})
    workload = spec.get("workload") or {}
    implementation = spec.get("implementation") or {}
    operation = workload.get("operation") or spec.get("workloadDigest", "")[7:19]
    parts = [str(operation), str(workload.get("pass", ""))]
    provider = implementation.get("provider") or spec.get("implementationDigest", "")[7:19]
    parts.append(str(provider))
    params = workload.get("parameters") or {}
    text = "/".join(p for p in parts if p)
    if params:
        text += "[" + ",".join(f"{k}={_scalar_text(v)}" for k, v in sorted(params.items())) + "]"
    method = family or spec.get("protocolDigest", "")[7:19]
    text = f"{text}@{method}" if method else text
    return f"{text} ({hardware})" if hardware else text


def _value(metric: str, stats: dict[str, tuple[float, str]], primary: str) -> Value | None:
    chosen = next((s for s in (primary, *_FALLBACK) if s in stats), None)
    if chosen is None:
        return None

    def base(statistic: str) -> float | None:
        if statistic not in stats:
            return None
        raw, unit = stats[statistic]
        return float(raw) * UNITS[unit][1]

    raw, unit = stats[chosen]
    dimension = UNITS[unit][0]
    lower = upper = None
    for low, high in _BOUNDS:
        if low in stats and high in stats:
            lower, upper = base(low), base(high)
            break
    value = float(raw) * UNITS[unit][1]
    return Value(
        metric, chosen, BASE_UNIT[dimension], dimension, value, lower, upper, base("stddev")
    )


def _values(spec: dict[str, Any]) -> tuple[Value, ...]:
    """The latency (timing, in ns) first, then each other measured metric."""
    timing = spec.get("timing")
    found: list[Value] = []
    primary = timing["primaryStatistic"] if timing else "median"
    metrics: dict[str, dict[str, tuple[float, str]]] = {}
    if timing:
        metrics["latency"] = {s: (v, "ns") for s, v in timing["latencyNs"].items()}
    for m in spec.get("measurements", ()):
        # A latency measurement is the timing's statistic unrounded (the importers
        # keep the file's number so): it replaces the integer nanoseconds.
        if isinstance(m.get("unit"), str) and m["unit"] in UNITS:
            metrics.setdefault(m["metric"], {})[m["statistic"]] = (m["value"], m["unit"])
    for metric, stats in metrics.items():
        value = _value(metric, stats, primary)
        if value is not None:
            found.append(value)
    return tuple(found)


def _family(doc: Any) -> str | None:
    spec = doc.get("spec") if isinstance(doc, dict) else None
    family = ((spec or {}).get("comparability") or {}).get("family")
    return family if isinstance(family, str) else None


def _product(doc: Any) -> str | None:
    spec = doc.get("spec") if isinstance(doc, dict) else None
    product = ((spec or {}).get("hardware") or {}).get("product")
    return product if isinstance(product, str) else None


def _digest(kind: str, doc: dict[str, Any]) -> str:
    try:
        return digest.digest(kind, doc.get("spec"))
    except KernelIndexError:
        return ""  # a spec no digest can take names no run


def points(records: Iterable[Any]) -> Iterator[Point]:
    """The point of every run among ``records`` (bundles or single documents), in order.

    A protocol or environment that arrives on its own names the runs after it that
    refer to it by digest; a bundle's own protocol and environment name its run. A
    failed run, which measured nothing, gives no point.
    """
    families: dict[str, str] = {}
    products: dict[str, str] = {}
    for record in records:
        if not isinstance(record, dict):
            continue
        kind = record.get("kind")
        if kind == "BenchmarkProtocol" and (family := _family(record)):
            families[_digest("BenchmarkProtocol", record)] = family
            continue
        if kind == "ExecutionEnvironment" and (product := _product(record)):
            products[_digest("ExecutionEnvironment", record)] = product
            continue
        run = record if kind == "BenchmarkRun" else record.get("run")
        if not isinstance(run, dict) or not isinstance(run.get("spec"), dict):
            continue
        spec = run["spec"]
        values = _values(spec)
        if not values:
            continue
        family = _family(record.get("protocol")) or families.get(spec.get("protocolDigest", ""))
        product = _product(record.get("environment")) or products.get(
            spec.get("environmentDigest", "")
        )
        metadata = run.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        yield Point(
            benchmark=benchmark_name(run, family, product),
            run=str(metadata.get("name", "")),
            values=values,
            hardware=product,
            commit=annotations.get("kernelindex.dev/commit"),
        )
