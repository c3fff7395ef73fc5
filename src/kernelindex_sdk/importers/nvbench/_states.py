"""One nvbench state (a benchmark at one point of its axes, on one device) as drafts:
one run per measurement the state holds (cold, batch, CPU only), or one failed run for a
skipped state."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Final

import attrs

from ..._base.display import short_repr
from ..._base.names import slug
from .._draft import Draft, Rejected, Shared, Where
from .._jsonfile import array_at
from .._keys import annotation_key, annotation_value, flat_parameters, metric_entries, operation
from .._stats import extend, measurement, timing
from ..gpus import lookup_gpu
from ._tables import DEVICE_MAPPED, METHODS, SOURCE, Method

__all__ = ["FileContext", "state_entries"]

# Keys of a benchmark or state object that are not settings.
_BENCH_KEYS: Final = frozenset({"name", "devices", "axes", "states"})
_STATE_KEYS: Final = frozenset(
    {"name", "device", "axis_values", "summaries", "is_skipped", "skip_reason"}
)
_GMEM: Final = ("nv/gmem/reads/", "nv/gmem/writes/")


@attrs.frozen(kw_only=True)
class FileContext:
    """What every state of one file shares."""

    devices: dict[int, dict[str, Any]]
    provider: str
    observed: datetime
    annotations: dict[str, str]
    find_line: Callable[[str], int | None]


def typed(item: dict[str, Any], what: str) -> Any:
    """An nvbench named value (``{"name", "type", "value"}``) as its JSON value.

    nvbench writes every value as a string (an int64 would not survive a double);
    float64 text is C++'s (``nan``, ``inf`` and ``-inf`` included).

    Raises:
        ValueError: for an unknown type or a value that does not read as its type.
    """
    kind, text = item.get("type"), item.get("value")
    if not isinstance(text, str):
        if kind in ("int64", "float64") and isinstance(text, (int, float)):
            return text
        raise ValueError(f"{what}: value is {short_repr(text)}, expected a string")
    try:
        if kind == "int64":
            return int(text)
        if kind == "float64":
            return float(text)
    except ValueError:
        raise ValueError(f"{what}: {short_repr(text)} is no {kind}") from None
    if kind == "string":
        return text
    raise ValueError(f"{what}: unknown value type {short_repr(kind)}")


def _summaries(state: dict[str, Any]) -> dict[str, Any]:
    """Each summary's values by metric key: ``tag`` for its ``value``, ``tag/name`` else."""
    values: dict[str, Any] = {}
    for i, summary in enumerate(array_at(state, "summaries")):
        if not isinstance(summary, dict) or not isinstance(summary.get("tag"), str):
            raise ValueError(f"summaries/{i} has no tag")  # noqa: TRY004 (an entry's content)
        tag = summary["tag"]
        for item in array_at(summary, "data"):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise ValueError(f"summaries/{i}: a data item has no name")  # noqa: TRY004 (an entry's content)
            name = item["name"]
            values[tag if name == "value" else f"{tag}/{name}"] = typed(
                item, f"summaries/{i} ({tag})"
            )
    return values


def _environment(device: dict[str, Any]) -> Shared:
    name = device.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"device {short_repr(device.get('id'))} has no name")
    info = lookup_gpu(name)
    hardware: dict[str, Any] = {"vendor": info.vendor if info else "nvidia", "product": name}
    sm = device.get("sm_version")
    if isinstance(sm, int) and not isinstance(sm, bool) and sm > 0:
        hardware["architecture"] = f"sm_{sm // 10}"
    for ours, theirs in (
        ("memoryBytes", "global_memory_size"),
        ("multiprocessors", "number_of_sms"),
        ("l2CacheBytes", "l2_cache_size"),
    ):
        value = device.get(theirs)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            hardware[ours] = value
    return Shared(
        kind="ExecutionEnvironment",
        base=f"nvbench-{slug(name)}",
        title=f"nvbench host · {name}",
        spec={"hardware": hardware, "software": {}},
    )


def device_annotations(device: dict[str, Any]) -> dict[str, str]:
    """The device's fields the environment does not hold, as annotations."""
    return {
        annotation_key(f"nvbench/device/{key}"): annotation_value(value)
        for key, value in device.items()
        if key not in DEVICE_MAPPED and value is not None
    }


def _parameters(state: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for i, item in enumerate(array_at(state, "axis_values")):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"axis_values/{i} has no name")  # noqa: TRY004 (an entry's content)
        values[item["name"]] = typed(item, f"axis_values/{i}")
    return flat_parameters(values, "axis_values")


def _metrics(
    bench: dict[str, Any], state: dict[str, Any], summaries: dict[str, Any]
) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for key, value in bench.items():
        if key not in _BENCH_KEYS:
            metrics.update(metric_entries(f"benchmark/{key}", value))
    for key, value in state.items():
        if key not in _STATE_KEYS:
            metrics.update(metric_entries(f"state/{key}", value))
    for key, value in summaries.items():
        metrics.update(metric_entries(key, value))
    return metrics


def _bytes_moved(summaries: dict[str, Any]) -> int | None:
    counts = [
        v
        for k, v in summaries.items()
        if k.startswith(_GMEM) and isinstance(v, int) and not isinstance(v, bool)
    ]
    return sum(counts) if counts else None


def _method_values(method: Method, summaries: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summaries.items() if k.startswith(method.prefix)}


def _measured(
    method: Method, summaries: dict[str, Any]
) -> tuple[str, dict[str, Any] | None, list[dict[str, Any]], dict[str, Any] | None]:
    """Status, timing, measurements and failure of one method's run."""
    samples = summaries.get(f"{method.prefix}sample_size")
    statistics = method.statistics(method.timed, summaries)
    if "mean" not in statistics:
        if samples == 0:
            failure = {
                "reason": "timeout",
                "message": f"nvbench recorded no {method.title} samples"
                f" ({method.prefix}sample_size is 0)",
            }
            return "failed", None, [], failure
        raise ValueError(f"no {method.timed}mean in the state's summaries")
    count = samples if isinstance(samples, int) and not isinstance(samples, bool) else None
    run_timing, measurements = timing(
        statistics, "s", primary="mean", samples=count, where=f"{method.timed}mean"
    )
    for prefix, metric in method.other:
        for statistic, value in method.statistics(prefix, summaries).items():
            extend(measurements, [measurement(metric, statistic, "s", value)])
    bandwidth = summaries.get(f"{method.prefix}bw/global/bytes_per_second")
    extend(measurements, [measurement("bandwidth", "mean", "B/s", bandwidth)])
    return "unverified", run_timing, measurements, None


def state_entries(
    context: FileContext, b: int, bench: dict[str, Any], s: int, state: Any
) -> Iterator[Draft | Rejected]:
    """The drafts of one state, or why it gives none."""
    where = Where(pointer=f"/benchmarks/{b}/states/{s}", find_line=context.find_line)
    try:
        yield from _drafts(context, bench, state, where)
    except ValueError as err:
        yield Rejected(where, str(err))


def _drafts(
    context: FileContext, bench: dict[str, Any], state: Any, where: Where
) -> Iterator[Draft]:
    if not isinstance(state, dict):
        raise ValueError(f"a state is an object, got {short_repr(state)}")  # noqa: TRY004 (an entry's content)
    name = bench.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("the benchmark has no name")
    state_name = state["name"] if isinstance(state.get("name"), str) else ""
    device_id = state.get("device")
    device = context.devices.get(device_id) if isinstance(device_id, int) else None
    if device is None:
        raise ValueError(f"device {short_repr(state.get('device'))} is not in /devices")
    summaries = _summaries(state)
    workload: dict[str, Any] = {
        "operation": operation(name),
        "pass": "forward",
        "parameters": _parameters(state),
    }
    moved = _bytes_moved(summaries)
    if moved is not None:
        workload["bytesMoved"] = moved
    # Summaries of no one method (element counts, memory traffic, CUPTI counters, the
    # benchmark's own) belong to every run of the state.
    prefixes = tuple(m.prefix for m in METHODS)
    shared = {k: v for k, v in summaries.items() if not k.startswith(prefixes)}
    annotations = {**context.annotations, **device_annotations(device)}
    base = {
        "where": where,
        "environment": _environment(device),
        "observed": context.observed,
        "workload": workload,
        "implementation": {"provider": context.provider},
        "annotations": annotations,
    }
    skipped = state.get("is_skipped") is True
    methods = [m for m in METHODS if any(k.startswith(m.prefix) for k in summaries)]
    if skipped or not methods:
        if not skipped:
            raise ValueError("no measurement: no nv/cold, nv/batch or nv/cpu_only summaries")
        reason = state.get("skip_reason")
        message = reason if isinstance(reason, str) and reason.strip() else "skipped by nvbench"
        method = methods[0] if methods else METHODS[0]
        yield _draft(
            base,
            method,
            name,
            state_name,
            status="failed",
            failure={"reason": "unsupported", "message": message[:4096]},
            metrics=_metrics(bench, state, summaries),
        )
        return
    for method in methods:
        status, run_timing, measurements, failure = _measured(method, summaries)
        own = {**shared, **_method_values(method, summaries)}
        yield _draft(
            base,
            method,
            name,
            state_name,
            status=status,
            timing=run_timing,
            measurements=measurements,
            failure=failure,
            metrics=_metrics(bench, state, own),
        )


def _draft(
    base: dict[str, Any],
    method: Method,
    name: str,
    state_name: str,
    *,
    status: str,
    metrics: dict[str, Any],
    timing: dict[str, Any] | None = None,
    measurements: list[dict[str, Any]] | None = None,
    failure: dict[str, Any] | None = None,
) -> Draft:
    external = f"{name}/{state_name}/{method.key}" if state_name else f"{name}/{method.key}"
    return Draft(
        name=("nvbench", name, state_name, method.key),
        title=" · ".join(p for p in (name, state_name, method.title) if p),
        protocol=Shared(
            kind="BenchmarkProtocol",
            base=f"nvbench-{method.key.replace('_', '-')}",
            title=f"nvbench · {method.title} measurement",
            spec=method.protocol,
        ),
        status=status,
        native={
            "source": SOURCE,
            "benchmark": name[:1024],
            "externalId": external[:1024],
            "metrics": metrics,
        },
        timing=timing,
        measurements=measurements or [],
        failure=failure,
        **base,
    )


def provider_of(argv: Any) -> str:
    """The benchmark program's file name (``argv[0]``), or ``nvbench`` when unknown."""
    if isinstance(argv, list) and argv and isinstance(argv[0], str) and argv[0].strip():
        return os.path.basename(argv[0].rstrip("/")) or "nvbench"
    return "nvbench"
