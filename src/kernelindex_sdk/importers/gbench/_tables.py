"""Google Benchmark's protocols (one per way of timing) and the environment its context
describes."""

from __future__ import annotations

from typing import Any, Final

from ..._base.names import slug
from .._draft import Shared

__all__ = ["REPOSITORY", "SOURCE", "environment", "protocol"]

REPOSITORY: Final = "https://github.com/google/benchmark"
SOURCE: Final = "google-benchmark"

# What real_time holds, and which clock decides the iteration count, by time type.
_REAL: Final = {
    "": (
        "real time (a monotonic host clock) per iteration, the mean over the iterations"
        " of a repetition; the iteration count is chosen by CPU time (Google"
        " Benchmark's default)"
    ),
    "real_time": (
        "real time (a monotonic host clock) per iteration, the mean over the iterations"
        " of a repetition; the iteration count is chosen by real time (UseRealTime)"
    ),
    "manual_time": (
        "the time the benchmark itself reported per iteration (UseManualTime,"
        " State::SetIterationTime), the mean over the iterations of a repetition; the"
        " file does not say which clock the benchmark read"
    ),
}
_CPU: Final = {
    False: "cpu_time measurements: CPU time of the benchmark's threads",
    True: "cpu_time measurements: CPU time of the whole process (MeasureProcessCPUTime)",
}


def protocol(time_types: tuple[str, ...], build_type: str | None) -> Shared:
    """The protocol of one way of timing: real, manual or default time, thread or
    process CPU time, and the library's build type (a debug build times slower).

    Each combination is a family of its own, so that runs timed one way never pair with
    runs timed another.
    """
    real = next((t for t in time_types if t in ("real_time", "manual_time")), "")
    process = "process_time" in time_types
    parts = ["google_benchmark", *([real] if real else []), *(["process_time"] if process else [])]
    family = "_".join(parts)
    build = (
        f"library_build_type {build_type}"
        if build_type
        else "library build type not recorded in the file"
    )
    spec: dict[str, Any] = {
        "harness": {"name": "Google Benchmark", "repository": REPOSITORY},
        "measurement": {
            "timer": "wall_clock",
            "primaryStatistic": "mean",
            "notes": f"Latency: {_REAL[real]}. {_CPU[process]}. {build}.",
        },
        "comparability": {
            "family": family,
            "notes": (
                "With repetitions, mean, median and stddev are Google Benchmark's"
                " aggregates over the repetitions; without, the run is one repetition."
                " min_time, iterations and repetitions set how long it measures and stay"
                " out of the protocol (they are in each run's sourceNative.metrics)."
            ),
        },
    }
    base = "gbench-" + "-".join(p.replace("_", "-") for p in parts[1:]) if parts[1:] else "gbench"
    title = " · ".join(["Google Benchmark", real.replace("_", " ") or "default timing"])
    return Shared(kind="BenchmarkProtocol", base=base, title=title, spec=spec)


def _size(value: Any) -> str:
    for unit, factor in (("MiB", 2**20), ("KiB", 2**10)):
        if isinstance(value, int) and value >= factor and value % factor == 0:
            return f"{value // factor} {unit}"
    return f"{value} B"


def _cache_name(cache: dict[str, Any]) -> str:
    kind = {"Data": "d", "Instruction": "i"}.get(str(cache.get("type")), "")
    return f"L{cache.get('level')}{kind} {_size(cache.get('size'))}"


def environment(context: dict[str, Any], machine: str | None) -> Shared:
    """The CPU that ran the benchmarks.

    Google Benchmark writes no CPU model: ``machine`` names it when the caller knows it;
    otherwise the product is described by what the context says (``CPU: 2 CPUs, L1d 32
    KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB``). The clock (``mhz_per_cpu``, measured each
    run) and the host name are observations, kept as annotations.
    """
    hardware: dict[str, Any] = {"vendor": "cpu"}
    cpus = context.get("num_cpus")
    listed = context.get("caches")
    caches = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    if machine:
        product = machine
    else:
        parts = [f"{cpus} CPUs"] if isinstance(cpus, int) else []
        parts += [_cache_name(c) for c in caches]
        product = "CPU: " + ", ".join(parts) if parts else "CPU"
    hardware["product"] = product[:253]
    if isinstance(cpus, int) and not isinstance(cpus, bool) and cpus >= 0:
        hardware["multiprocessors"] = cpus
    sizes = [
        (c.get("level"), c.get("size"))
        for c in caches
        if isinstance(c.get("level"), int) and isinstance(c.get("size"), int)
    ]
    if sizes:
        hardware["l2CacheBytes"] = max(sizes)[1]
    return Shared(
        kind="ExecutionEnvironment",
        base=f"gbench-{slug(product)}",
        title=f"Google Benchmark host · {product}",
        spec={"hardware": hardware, "software": {}},
    )
