"""nvbench's vocabulary: its measurement methods, the summary tags each reads, and their
protocols."""

from __future__ import annotations

from typing import Any, Final

import attrs

__all__ = ["DEVICE_MAPPED", "METHODS", "REPOSITORY", "SOURCE", "Method"]

REPOSITORY: Final = "https://github.com/NVIDIA/nvbench"
SOURCE: Final = "nvbench"

#: Device fields that become the environment's hardware (the rest are annotations).
DEVICE_MAPPED: Final = (
    "id",
    "name",
    "sm_version",
    "global_memory_size",
    "number_of_sms",
    "l2_cache_size",
)

# nvbench's statistic suffixes (after ".../time/gpu/" or ".../time/cpu/") -> the schema's.
_STATISTICS: Final = {
    "mean": "mean",
    "min": "min",
    "max": "max",
    "median": "median",
    "q1": "p25",
    "q3": "p75",
    "stdev/absolute": "stddev",
}


@attrs.frozen
class Method:
    """One of nvbench's measurements: the tags it writes and the protocol it follows.

    Attributes:
        key: nvbench's name, the tag prefix after ``nv/`` (``cold``).
        title: For titles.
        timed: The tag prefix of the primary timer's statistics.
        other: ``(tag prefix, metric)`` of a second timer kept as measurements.
        protocol: The protocol spec.
    """

    key: str
    title: str
    timed: str
    other: tuple[tuple[str, str], ...]
    protocol: dict[str, Any]

    @property
    def prefix(self) -> str:
        """The prefix of every tag this method writes."""
        return f"nv/{self.key}/"

    def statistics(self, prefix: str, values: dict[str, Any]) -> dict[str, Any]:
        """The schema statistics among ``values`` (tag -> value) under ``prefix``."""
        return {
            ours: values[f"{prefix}{theirs}"]
            for theirs, ours in _STATISTICS.items()
            if f"{prefix}{theirs}" in values
        }


def _protocol(timer: str, flush: str, family: str, what: str, caveat: str) -> dict[str, Any]:
    return {
        "harness": {"name": "nvbench", "repository": REPOSITORY},
        "measurement": {
            "timer": timer,
            "primaryStatistic": "mean",
            "l2Flush": {"policy": flush},
            "notes": what,
        },
        "comparability": {"family": family, "notes": caveat},
    }


_CAVEAT: Final = (
    "nvbench's stopping criteria (min_samples, min_time, max_noise, timeout) decide how"
    " long it measures, not what: they are kept in each run's sourceNative.metrics and"
    " left out of the protocol, so runs with other criteria stay comparable."
)

#: nvbench's measurements, in the order a state's runs are written.
METHODS: Final = (
    Method(
        key="cold",
        title="cold",
        timed="nv/cold/time/gpu/",
        other=(("nv/cold/time/cpu/", "host_latency"),),
        protocol=_protocol(
            "cuda_events",
            "buffer_write",
            "nvbench_cold",
            "nvbench cold measurement: each execution isolated, timed alone with CUDA events"
            " after the L2 cache is flushed (cudaMemsetAsync over the L2 size) and the"
            " stream is held by a blocking kernel, so launch cost is hidden; the mean of"
            " the GPU times (nv/cold/time/gpu/mean) represents the run.",
            _CAVEAT,
        ),
    ),
    Method(
        key="batch",
        title="batch",
        timed="nv/batch/time/gpu/",
        other=(),
        protocol=_protocol(
            "cuda_events",
            "none",
            "nvbench_batch",
            "nvbench batch (hot) measurement: many executions launched back to back"
            " between one pair of CUDA events, L2 not flushed; the run is their mean"
            " (nv/batch/time/gpu/mean).",
            _CAVEAT,
        ),
    ),
    Method(
        key="cpu_only",
        title="CPU only",
        timed="nv/cpu_only/time/cpu/",
        other=(),
        protocol=_protocol(
            "wall_clock",
            "none",
            "nvbench_cpu_only",
            "nvbench CPU-only measurement (exec_tag::no_gpu): each execution timed by the"
            " host clock; the mean (nv/cpu_only/time/cpu/mean) represents the run.",
            _CAVEAT,
        ),
    ),
)
