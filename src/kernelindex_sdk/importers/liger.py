"""Liger-Kernel's published benchmark CSVs (``benchmark/data/all_benchmark_data.csv``) to records.

One row is one measured point: kernel, provider, pass, metric, one x value and an extra
config, with the median and the 20th and 80th percentiles. Speed comes from
``triton.testing.do_bench(..., quantiles=[0.5, 0.2, 0.8])`` in ms; memory from
``torch.cuda.max_memory_allocated`` quantiles over 10 calls in "MB", meaning 2^20 bytes.
Each row becomes a bundle: a run, its protocol (shared by every row of one pass and
metric) and its environment (shared by every row of one GPU). See docs/importers.md.
"""

from __future__ import annotations

import csv
import json
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import attrs

from .. import digest
from .._schemas import API_VERSION
from ..convert import format_observed_at, load_record
from ..errors import InputError, SchemaValidationError, UnsupportedSourceError
from ..models import RecordBundle
from ..validation import validate
from .gpus import lookup_gpu

__all__ = ["COLUMNS", "UnknownGpuWarning", "read", "read_files"]

COLUMNS: Final = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
REPOSITORY: Final = "https://github.com/linkedin/Liger-Kernel"
SOURCE: Final = "liger-kernel-bench"

#: Liger's pass names (``kernel_operation_mode``) -> (schema pass, protocol title, what ran).
PASSES: Final = {
    "forward": ("forward", "forward pass", "the module forward pass"),
    "backward": ("backward", "backward pass", "the backward pass"),
    "full": ("full", "forward and backward passes", "the forward and backward passes"),
    "no-grad-forward": (
        "no_grad_forward",
        "forward pass without autograd",
        "the module forward pass under torch.no_grad()",
    ),
}
#: Liger's metrics -> (CSV unit -> record unit), metric name in records.
METRICS: Final = {"speed": ({"ms": "ms"}, "latency"), "memory": ({"MB": "MiB"}, "memory")}
#: Readable slugs of Liger's x and config names; others are lowercased as they are.
NAME_SLUGS: Final = {
    "BT": "tokens",
    "T": "seqlen",
    "seq_len": "seqlen",
    "B": "batch",
    "bsz": "batch",
    "batch_size": "batch",
    "V": "vocab",
    "vocab_size": "vocab",
    "H": "hidden",
    "hidden_size": "hidden",
    "N": "n",
    "C": "channels",
    "num_channels": "channels",
    "E": "experts",
    "L": "length",
    "D": "dim",
    "M": "m",
}
# x names whose value fixes these config entries, which the name then leaves out
# (BT is batch times sequence length).
SUPERSEDES: Final = {"BT": {"B", "bsz", "batch_size", "T", "seq_len"}}
#: Titles of the kernels Liger benchmarks; others are titled from their name.
KERNEL_TITLES: Final = {
    "jsd": "Jensen-Shannon divergence loss",
    "fused_linear_jsd": "Fused linear Jensen-Shannon divergence loss",
    "cross_entropy": "Cross-entropy loss",
    "fused_linear_cross_entropy": "Fused linear cross-entropy loss",
    "kl_div": "KL divergence loss",
    "tvd": "Total variation distance",
    "rms_norm": "RMS normalization",
    "layer_norm": "Layer normalization",
    "group_norm": "Group normalization",
    "geglu": "GeGLU",
    "swiglu": "SwiGLU",
    "rope": "Rotary position embedding",
    "embedding": "Embedding",
    "dyt": "Dynamic tanh",
}
#: torch dtype spellings in configs -> the short names records use.
DTYPES: Final = {
    "torch.float32": "fp32",
    "torch.float": "fp32",
    "torch.bfloat16": "bf16",
    "torch.float16": "fp16",
    "torch.half": "fp16",
    "torch.float64": "fp64",
    "torch.float8_e4m3fn": "fp8e4m3",
    "torch.float8_e5m2": "fp8e5m2",
}
# Liger's scripts make their tensors in torch's default dtype unless the config names one.
DEFAULT_DTYPE: Final = "fp32"


class UnknownGpuWarning(UserWarning):
    """A GPU name the architecture table does not know; the row imports without one."""


def _slug(text: str) -> str:
    return "-".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _name_slug(key: str) -> str:
    return NAME_SLUGS.get(key, re.sub(r"[^a-z0-9]", "", key.lower()))


def _value_slug(value: Any) -> str:
    if isinstance(value, float):
        return _slug(repr(value).replace(".", "p"))
    return _slug(str(value))


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{what} is not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {text!r}")
    return value


def _scalar(value: Any) -> Any:
    """A config value as a digest-safe scalar: nested values become canonical JSON text."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is None else value
    if isinstance(value, int):
        return value if abs(value) <= 2**53 - 1 else str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        return int(value) if value.is_integer() and abs(value) <= 2**53 - 1 else value
    if isinstance(value, str):
        return DTYPES.get(value, value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _x_value(text: str) -> Any:
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number.is_integer() and abs(number) <= 2**53 - 1:
        return int(number)
    return number if math.isfinite(number) else text


def _observed_at(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"timestamp is not ISO 8601: {text!r}") from None
    # Liger writes UTC without an offset.
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


@attrs.define
class _Converter:
    """Turns rows into bundles; shared documents and used names live here."""

    protocols: dict[tuple[str, str], tuple[dict[str, Any], str]] = attrs.field(factory=dict)
    environments: dict[str, tuple[dict[str, Any], str]] = attrs.field(factory=dict)
    names: dict[str, int] = attrs.field(factory=dict)

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
                name, doc_title = (
                    f"liger-bench-do-bench-{_slug(mode)}",
                    f"Liger benchmark harness · {title}",
                )
            else:
                timer, family = "not_applicable", "liger_kernel_bench_memory"
                notes = (
                    f"Measured: peak memory of {timed}, torch.cuda.max_memory_allocated quantiles"
                    f" 0.5/0.2/0.8 over 10 calls, in MB of 2^20 bytes (MiB).{caveat} pass, and GPU."
                )
                name = f"liger-bench-memory-{_slug(mode)}"
                doc_title = f"Liger benchmark harness · {title} · memory"
            spec = {
                "harness": {"name": "Liger-Kernel benchmark scripts", "repository": REPOSITORY},
                "measurement": {"timer": timer, "primaryStatistic": "median"},
                "comparability": {"notes": notes, "family": family},
            }
            doc = {
                "apiVersion": API_VERSION,
                "kind": "BenchmarkProtocol",
                "metadata": {"name": name, "title": doc_title},
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
                warnings.warn(
                    f"{where}: unknown GPU {gpu!r}: imported without architecture",
                    UnknownGpuWarning,
                    stacklevel=2,
                )
            else:
                hardware["architecture"] = info.architecture
            spec = {"hardware": hardware, "software": {}}
            short = re.sub(r"^(NVIDIA|AMD|Intel\(R\))\s+", "", gpu.strip(), flags=re.IGNORECASE)
            doc = {
                "apiVersion": API_VERSION,
                "kind": "ExecutionEnvironment",
                "metadata": {
                    "name": f"liger-bench-{_slug(gpu)}"[:253].strip("-"),
                    "title": f"Liger benchmark host · {short}",
                },
                "spec": spec,
            }
            self.environments[gpu] = (doc, digest.environment_digest(spec))
        return self.environments[gpu]

    def unique(self, name: str) -> str:
        """``name``, or ``name-2``, ``name-3``... when an earlier row took it."""
        count = self.names.get(name, 0) + 1
        self.names[name] = count
        return name if count == 1 else f"{name[:248]}-{count}"

    def bundle(self, row: _Row, where: str) -> dict[str, Any]:
        parameters = row.parameters()
        workload = {
            "operation": re.sub(r"[^a-z0-9_]", "_", row.kernel.lower()),
            "pass": PASSES[row.mode][0],
            "parameters": parameters,
        }
        implementation = {"provider": row.provider, "packages": {"liger-kernel": row.version}}
        stamp = row.observed.astimezone(timezone.utc).strftime("%Y-%m-%d-%H-%M-%S")
        if row.observed.microsecond:
            stamp += f"-{row.observed.microsecond // 1000:03d}"
        metric_part = [] if row.metric == "speed" else [row.metric]
        gpu_slug, workload_slug = _slug(row.gpu), _workload_slug(row.x_name, parameters)
        parts = [row.kernel, row.mode, row.provider, gpu_slug, workload_slug, *metric_part, stamp]
        name = self.unique(_slug(" ".join(["liger", *parts]))[:253].strip("-"))
        protocol, protocol_digest = self.protocol(row.mode, row.metric)
        environment, environment_digest = self.environment(row.gpu, where)
        spec: dict[str, Any] = {
            "status": "passed",
            "observedAt": format_observed_at(row.observed),
            "sourceNative": {
                "source": SOURCE,
                "metrics": {
                    f"{row.unit}_{q}": v for q, v in zip(("20", "50", "80"), row.ys, strict=True)
                },
                "benchmark": f"{row.kernel}/{row.mode}",
                "externalId": "/".join(parts),
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
                "name": name,
                "title": " · ".join([title, row.provider, row.mode, *metric_part]),
                "labels": {"liger_version": row.version},
            },
            "spec": spec,
        }
        return {"run": run, "protocol": protocol, "environment": environment}


@attrs.frozen
class _Row:
    """One CSV row, parsed and checked."""

    kernel: str
    provider: str
    mode: str
    metric: str
    unit: str
    ys: tuple[float, float, float]  # p20, p50, p80
    config: dict[str, Any]
    x_name: str
    x_value: Any
    observed: datetime
    version: str
    gpu: str

    @classmethod
    def parse(cls, row: dict[str, str]) -> _Row:
        """Raises ValueError naming the first field that cannot be used."""
        fields = {k: (row.get(k) or "").strip() for k in COLUMNS}
        mode, metric, unit = (
            fields[k] for k in ("kernel_operation_mode", "metric_name", "metric_unit")
        )
        if mode not in PASSES:
            raise ValueError(f"unknown kernel_operation_mode {mode!r}; known: {', '.join(PASSES)}")
        if metric not in METRICS:
            raise ValueError(f"unknown metric_name {metric!r}; known: {', '.join(METRICS)}")
        if unit not in METRICS[metric][0]:
            raise ValueError(
                f"{metric} in {unit!r}; expected {', '.join(map(repr, METRICS[metric][0]))}"
            )
        for required in ("kernel_name", "kernel_provider", "gpu_name", "x_name"):
            if not fields[required]:
                raise ValueError(f"{required} must not be empty")
        try:
            config = json.loads(fields["extra_benchmark_config_str"] or "{}")
        except json.JSONDecodeError as err:
            raise ValueError(f"extra_benchmark_config_str is not JSON: {err.msg}") from None
        if not isinstance(config, dict):
            raise ValueError("extra_benchmark_config_str must be a JSON object")  # noqa: TRY004
        p20, p50, p80 = (
            _number(fields[f"y_value_{q}"], f"y_value_{q}") for q in ("20", "50", "80")
        )
        return cls(
            kernel=fields["kernel_name"],
            provider=fields["kernel_provider"],
            mode=mode,
            metric=metric,
            unit=unit,
            ys=(p20, p50, p80),
            config=config,
            x_name=fields["x_name"],
            x_value=_x_value(fields["x_value"]),
            observed=_observed_at(fields["timestamp"]),
            version=fields["liger_version"],
            gpu=fields["gpu_name"],
        )

    def parameters(self) -> dict[str, Any]:
        """What was computed: the x value, every config entry, and the dtype."""
        parameters: dict[str, Any] = {self.x_name: self.x_value}
        parameters.update({k: _scalar(v) for k, v in self.config.items() if k != self.x_name})
        parameters["dtype"] = _scalar(self.config.get("dtype", DEFAULT_DTYPE))
        return parameters


def _workload_slug(x_name: str, parameters: dict[str, Any]) -> str:
    """``tokens1024-vocab128256-fp32``: x first, then the config, the dtype last."""
    x_value = parameters[x_name]
    x_slug = _name_slug(x_name)
    numeric = isinstance(x_value, (int, float)) and not isinstance(x_value, bool)
    parts = [f"{x_slug}{_value_slug(x_value)}" if numeric else f"{x_slug}-{_value_slug(x_value)}"]
    hidden = SUPERSEDES.get(x_name, set()) | {"dtype", x_name}
    parts += [f"{_name_slug(k)}{_value_slug(v)}" for k, v in parameters.items() if k not in hidden]
    parts.append(_value_slug(parameters["dtype"]))
    return "-".join(p for p in parts if p)


def _values(row: _Row) -> dict[str, Any]:
    """The measured values: latency as integer ns (ms x 10^6, rounded to nearest), or memory."""
    p20, p50, p80 = row.ys
    if row.metric == "speed":
        return {
            "timing": {"latencyNs": {"median": round(p50 * 1e6)}, "primaryStatistic": "median"},
            "measurements": [
                {"unit": "ns", "value": round(p20 * 1e6), "metric": "latency", "statistic": "p20"},
                {"unit": "ns", "value": round(p80 * 1e6), "metric": "latency", "statistic": "p80"},
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


def _convert(converter: _Converter, row: dict[str, Any], where: str) -> RecordBundle:
    if None in row:
        raise ValueError(f"more fields than the header's {len(COLUMNS)}")
    doc = converter.bundle(_Row.parse(row), where)
    problems = validate(doc, kind="RecordBundle")
    if problems:
        raise SchemaValidationError(problems=problems)
    return load_record(doc, validate=False)


def read(
    path: str | Path,
    *,
    on_error: Callable[[UnsupportedSourceError], None] | None = None,
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per row of a Liger-Kernel benchmark CSV.

    Args:
        path: The CSV file.
        on_error: Called with each row that cannot be converted (its line and the
            reason), after which reading goes on; without it, such a row raises.

    Raises:
        InputError: when the file cannot be read.
        UnsupportedSourceError: for a file without Liger's columns, or (without
            ``on_error``) a row that cannot be converted.
    """
    return read_files([path], on_error=on_error)


def read_files(
    paths: Iterable[str | Path],
    *,
    on_error: Callable[[UnsupportedSourceError], None] | None = None,
) -> Iterator[RecordBundle]:
    """Like :func:`read` over several CSVs forming one input: run names stay unique across them."""
    converter = _Converter()
    for path in paths:
        yield from _read_one(str(path), converter, on_error)


def _read_one(
    source: str,
    converter: _Converter,
    on_error: Callable[[UnsupportedSourceError], None] | None,
) -> Iterator[RecordBundle]:
    try:
        handle = open(source, newline="", encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as err:
        raise InputError(source=source, reason=err.strerror or str(err)) from err
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            reason = f"not a Liger-Kernel benchmark CSV: no column {', '.join(missing)}"
            raise UnsupportedSourceError(source=source, line=1, reason=reason)
        for row in reader:
            line = reader.line_num
            try:
                bundle = _convert(converter, row, f"{source}:{line}")
            except (ValueError, SchemaValidationError) as err:
                reason = str(err).replace("\n", "; ")
                error = UnsupportedSourceError(source=source, line=line, reason=reason)
                if on_error is None:
                    raise error from err
                on_error(error)
                continue
            yield bundle
