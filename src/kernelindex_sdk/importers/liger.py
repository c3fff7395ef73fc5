"""Liger-Kernel's published benchmark CSVs (``benchmark/data/all_benchmark_data.csv``) to records.

One row is one measured point: kernel, provider, pass, metric, one x value and an extra
config, with the median and the 20th and 80th percentiles. Speed comes from
``triton.testing.do_bench(..., quantiles=[0.5, 0.2, 0.8])`` in ms; memory from
``torch.cuda.max_memory_allocated`` quantiles over 10 calls in "MB", meaning 2^20 bytes.
Each row becomes a bundle: a run, its protocol (shared by every row of one pass and
metric) and its environment (shared by every row of one GPU). See docs/importers.md.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Final

import attrs

from .. import _names, digest
from .._messages import short_repr
from .._schemas import API_VERSION
from ..convert import format_observed_at, load_record
from ..errors import KernelIndexError, SchemaValidationError, UnsupportedSourceError
from ..models import RecordBundle
from ..validation import validate
from . import _output
from ._csvfile import BLANKS, BadRecord, CsvFile
from ._namespace import Namespace
from ._output import ImportSummary
from ._values import check_parameter, parse_config, parse_number
from .gpus import lookup_gpu

__all__ = [
    "COLUMNS",
    "ImportSummary",
    "UnknownGpuWarning",
    "import_files",
    "read",
    "read_files",
]

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


#: Schema pattern of a workload's operation; a kernel name outside it is refused, not renamed.
_OPERATION: Final = re.compile(r"[a-z0-9][a-z0-9_]*\Z")
_OPERATION_MAX: Final = 128


def _name_slug(key: str) -> str:
    return NAME_SLUGS.get(key, re.sub(r"[^a-z0-9]", "", key.lower()))


def _value_slug(value: Any) -> str:
    """A value for a name: ``0.5`` reads ``0p5``, ``-2`` ``m2``, ``1e-06`` ``1em06``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return repr(value).replace("-", "m").replace("+", "").replace(".", "p")
    return str(value)


def _dtype(value: Any) -> Any:
    # Spellings of one torch dtype are one value: torch.float and torch.float32 are fp32.
    return DTYPES.get(value, value) if isinstance(value, str) else value


def _observed_at(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"timestamp is not ISO 8601: {short_repr(text)}") from None
    # Liger writes UTC without an offset.
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(
            f"timestamp {short_repr(text)} falls outside the years 1 to 9999 in UTC"
        ) from None


def _measured(text: str, what: str) -> float:
    value = parse_number(text, what)
    if value is None:
        raise ValueError(f"{what} is not a number: {short_repr(text)}")
    if value < 0:
        raise ValueError(f"{what} must be a number >= 0, got {short_repr(text)}")
    return float(value)


def _ns(ms: float, what: str) -> int:
    """Milliseconds as integer nanoseconds, rounded to nearest; refused beyond 2^53 - 1."""
    ns = ms * 1e6
    if not ns <= _SAFE_NS:
        raise ValueError(f"{what} {ms!r} ms is {ns:.4g} ns, beyond 2^53 - 1 ns")
    return round(ns)


_SAFE_NS: Final = float(2**53 - 1)


@attrs.define
class _Converter:
    """Turns rows into bundles; shared documents and used names live here."""

    namespace: Namespace = attrs.field(factory=Namespace)
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
                warnings.warn(
                    f"{where}: unknown GPU {short_repr(gpu)}: imported without architecture",
                    UnknownGpuWarning,
                    stacklevel=2,
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

    def bundle(self, row: _Row, where: str) -> dict[str, Any]:
        """The row's bundle, its run named by its content (not yet made unique)."""
        parameters = row.parameters()
        workload = {"operation": row.kernel, "pass": PASSES[row.mode][0], "parameters": parameters}
        implementation = {"provider": row.provider, "packages": {"liger-kernel": row.version}}
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
        fields = {k: row[k].strip(BLANKS) for k in COLUMNS}
        mode, metric, unit = (
            fields[k] for k in ("kernel_operation_mode", "metric_name", "metric_unit")
        )
        if mode not in PASSES:
            raise ValueError(
                f"unknown kernel_operation_mode {short_repr(mode)}; known: {', '.join(PASSES)}"
            )
        if metric not in METRICS:
            raise ValueError(
                f"unknown metric_name {short_repr(metric)}; known: {', '.join(METRICS)}"
            )
        if unit not in METRICS[metric][0]:
            raise ValueError(
                f"{metric} in {short_repr(unit)};"
                f" expected {', '.join(map(repr, METRICS[metric][0]))}"
            )
        for required in ("kernel_name", "kernel_provider", "gpu_name", "x_name"):
            if not fields[required]:
                raise ValueError(f"{required} must not be empty")
        kernel = fields["kernel_name"]
        if len(kernel) > _OPERATION_MAX or not _OPERATION.match(kernel):
            raise ValueError(
                f"kernel_name {short_repr(kernel)} is not an operation name"
                " (lowercase letters, digits and '_', at most 128)"
            )
        p20, p50, p80 = (
            _measured(fields[f"y_value_{q}"], f"y_value_{q}") for q in ("20", "50", "80")
        )
        x_name = fields["x_name"]
        x_value = parse_number(fields["x_value"], "x_value")
        return cls(
            kernel=kernel,
            provider=fields["kernel_provider"],
            mode=mode,
            metric=metric,
            unit=unit,
            ys=(p20, p50, p80),
            config=parse_config(fields["extra_benchmark_config_str"], "extra_benchmark_config_str"),
            x_name=x_name,
            x_value=fields["x_value"] if x_value is None else x_value,
            observed=_observed_at(fields["timestamp"]),
            version=fields["liger_version"],
            gpu=fields["gpu_name"],
        )

    def parameters(self) -> dict[str, Any]:
        """What was computed: the x value, every config entry, and the dtype.

        Raises:
            ValueError: for a value no parameter can hold, or a config entry named like
                the x value but with another value (one of the two would be lost).
        """
        x_value = _dtype(check_parameter(self.x_name, self.x_value, "x_value"))
        parameters: dict[str, Any] = {self.x_name: x_value}
        for key, value in self.config.items():
            checked = _dtype(check_parameter(key, value, "extra_benchmark_config_str"))
            if key == self.x_name:
                if checked != x_value or type(checked) is not type(x_value):
                    raise ValueError(
                        f"x_name {key!r} is {short_repr(x_value)} but"
                        f" extra_benchmark_config_str has {key!r}: {short_repr(checked)}"
                    )
                continue
            parameters[key] = checked
        parameters.setdefault("dtype", DEFAULT_DTYPE)
        return parameters


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


def _values(row: _Row) -> dict[str, Any]:
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


# What converting one row may raise for bad content; anything else is a bug to see.
_ROW_ERRORS: Final = (ValueError, OverflowError, RecursionError, KernelIndexError)


def _convert(converter: _Converter, fields: dict[str, str], where: str) -> dict[str, Any]:
    doc = converter.bundle(_Row.parse(fields), where)
    problems = validate(doc, kind="RecordBundle")
    if problems:
        raise SchemaValidationError(problems=problems)
    return doc


OnError = Callable[[UnsupportedSourceError], None]
OnSkip = Callable[[str, int], None]


def read(path: str | Path, *, on_error: OnError | None = None) -> Iterator[RecordBundle]:
    """Yield one validated bundle per row of a Liger-Kernel benchmark CSV.

    Args:
        path: The CSV file (UTF-8, with or without a byte order mark).
        on_error: Called with each row that cannot be converted (its first line and the
            reason), and with a file that cannot be read as a Liger CSV, after which
            reading goes on; without it, the first such row or file raises.

    Raises:
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: for a file without Liger's columns, or (without
            ``on_error``) a row that cannot be converted.
    """
    return read_files([path], on_error=on_error)


def read_files(
    paths: Iterable[str | Path],
    *,
    on_error: OnError | None = None,
    existing: Iterable[Any] = (),
    on_skip: OnSkip | None = None,
) -> Iterator[RecordBundle]:
    """Like :func:`read` over several CSVs forming one input: run names stay unique across them.

    Args:
        paths: The CSV files, read in order.
        on_error: As for :func:`read`.
        existing: Bundles (JSON values) already where the output goes: their names are
            taken, and a row whose run equals one of their runs is skipped.
        on_skip: Called with the file and first line of each row skipped as already there.
    """
    converter = _Converter(namespace=Namespace.of(existing))
    for path in paths:
        yield from _read_one(str(path), converter, on_error, on_skip)


def _read_one(
    source: str,
    converter: _Converter,
    on_error: OnError | None,
    on_skip: OnSkip | None,
) -> Iterator[RecordBundle]:
    def fail(error: UnsupportedSourceError, cause: BaseException | None = None) -> None:
        if on_error is None:
            raise error from cause
        on_error(error)

    try:
        with CsvFile(source, COLUMNS, kind="Liger-Kernel benchmark CSV") as csv_file:
            for record in csv_file.records():
                if isinstance(record, BadRecord):
                    fail(
                        UnsupportedSourceError(
                            source=source, line=record.line, reason=record.reason
                        )
                    )
                    continue
                try:
                    doc = _convert(converter, record.fields, f"{source}:{record.line}")
                except _ROW_ERRORS as err:
                    reason = str(err).replace("\n", "; ")
                    fail(
                        UnsupportedSourceError(source=source, line=record.line, reason=reason), err
                    )
                    continue
                run = doc["run"]
                if converter.namespace.already_written(run["spec"]):
                    if on_skip is not None:
                        on_skip(source, record.line)
                    continue
                run["metadata"]["name"] = converter.namespace.run(
                    run["metadata"]["name"], run["spec"]
                )
                yield load_record(doc, validate=False)
    except UnsupportedSourceError as err:
        # The file as a whole (its encoding, header, a line without end).
        if on_error is None or err.source != source:
            raise
        on_error(err)


def import_files(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    stream: IO[str] | None = None,
    on_error: OnError | None = None,
) -> ImportSummary:
    """Import Liger-Kernel CSVs into a JSON Lines file, appending record by record.

    Every input is opened before the output is touched, and the output is created only
    when the first record is written. An output that already holds records is extended:
    its names stay taken, and rows whose run it already holds are skipped (counted in
    the summary), so importing the same CSV twice writes each record once.

    Args:
        paths: The CSV files.
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        stream: Where ``-`` writes (standard output by default).
        on_error: Called with each row or file that cannot be converted.

    Returns:
        How many rows were imported, rejected and skipped.

    Raises:
        InputError: when an input cannot be opened or read, when ``out`` is one of the
            inputs, or when ``out`` cannot be read or written.
    """
    sources = [str(p) for p in paths]
    _output.check_inputs(sources, str(out))
    rejected = skipped = 0

    def report(error: UnsupportedSourceError) -> None:
        nonlocal rejected
        rejected += 1
        if on_error is not None:
            on_error(error)

    def skip(_source: str, _line: int) -> None:
        nonlocal skipped
        skipped += 1

    existing = _output.existing_records(str(out))
    with _output.LazyWriter(str(out), stream=stream) as writer:
        for bundle in read_files(sources, on_error=report, existing=existing, on_skip=skip):
            writer.write(bundle)
    return ImportSummary(imported=writer.count, rejected=rejected, skipped=skipped)
