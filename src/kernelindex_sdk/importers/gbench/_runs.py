"""A Google Benchmark instance as drafts of runs.

- With aggregates (repetitions): one run, its timing the ``_mean``, ``_median`` and
  ``_stddev`` rows' real time, the repetition rows kept in ``sourceNative.metrics``.
- Without: one run per repetition row (replicates of one point), its timing the row's
  real time per iteration, a mean over the row's iterations.
- A row with ``error_occurred`` makes a failed run (``error``), one with ``skipped`` a
  failed run (``unsupported``), each with the benchmark's message.

Real time is the latency. CPU time is a second quantity of the same iterations, kept as
``cpu_time`` measurements: compare and the dashboard read the latency, so a CPU time
never pairs with a real time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Final

import attrs

from ..._base.display import short_repr
from ..._base.units import NS_PER
from .._draft import Draft, Rejected, Shared, Where
from .._keys import flat_parameters, metric_entries, operation
from .._stats import extend, measurement, timing
from ._names import RunName, parse_run_name
from ._rows import Instance, rows_of
from ._tables import SOURCE, protocol

__all__ = ["FileContext", "instance_entries"]

# Row fields that are not counters.
_FIELDS: Final = frozenset(
    {
        "name",
        "family_index",
        "per_family_instance_index",
        "run_name",
        "run_type",
        "repetitions",
        "repetition_index",
        "threads",
        "aggregate_name",
        "aggregate_unit",
        "error_occurred",
        "error_message",
        "skipped",
        "skip_message",
        "iterations",
        "real_time",
        "cpu_time",
        "time_unit",
        "cpu_coefficient",
        "real_coefficient",
        "big_o",
        "rms",
        "label",
        "allocs_per_iter",
        "max_bytes_used",
        "total_allocated_bytes",
        "net_heap_growth",
    }
)
# Fields of the instance as a whole, written once at the top of the run's metrics.
_INSTANCE: Final = ("family_index", "per_family_instance_index", "repetitions", "threads")
# Fields that only say where a row sits, or what its key already says.
_STRUCTURE: Final = frozenset(
    {"name", "run_name", "run_type", "aggregate_name", "repetition_index"}
)
# Aggregates that are statistics of the repetitions' times.
_TIME_STATISTICS: Final = {"mean": "mean", "median": "median", "stddev": "stddev"}


@attrs.frozen(kw_only=True)
class FileContext:
    """What every instance of one file shares."""

    provider: str
    observed: datetime
    environment: Shared
    build_type: str | None
    annotations: dict[str, str]
    find_line: Callable[[str], int | None]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _workload(name: RunName, row: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for position, (arg_name, value) in enumerate(name.args):
        values[arg_name if arg_name else f"arg{position}"] = value
    threads = _int(row.get("threads"))
    if threads is None:
        threads = next((int(v) for k, v in name.options if k == "threads"), None)
    if threads is not None:
        values["threads"] = threads
    return {
        "operation": operation(name.family),
        "pass": "forward",
        "parameters": flat_parameters(values, "the run name's arguments"),
    }


def _row_metrics(prefix: str, row: dict[str, Any]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for key, value in row.items():
        if key in _STRUCTURE or key in _INSTANCE:
            continue
        metrics.update(metric_entries(f"{prefix}{key}", value))
    return metrics


def _unit(row: dict[str, Any]) -> str:
    unit = row.get("time_unit")
    if not isinstance(unit, str) or unit not in NS_PER:
        raise ValueError(f"time_unit is {short_repr(unit)}; expected 'ns', 'us', 'ms' or 's'")
    return str(unit)


def _failure(rows: list[tuple[int, dict[str, Any]]]) -> tuple[int, dict[str, str]] | None:
    for i, row in rows:
        if row.get("error_occurred") is True:
            message = row.get("error_message")
            text = message if isinstance(message, str) and message.strip() else "error"
            return i, {"reason": "error", "message": text[:4096]}
        if row.get("skipped") is True:
            message = row.get("skip_message")
            text = message if isinstance(message, str) and message.strip() else "skipped"
            return i, {"reason": "unsupported", "message": text[:4096]}
    return None


@attrs.frozen
class _Run:
    """One run's measured part: what differs between aggregated, single and failed."""

    where: int
    suffix: tuple[str, ...]
    status: str
    metrics: dict[str, Any]
    timing: dict[str, Any] | None = None
    measurements: list[dict[str, Any]] = attrs.field(factory=list)
    failure: dict[str, str] | None = None


def _aggregated(instance: Instance) -> _Run:
    where, mean_row = instance.aggregates["mean"]
    unit = _unit(mean_row)
    statistics = {
        ours: instance.aggregates[theirs][1].get("real_time")
        for theirs, ours in _TIME_STATISTICS.items()
        if theirs in instance.aggregates
    }
    samples = len(instance.rows) or _int(mean_row.get("repetitions"))
    run_timing, measurements = timing(
        statistics, unit, primary="mean", samples=samples, where="real_time of the _mean row"
    )
    for theirs, ours in _TIME_STATISTICS.items():
        if theirs in instance.aggregates:
            row = instance.aggregates[theirs][1]
            extend(measurements, [measurement("cpu_time", ours, unit, row.get("cpu_time"))])
            if theirs != "stddev":
                bandwidth = row.get("bytes_per_second")
                extend(measurements, [measurement("bandwidth", ours, "B/s", bandwidth)])
    metrics: dict[str, Any] = {}
    for position, (_, row) in enumerate(instance.rows):
        index = _int(row.get("repetition_index"))
        metrics.update(_row_metrics(f"repetition/{position if index is None else index}/", row))
    for aggregate, (_, row) in instance.aggregates.items():
        metrics.update(_row_metrics(f"{aggregate}/", row))
    return _Run(where, (), "unverified", metrics, run_timing, measurements)


def _single(i: int, row: dict[str, Any], suffix: tuple[str, ...]) -> _Run:
    unit = _unit(row)
    run_timing, measurements = timing({"mean": row.get("real_time")}, unit, primary="mean")
    extend(
        measurements,
        [
            measurement("cpu_time", "mean", unit, row.get("cpu_time")),
            measurement("bandwidth", "mean", "B/s", row.get("bytes_per_second")),
        ],
    )
    return _Run(i, suffix, "unverified", _row_metrics("", row), run_timing, measurements)


def _measured(instance: Instance) -> Iterator[_Run]:
    failed = _failure(instance.rows)
    if failed is not None:
        i, failure = failed
        metrics = _row_metrics("", dict(instance.rows)[i])
        yield _Run(i, (), "failed", metrics, failure=failure)
    elif "mean" in instance.aggregates:
        yield _aggregated(instance)
    elif instance.rows:
        replicates = len(instance.rows) > 1
        for position, (i, row) in enumerate(instance.rows):
            index = _int(row.get("repetition_index"))
            suffix = (f"rep{position if index is None else index}",) if replicates else ()
            yield _single(i, row, suffix)
    else:
        raise ValueError(
            f"aggregates ({', '.join(instance.aggregates)}) without a _mean and without"
            " the repetitions they summarize"
        )


def _first_row(instance: Instance) -> dict[str, Any]:
    for _, row in (*instance.rows, *instance.aggregates.values()):
        return row
    return {}


def instance_entries(context: FileContext, instance: Instance) -> Iterator[Draft | Rejected]:
    """The drafts of one instance, and the rows it could not use."""
    for i, reason in instance.bad:
        yield Rejected(Where(pointer=f"/benchmarks/{i}", find_line=context.find_line), reason)
    if not instance.rows and not instance.aggregates:
        return
    first = _first_row(instance)
    name = parse_run_name(instance.key)
    try:
        workload = _workload(name, first)
        runs = list(_measured(instance))
    except ValueError as err:
        where = Where(pointer=f"/benchmarks/{instance.first}", find_line=context.find_line)
        others = [i for i, _ in rows_of(instance) if i != instance.first]
        pointers = ", ".join(f"/benchmarks/{i}" for i in others)
        rows = f" (and for {pointers}, of the same instance)" if others else ""
        yield Rejected(where, f"{err}{rows}")
        return
    top: dict[str, Any] = {}
    for key in _INSTANCE:
        top.update(metric_entries(key, first.get(key)))
    # The options the run name carries (min_time:0.010, iterations:20, repeats:3).
    for key, text in name.options:
        top.update(metric_entries(f"run_name/{key}", float(text) if "." in text else int(text)))
    if name.time_types:
        top.update(metric_entries("run_name/time_type", "/".join(name.time_types)))
    for _, fit in instance.fits:
        aggregate = fit.get("aggregate_name") or str(fit.get("name", "")).rsplit("_", 1)[-1]
        top.update(_row_metrics(f"{aggregate}/", fit))
    spec_protocol = protocol(name.time_types, context.build_type)
    for run in runs:
        yield Draft(
            where=Where(pointer=f"/benchmarks/{run.where}", find_line=context.find_line),
            name=("gbench", instance.key, *run.suffix),
            title=" · ".join((instance.key, *run.suffix)),
            protocol=spec_protocol,
            environment=context.environment,
            observed=context.observed,
            workload=workload,
            implementation={"provider": context.provider},
            status=run.status,
            native={
                "source": SOURCE,
                "benchmark": name.family[:1024],
                "externalId": "#".join((instance.key, *run.suffix))[:1024],
                "metrics": {**top, **run.metrics},
            },
            timing=run.timing,
            measurements=run.measurements,
            failure=run.failure,
            annotations=context.annotations,
        )
