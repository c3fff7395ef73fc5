"""Liger rows to record bundles: the run, and the protocol and environment rows share."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import attrs

from ... import digest
from ..._base import names as _names
from ..._base.display import short_repr
from ..._base.schemas import API_VERSION
from ...convert import format_observed_at
from ...verdict import BASELINE_LABEL
from .._namespace import Namespace
from .._values import SAFE_INT
from ..gpus import lookup_gpu
from ._rows import Row
from ._tables import (
    BASELINE_PREFERENCE,
    KERNEL_TITLES,
    LIGER_PROVIDER,
    METRICS,
    NAME_SLUGS,
    PASSES,
    REPOSITORY,
    SOURCE,
    SUPERSEDES,
)

__all__ = ["Converter"]


def _name_slug(key: str) -> str:
    return NAME_SLUGS.get(key, re.sub(r"[^a-z0-9]", "", key.lower()))


def _value_slug(value: Any) -> str:
    """A value for a name: ``0.5`` reads ``0p5``, ``-2`` ``m2``, ``1e-06`` ``1em06``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return repr(value).replace("-", "m").replace("+", "").replace(".", "p")
    return str(value)


def _ns(ms: float, what: str) -> int:
    """Milliseconds as integer nanoseconds, rounded to nearest; refused beyond 2^53 - 1."""
    ns = ms * 1e6
    if not ns <= _SAFE_NS:
        raise ValueError(f"{what} {ms!r} ms is beyond 2^53 - 1 ns (about 104 days)")
    return round(ns)


_SAFE_NS: Final = float(SAFE_INT)


@attrs.define
class Converter:
    """Turns rows into bundles; shared documents and used names live here.

    ``on_notice`` hears, once per GPU, of a GPU name the architecture table does not
    know (the row imports without an architecture).
    """

    namespace: Namespace = attrs.field(factory=Namespace)
    on_notice: Callable[[str], None] | None = None
    #: Each kernel's baseline in the file being read (:func:`baselines`).
    baselines: dict[str, str] = attrs.field(factory=dict)
    protocols: dict[tuple[str, str], tuple[dict[str, Any], str]] = attrs.field(factory=dict)
    environments: dict[str, tuple[dict[str, Any], str]] = attrs.field(factory=dict)

    def protocol(self, mode: str, metric: str) -> tuple[dict[str, Any], str]:
        key = (mode, metric)
        if key not in self.protocols:
            _, title, timed = PASSES[mode]
            caveat = (
                " The upstream CSV records no CUDA, driver, or torch version; the Liger release"
                " rides each run's labels. Comparable only within one kernel, workload,"
            )
            if metric == "speed":
                timer, family = "cuda_events", "liger_kernel_bench"
                notes = (
                    f"Timed: {timed}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8"
                    f" (median with p20/p80 spread).{caveat} timed pass, and GPU."
                )
                base = _names.name("liger-bench-do-bench", mode)
                doc_title = f"Liger benchmark harness · {title}"
            else:
                timer, family = "not_applicable", "liger_kernel_bench_memory"
                notes = (
                    f"Measured: peak memory of {timed}, torch.cuda.max_memory_allocated quantiles"
                    f" 0.5/0.2/0.8 over 10 calls, in MB of 2^20 bytes (MiB).{caveat} pass, and GPU."
                )
                base = _names.name("liger-bench-memory", mode)
                doc_title = f"Liger benchmark harness · {title} · memory"
            spec = {
                "harness": {"name": "Liger-Kernel benchmark scripts", "repository": REPOSITORY},
                "measurement": {"timer": timer, "primaryStatistic": "median"},
                "comparability": {"notes": notes, "family": family},
            }
            doc = {
                "apiVersion": API_VERSION,
                "kind": "BenchmarkProtocol",
                "metadata": {
                    "name": self.namespace.shared("BenchmarkProtocol", base, spec),
                    "title": doc_title,
                },
                "spec": spec,
            }
            self.protocols[key] = (doc, digest.protocol_digest(spec))
        return self.protocols[key]

    def environment(self, gpu: str, where: str) -> tuple[dict[str, Any], str]:
        if gpu not in self.environments:
            info = lookup_gpu(gpu)
            hardware: dict[str, Any] = {
                "vendor": info.vendor if info else "unknown",
                "product": gpu,
            }
            if info is None or info.architecture is None:
                if self.on_notice is not None:
                    self.on_notice(
                        f"{where}: unknown GPU {short_repr(gpu)}: imported without architecture"
                    )
            else:
                hardware["architecture"] = info.architecture
            spec = {"hardware": hardware, "software": {}}
            short = re.sub(r"^(NVIDIA|AMD|Intel\(R\))\s+", "", gpu, flags=re.IGNORECASE)
            # Two spellings of one GPU ("NVIDIA B200", "nvidia b200") slug alike: the
            # namespace gives the second its own name, so no name means two specs.
            name = self.namespace.shared(
                "ExecutionEnvironment", _names.name("liger-bench", gpu), spec
            )
            doc = {
                "apiVersion": API_VERSION,
                "kind": "ExecutionEnvironment",
                "metadata": {"name": name, "title": f"Liger benchmark host · {short}"},
                "spec": spec,
            }
            self.environments[gpu] = (doc, digest.environment_digest(spec))
        return self.environments[gpu]

    def bundle(self, row: Row, where: str) -> dict[str, Any]:
        """The row's bundle, its run named by its content (not yet made unique)."""
        parameters = row.parameters()
        workload = {"operation": row.kernel, "pass": PASSES[row.mode][0], "parameters": parameters}
        # Only Liger's own code is Liger's release: a baseline (huggingface, torch) ran
        # another project's code, whose version the CSV does not record.
        implementation: dict[str, Any] = {"provider": row.provider}
        if is_liger(row.provider):
            implementation["packages"] = {"liger-kernel": row.version}
        observed = row.observed
        stamp = f"{observed.year:04d}-{observed:%m-%d-%H-%M-%S}"
        if observed.microsecond:
            stamp += f"-{observed.microsecond // 1000:03d}"
        metric_part = [] if row.metric == "speed" else [row.metric]
        workload_slug = _workload_slug(row.x_name, parameters)
        parts = [row.kernel, row.mode, row.provider, row.gpu, workload_slug, *metric_part, stamp]
        protocol, protocol_digest = self.protocol(row.mode, row.metric)
        environment, environment_digest = self.environment(row.gpu, where)
        spec: dict[str, Any] = {
            "status": "passed",
            "observedAt": format_observed_at(observed),
            "sourceNative": {
                "source": SOURCE,
                "metrics": {
                    f"{row.unit}_{q}": v for q, v in zip(("20", "50", "80"), row.ys, strict=True)
                },
                "benchmark": f"{row.kernel}/{row.mode}",
                "externalId": "/".join([*parts[:3], _names.slug(row.gpu), *parts[4:]]),
            },
            "workload": workload,
            "implementation": implementation,
            "protocolDigest": protocol_digest,
            "workloadDigest": digest.workload_digest(workload),
            "environmentDigest": environment_digest,
            "implementationDigest": digest.implementation_digest(implementation),
            **_values(row),
        }
        title = KERNEL_TITLES.get(row.kernel, row.kernel.replace("_", " ").capitalize())
        run = {
            "apiVersion": API_VERSION,
            "kind": "BenchmarkRun",
            "metadata": {
                "name": _names.name("liger", *parts),
                "title": " · ".join([title, row.provider, row.mode, *metric_part]),
                "labels": self._labels(row),
            },
            "spec": spec,
        }
        return {"run": run, "protocol": protocol, "environment": environment}

    def _labels(self, row: Row) -> dict[str, str]:
        labels = {"liger_version": row.version}
        reference = self.baselines.get(row.kernel)
        # The baseline's own rows need none: it is what the others are divided by.
        if reference is not None and reference != row.provider:
            labels[BASELINE_LABEL] = reference
        return labels


def is_liger(provider: str) -> bool:
    """Whether ``provider`` is Liger-Kernel's own code (``liger``, ``liger_tiled``...)."""
    return provider == LIGER_PROVIDER or provider.startswith(LIGER_PROVIDER + "_")


def baselines(providers: dict[str, set[str]]) -> dict[str, str]:
    """Each kernel's baseline: the first of :data:`BASELINE_PREFERENCE` its rows measured,
    else (none of them) no baseline.

    Args:
        providers: The providers each kernel's rows name in one file.
    """
    found: dict[str, str] = {}
    for kernel, names in providers.items():
        for candidate in BASELINE_PREFERENCE:
            if candidate in names:
                found[kernel] = candidate
                break
    return found


def _workload_slug(x_name: str, parameters: dict[str, Any]) -> str:
    """``tokens1024-vocab128256-fp32``: x first, then the config, the dtype last."""
    x_value = parameters[x_name]
    x_slug = _name_slug(x_name)
    numeric = isinstance(x_value, (int, float)) and not isinstance(x_value, bool)
    parts = [f"{x_slug}{_value_slug(x_value)}" if numeric else f"{x_slug}-{_value_slug(x_value)}"]
    hidden = SUPERSEDES.get(x_name, set()) | {"dtype", x_name}
    parts += [f"{_name_slug(k)}{_value_slug(v)}" for k, v in parameters.items() if k not in hidden]
    if x_name != "dtype":
        parts.append(_value_slug(parameters["dtype"]))
    return "-".join(p for p in parts if p)


def _values(row: Row) -> dict[str, Any]:
    """The measured values: latency as integer ns (ms x 10^6, rounded to nearest), or memory."""
    p20, p50, p80 = row.ys
    if row.metric == "speed":
        return {
            "timing": {
                "latencyNs": {"median": _ns(p50, "y_value_50")},
                "primaryStatistic": "median",
            },
            "measurements": [
                {
                    "unit": "ns",
                    "value": _ns(p20, "y_value_20"),
                    "metric": "latency",
                    "statistic": "p20",
                },
                {
                    "unit": "ns",
                    "value": _ns(p80, "y_value_80"),
                    "metric": "latency",
                    "statistic": "p80",
                },
            ],
        }
    unit, metric = METRICS[row.metric][0][row.unit], METRICS[row.metric][1]
    return {
        "measurements": [
            {"unit": unit, "value": p50, "metric": metric, "statistic": "median"},
            {"unit": unit, "value": p20, "metric": metric, "statistic": "p20"},
            {"unit": unit, "value": p80, "metric": metric, "statistic": "p80"},
        ]
    }
