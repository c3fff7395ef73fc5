"""A TritonBench point (one provider at one x value) as a draft run.

The latency (ms, a median) is the timing; TFLOPS, GB/s and the speedup over the
baseline each become a measurement of their own (``throughput`` in TFLOP/s,
``bandwidth`` in GB/s, ``speedup`` in 1); every value keeps its TritonBench name in
``sourceNative.metrics``. ``accuracy`` (the output checked against the baseline's)
decides the status: 1 is ``passed``, 0 a ``failed`` run (``mismatch``) that keeps its
latency only in ``sourceNative.metrics``, none ``unverified``. A provider whose run
raised is a failed run with TritonBench's message.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

import attrs

from ..._base.display import short_repr
from ..._base.names import slug
from .._draft import Draft, Shared
from .._keys import annotation_value, flat_parameters, metric_entries, operation
from .._stats import extend, measurement, timing
from .._values import parse_number
from ..gpus import lookup_gpu
from ._tables import MODES, Point

__all__ = ["PROTOCOL", "REPOSITORY", "SOURCE", "Options", "draft", "environment"]

REPOSITORY: Final = "https://github.com/meta-pytorch/tritonbench"
SOURCE: Final = "tritonbench"
# TritonBench metric -> (record metric, unit).
_MEASURED: Final = {
    "tflops": ("throughput", "TFLOP/s"),
    "gbps": ("bandwidth", "GB/s"),
    "speedup": ("speedup", "1"),
}
_TUPLE: Final = re.compile(r"\((.*)\)\Z", re.DOTALL)

PROTOCOL: Final = Shared(
    kind="BenchmarkProtocol",
    base="tritonbench-do-bench",
    title="TritonBench · do_bench latency",
    spec={
        "harness": {"name": "TritonBench", "repository": REPOSITORY},
        "measurement": {
            "timer": "cuda_events",
            "primaryStatistic": "median",
            "quantileMethod": "lower",
            "l2Flush": {"policy": "buffer_write"},
            "notes": (
                "TritonBench latency: samples from its do_bench (CUDA events, the L2"
                " cleared by writing a buffer before each call, as triton.testing.do_bench"
                " does); samples beyond 1.5 IQR of the quartiles removed; the median_low"
                " of the rest, in ms."
            ),
        },
        "comparability": {
            "family": "tritonbench_do_bench",
            "notes": (
                "TritonBench's output does not record --latency-measure-mode, --warmup,"
                " --iter or --precision: files written under other settings get this"
                " protocol too; keep them apart with --param on import."
            ),
        },
    },
)


@attrs.frozen(kw_only=True)
class Options:
    """What the file does not say: when it was measured, and extra workload parameters."""

    observed: datetime
    parameters: dict[str, Any] = attrs.field(factory=dict)


def environment(gpu: str) -> tuple[Shared, bool]:
    """The environment of a GPU named on the command line; and whether it is known."""
    info = lookup_gpu(gpu)
    hardware: dict[str, Any] = {"vendor": info.vendor if info else "unknown", "product": gpu}
    if info is not None and info.architecture is not None:
        hardware["architecture"] = info.architecture
    shared = Shared(
        kind="ExecutionEnvironment",
        base=f"tritonbench-{slug(gpu)}",
        title=f"TritonBench host · {gpu}",
        spec={"hardware": hardware, "software": {}},
    )
    return shared, info is not None and info.architecture is not None


def _x_parameters(label: str, x: str) -> dict[str, Any]:
    """``(M, N, K)`` at ``(256, 256, 256)`` is M, N and K; any other x is one parameter
    named by its label (``x_val`` in the JSON form, which writes no label)."""
    name = label or "x_val"
    names, values = _TUPLE.match(name), _TUPLE.match(x)
    if names and values:
        keys = [k.strip() for k in names.group(1).split(",")]
        items = [v.strip() for v in values.group(1).split(",")]
        if len(keys) == len(items) and all(keys):
            return {k: _scalar(v) for k, v in zip(keys, items, strict=True)}
    if values and not names:
        items = [v.strip() for v in values.group(1).split(",")]
        return {f"{name}/{i}": _scalar(v) for i, v in enumerate(items)}
    return {name: _scalar(x)}


def _scalar(text: str) -> Any:
    number = parse_number(text, "x")
    return text if number is None else number


def _number(value: Any, what: str) -> float | int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        number = parse_number(value.strip(), what)
        if number is not None:
            return number
    return None


def _failure(metrics: dict[str, Any]) -> dict[str, str] | None:
    """TritonBench writes a failed provider's error in its first metric, the rest empty."""
    values = list(metrics.values())
    if not values or not isinstance(values[0], str) or _number(values[0], "metric") is not None:
        return None
    if any(v is not None for v in values[1:]):
        return None
    message = values[0].strip() or "error"
    reason = "out_of_memory" if "out of memory" in message.lower() else "error"
    return {"reason": reason, "message": message[:4096]}


def _status(metrics: dict[str, Any]) -> tuple[str, dict[str, str] | None]:
    accuracy = _number(metrics.get("accuracy"), "accuracy")
    if accuracy is None:
        return "unverified", None
    if accuracy == 1:
        return "passed", None
    if accuracy == 0:
        return "failed", {
            "reason": "mismatch",
            "message": "TritonBench accuracy 0: the output differs from the baseline's",
        }
    raise ValueError(f"accuracy is {short_repr(accuracy)}; expected 1 or 0")


def draft(
    point: Point,
    *,
    op: str,
    mode: str,
    options: Options,
    environment: Shared,
    source_hash: str | None,
) -> Draft:
    """The run of one point.

    Raises:
        ValueError: for a metric that cannot be used (a latency that is no duration, an
            accuracy other than 1 or 0) or an x no parameter can hold.
    """
    if all(v is None for v in point.metrics.values()):
        raise ValueError(
            f"no value for provider {short_repr(point.provider)} at x {short_repr(point.x)}"
        )
    parameters = flat_parameters({**_x_parameters(point.label, point.x), **options.parameters}, "x")
    workload = {"operation": operation(op), "pass": MODES[mode], "parameters": parameters}
    metrics: dict[str, Any] = {}
    for key, value in {**point.shared, **point.metrics}.items():
        metrics.update(metric_entries(key, value))
    failure = _failure(point.metrics)
    status = "failed"
    run_timing = None
    measurements: list[dict[str, Any]] = []
    if failure is None:
        status, failure = _status(point.metrics)
    if failure is None:
        latency = _number(point.metrics.get("latency"), "latency")
        if latency is not None or "latency" in point.metrics:
            run_timing, measurements = timing(
                {"median": latency}, "ms", primary="median", where="latency"
            )
        for name, (metric, unit) in _MEASURED.items():
            value = _number(point.metrics.get(name), name)
            extend(measurements, [measurement(metric, "median", unit, value)])
    annotations = {}
    if source_hash:
        annotations["tritonbench/kernel_source_hash"] = annotation_value(source_hash)
    bench = f"{op}_{mode}"
    return Draft(
        where=point.where,
        name=("tritonbench", op, mode, point.provider, point.x),
        title=f"{op} {mode} · {point.provider} · {point.x}",
        protocol=PROTOCOL,
        environment=environment,
        observed=options.observed,
        workload=workload,
        implementation={"provider": point.provider[:128] or "unknown"},
        status=status,
        native={
            "source": SOURCE,
            "benchmark": bench[:1024],
            "externalId": f"tritonbench_{bench}[x_{point.x}-{point.provider}]"[:1024],
            "metrics": metrics,
        },
        timing=run_timing,
        measurements=measurements,
        failure=failure,
        annotations=annotations,
    )
