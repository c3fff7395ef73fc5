"""pytest-benchmark's pieces: the protocol its options make, the machine, the commit, and
one benchmark's run."""

from __future__ import annotations

import contextlib
import json
import re
from datetime import datetime
from typing import Any, Final

from ..._base.names import slug
from ...errors import KernelIndexError
from ...provenance import BRANCH, COMMIT, COMMIT_TIME, normalize_commit_time
from .._draft import Shared
from .._jsonfile import object_at
from .._keys import flat_parameters, metric_entries, operation
from .._observed import iso_instant

__all__ = [
    "DIRTY",
    "REPOSITORY",
    "SOURCE",
    "commit_annotations",
    "environment",
    "measured_statistics",
    "observed",
    "protocol",
    "workload",
]

REPOSITORY: Final = "https://github.com/ionelmc/pytest-benchmark"
SOURCE: Final = "pytest-benchmark"
#: The annotation that marks a run measured from a work tree with uncommitted changes.
DIRTY: Final = "kernelindex.dev/dirty"

#: Options that change what is measured (the protocol); the others (min_rounds,
#: max_time, precision, confidence) set how long, and stay in sourceNative.metrics.
_METHOD_OPTIONS: Final = ("timer", "disable_gc", "warmup", "min_time", "calibration_precision")
# Timers whose value is CPU time rather than elapsed time, for the notes.
_CPU_TIMERS: Final = frozenset({"process_time", "thread_time", "process_time_ns", "thread_time_ns"})
#: pytest-benchmark's statistics (seconds) -> the schema's.
STATISTICS: Final = {
    "mean": "mean",
    "median": "median",
    "min": "min",
    "max": "max",
    "stddev": "stddev",
    "q1": "p25",
    "q3": "p75",
}
_ARCHITECTURE: Final = re.compile(r"[a-z0-9][a-z0-9_]*\Z")
_PARAM_ID: Final = re.compile(r"\[(.*)\]\Z", re.DOTALL)


def protocol(options: dict[str, Any]) -> Shared:
    """The protocol of one set of options: the timer, garbage collection, warm-up and
    calibration. Every timer is a family of its own, so perf_counter never pairs with
    process_time."""
    timer = options.get("timer")
    timer_name = timer if isinstance(timer, str) and timer else "unknown"
    chosen = [
        f"{key} {json.dumps(options[key])}"
        for key in _METHOD_OPTIONS
        if key in options and key != "timer" and options[key] is not None
    ]
    if options.get("warmup") and options.get("warmup_iterations") is not None:
        chosen.append(f"warmup_iterations {json.dumps(options['warmup_iterations'])}")
    clock = (
        "a CPU-time clock: the values are CPU time, not elapsed time (the schema has no"
        " CPU-time timer; wall_clock here means a host clock)"
        if timer_name.rsplit(".", 1)[-1] in _CPU_TIMERS
        else "a host clock"
    )
    family = "pytest_benchmark_" + (slug(timer_name).replace("-", "_") or "unknown")
    spec: dict[str, Any] = {
        "harness": {"name": "pytest-benchmark", "repository": REPOSITORY},
        "measurement": {
            "timer": "wall_clock",
            "primaryStatistic": "median",
            "notes": (
                f"pytest-benchmark, timer {timer_name} ({clock}); each round times"
                " `iterations` calls, calibrated so a round lasts at least min_time, and"
                " records the round's time per call; the statistics are over the rounds."
                f" Options: {', '.join(chosen) if chosen else 'none recorded'}."
            ),
        },
        "comparability": {
            "family": family[:128],
            "notes": (
                "min_rounds and max_time set how many rounds run, not what a round"
                " measures: they stay out of the protocol (in sourceNative.metrics)."
            ),
        },
    }
    return Shared(
        kind="BenchmarkProtocol",
        base=f"pytest-benchmark-{slug(timer_name)}",
        title=f"pytest-benchmark · timer {timer_name}",
        spec=spec,
    )


def environment(machine: dict[str, Any]) -> Shared:
    """The machine pytest-benchmark describes: the CPU (py-cpuinfo's, when recorded) and
    the Python that ran. The host name and clock readings are annotations."""
    cpu = object_at(machine, "cpu")
    product = next(
        (
            v
            for v in (
                cpu.get("brand_raw"),
                cpu.get("brand"),
                machine.get("processor"),
                machine.get("machine"),
            )
            if isinstance(v, str) and v.strip()
        ),
        "CPU",
    )
    hardware: dict[str, Any] = {"vendor": "cpu", "product": product.strip()[:253]}
    arch = cpu.get("arch_string_raw") or machine.get("machine")
    if isinstance(arch, str) and _ARCHITECTURE.match(arch.lower()):
        hardware["architecture"] = arch.lower()
    count = cpu.get("count")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        hardware["multiprocessors"] = count
    for key in ("l3_cache_size", "l2_cache_size"):
        size = cpu.get(key)
        if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            hardware["l2CacheBytes"] = size
            break
    software: dict[str, str] = {}
    implementation = machine.get("python_implementation")
    version = machine.get("python_implementation_version") or machine.get("python_version")
    if isinstance(implementation, str) and isinstance(version, str):
        software["python"] = f"{implementation} {version}"
    for ours, theirs in (("python_compiler", "python_compiler"), ("system", "system")):
        if isinstance(machine.get(theirs), str) and machine[theirs]:
            software[ours] = machine[theirs][:4096]
    if isinstance(machine.get("release"), str) and "system" in software:
        software["system"] = f"{software['system']} {machine['release']}"[:4096]
    return Shared(
        kind="ExecutionEnvironment",
        base=f"pytest-benchmark-{slug(product)}",
        title=f"pytest-benchmark host · {product.strip()}",
        spec={"hardware": hardware, "software": software},
    )


def observed(root: dict[str, Any]) -> datetime | None:
    """When the benchmarks ran: ``datetime`` (ISO 8601; without an offset, UTC)."""
    return iso_instant(root.get("datetime"))


def commit_annotations(commit: dict[str, Any]) -> dict[str, str]:
    """The provenance ``commit_info`` gives: commit, branch and commit time (what git
    said; ``unversioned``, ``(unknown)`` and ``(detached head)`` say nothing), and the
    dirty mark for a save from a work tree with uncommitted changes."""
    found: dict[str, str] = {}
    sha = commit.get("id")
    if isinstance(sha, str) and sha and sha not in ("unversioned", "unknown"):
        found[COMMIT] = sha
    branch = commit.get("branch")
    if isinstance(branch, str) and branch and not branch.startswith("("):
        found[BRANCH] = branch
    when = commit.get("time")
    if isinstance(when, str) and when:
        # A time git did not write (a hand-edited file) says nothing.
        with contextlib.suppress(KernelIndexError):
            found[COMMIT_TIME] = normalize_commit_time(when)
    if commit.get("dirty") is True:
        found[DIRTY] = "true"
    return found


def workload(bench: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """What a benchmark computed, and its test's node id without the parameters.

    The operation is the test (file, class and function: two tests of one name in two
    files differ); the parameters are ``params`` (pytest's parametrize values), or the
    id in brackets (``param``) for files written before ``params`` existed.
    """
    full = bench.get("fullname") if isinstance(bench.get("fullname"), str) else bench.get("name")
    if not isinstance(full, str) or not full:
        raise ValueError("the benchmark has no name")
    found = _PARAM_ID.search(full)
    node = full[: found.start()] if found else full
    params = bench.get("params")
    values: dict[str, Any]
    if isinstance(params, dict):
        values = params
    elif found:
        values = {"param": found.group(1)}
    else:
        values = {}
    return {
        "operation": operation(node),
        "pass": "forward",
        "parameters": flat_parameters(values, "params"),
    }, node


def measured_statistics(stats: dict[str, Any]) -> dict[str, Any]:
    """The schema statistics among ``stats``."""
    return {ours: stats[theirs] for theirs, ours in STATISTICS.items() if theirs in stats}


def native_metrics(bench: dict[str, Any]) -> dict[str, Any]:
    """Every value of a benchmark that has no field of its own: its stats (the raw
    rounds under ``data/0``...), options, extra_info and cProfile rows."""
    metrics: dict[str, Any] = {}
    stats = object_at(bench, "stats")
    for key, value in stats.items():
        metrics.update(metric_entries(key, value))
    for part in ("options", "extra_info", "cprofile"):
        if bench.get(part) is not None:
            metrics.update(metric_entries(part, bench[part]))
    for key in ("group", "param"):
        if bench.get(key) is not None:
            metrics.update(metric_entries(key, bench[key]))
    return metrics
