"""Small valid bundles for compare and report tests, with every digest computed."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from kernelindex_sdk import digest, validation

_names = itertools.count()


def bundle(
    provider: str = "torch",
    median: int | None = 100_000,
    p20: int | None = None,
    p80: int | None = None,
    *,
    params: dict[str, Any] | None = None,
    product: str = "NVIDIA H200",
    timer: str = "cuda_events",
    observed: str = "2026-11-30T00:00:00.000Z",
    failed: str | None = None,
    entry_point: str | None = None,
    config: dict[str, Any] | None = None,
    bytes_moved: int | None = None,
    memory: float | None = None,
    operation: str = "jsd",
    pass_: str = "forward",  # noqa: S107 - a timed pass, not a password
) -> dict[str, Any]:
    """A valid bundle; ``p20``/``p80`` default to the median, ``failed`` is its message."""
    workload: dict[str, Any] = {
        "operation": operation,
        "pass": pass_,
        "parameters": {"tokens": 1024, "dtype": "fp32"} if params is None else params,
    }
    if bytes_moved is not None:
        workload["bytesMoved"] = bytes_moved
    implementation: dict[str, Any] = {"provider": provider}
    if entry_point is not None:
        implementation["entryPoint"] = entry_point
    if config is not None:
        implementation["config"] = config
    protocol = {
        "harness": {"name": "test harness"},
        "measurement": {"timer": timer, "primaryStatistic": "median"},
    }
    environment = {
        "hardware": {"vendor": "nvidia", "product": product, "architecture": "sm_90"},
        "software": {},
    }
    spec: dict[str, Any] = {
        "status": "failed" if failed else "passed",
        "observedAt": observed,
        "workload": workload,
        "implementation": implementation,
        "protocolDigest": digest.protocol_digest(protocol),
        "workloadDigest": digest.workload_digest(workload),
        "environmentDigest": digest.environment_digest(environment),
        "implementationDigest": digest.implementation_digest(implementation),
    }
    if failed:
        spec["failure"] = {"reason": "error", "message": failed}
    elif median is not None:
        spec["timing"] = {"latencyNs": {"median": median}, "primaryStatistic": "median"}
        spec["measurements"] = [
            {"unit": "ns", "value": median if q is None else q, "metric": "latency", "statistic": n}
            for n, q in (("p20", p20), ("p80", p80))
        ]
    if memory is not None:
        spec.setdefault("measurements", []).append(
            {"unit": "MiB", "value": memory, "metric": "memory", "statistic": "median"}
        )
    doc = {
        "run": {
            "apiVersion": "kernelindex.dev/v1alpha1",
            "kind": "BenchmarkRun",
            "metadata": {"name": f"test-run-{next(_names)}"},
            "spec": spec,
        },
        "protocol": {
            "apiVersion": "kernelindex.dev/v1alpha1",
            "kind": "BenchmarkProtocol",
            "metadata": {"name": f"protocol-{timer.replace('_', '-')}"},
            "spec": protocol,
        },
        "environment": {
            "apiVersion": "kernelindex.dev/v1alpha1",
            "kind": "ExecutionEnvironment",
            "metadata": {"name": product.lower().replace(" ", "-")},
            "spec": environment,
        },
    }
    validation.check(doc)
    return doc


def write_jsonl(path: Path, docs: list[dict[str, Any]]) -> Path:
    """Write ``docs`` as JSON Lines and return the path."""
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path
