# generated from schemas/v1alpha1/ by `python -m codegen`; do not edit (CI runs `python -m codegen --check`)
"""Record models of kernelindex.dev/v1alpha1."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeAlias

import attrs

from .._base.timestamps import utc_milliseconds

SchemaReference: TypeAlias = str
"""
The JSON Schema the record follows, such as https://kernelindex.dev/schemas/v1alpha1/bundle.json, so that editors can find it; optional, never part of any digest, and not checked against the record's kind.
"""


ApiVersion: TypeAlias = Literal["kernelindex.dev/v1alpha1"]
"""
Version of the record format; always kernelindex.dev/v1alpha1 for these schemas.
"""


Name: TypeAlias = str
"""
Object name in Kubernetes object-name style: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 253 characters.
"""


StringMap: TypeAlias = dict[str, str]
"""
Free-form string-to-string map: a deliberate extension point; keys are 1 to 253 characters of letters, digits, '-', '_', '.' and '/'.
"""


@attrs.frozen(kw_only=True)
class ObjectMeta:
    """Identifying metadata of a record; never part of any digest, so renaming or
    relabelling a record keeps its digests."""

    name: Name
    """Unique name of the record."""
    title: str | None = attrs.field(default=None)
    """Short human-readable title."""
    description: str | None = attrs.field(default=None)
    """Longer human-readable description."""
    labels: StringMap | None = attrs.field(default=None)
    """Identifying string-to-string pairs for selection and grouping; an extension point,
    so any key of the allowed form is accepted."""
    annotations: StringMap | None = attrs.field(default=None)
    """Non-identifying string-to-string pairs, the place for volatile facts (host name,
    clock readings) that must stay out of digests; an extension point, so any key of the
    allowed form is accepted."""


Digest: TypeAlias = str
"""
A sha256 digest: 'sha256:' followed by 64 lowercase hexadecimal digits.
"""


SafeInteger: TypeAlias = int
"""
An integer that survives JSON numbers of double precision, within +-(2^53 - 1), so it can enter an RFC 8785 digest.
"""


NonNegativeSafeInteger: TypeAlias = int
"""
An integer from 0 to 2^53 - 1.
"""


Statistic: TypeAlias = Literal[
    "mean",
    "median",
    "min",
    "max",
    "stddev",
    "p5",
    "p10",
    "p20",
    "p25",
    "p75",
    "p80",
    "p90",
    "p95",
    "p99",
]
"""
A statistic over repeated samples: mean, median, min, max, stddev, or a percentile pNN.
"""


Unit: TypeAlias = Literal[
    "ns",
    "us",
    "ms",
    "s",
    "B",
    "KiB",
    "MiB",
    "GiB",
    "B/s",
    "GB/s",
    "TB/s",
    "FLOP/s",
    "GFLOP/s",
    "TFLOP/s",
    "1",
]
"""
Unit of a measured value: time (ns, us, ms, s), bytes in binary multiples (B, KiB, MiB, GiB), rates (B/s, GB/s, TB/s, FLOP/s, GFLOP/s, TFLOP/s) or 1 for a dimensionless count or ratio.
"""


Metric: TypeAlias = str
"""
What a measurement measures, in snake_case, such as latency, memory, bandwidth or throughput.
"""


Timer: TypeAlias = Literal["cuda_events", "cuda_graph", "wall_clock", "not_applicable"]
"""
How durations were read: cuda_events (device events around the timed region), cuda_graph (events around graph replays), wall_clock (a host monotonic clock after synchronizing), or not_applicable when nothing was timed (memory measurements).
"""


Pass: TypeAlias = Literal["forward", "backward", "full", "no_grad_forward"]
"""
Which pass of an operation was measured: forward, backward, full (forward and backward) or no_grad_forward (forward with autograd disabled).
"""


Scalar: TypeAlias = str | bool | SafeInteger | float
"""
A JSON scalar that can enter a digest: a string, a boolean, or a number whose integral values stay within +-(2^53 - 1) (RFC 8785 cannot carry larger integers exactly).
"""


ScalarMap: TypeAlias = dict[str, Scalar]
"""
A map from parameter names to scalars; an extension point, so any key of the allowed form is accepted.
"""


RunStatus: TypeAlias = Literal["passed", "unverified", "failed"]
"""
Outcome of the run: passed (it ran and its output was checked against a reference), unverified (it ran, its output was not checked) or failed (no valid measurement; failure says why).
"""


@attrs.frozen(kw_only=True)
class LatencyNs:
    """Latency statistics in integer nanoseconds."""

    mean: NonNegativeSafeInteger | None = attrs.field(default=None)
    """Mean latency, ns."""
    median: NonNegativeSafeInteger | None = attrs.field(default=None)
    """Median latency, ns."""
    min: NonNegativeSafeInteger | None = attrs.field(default=None)
    """Minimum latency, ns."""
    max: NonNegativeSafeInteger | None = attrs.field(default=None)
    """Maximum latency, ns."""
    stddev: NonNegativeSafeInteger | None = attrs.field(default=None)
    """Standard deviation of latency, ns."""
    p5: NonNegativeSafeInteger | None = attrs.field(default=None)
    """5th percentile latency, ns."""
    p10: NonNegativeSafeInteger | None = attrs.field(default=None)
    """10th percentile latency, ns."""
    p20: NonNegativeSafeInteger | None = attrs.field(default=None)
    """20th percentile latency, ns."""
    p25: NonNegativeSafeInteger | None = attrs.field(default=None)
    """25th percentile latency, ns."""
    p75: NonNegativeSafeInteger | None = attrs.field(default=None)
    """75th percentile latency, ns."""
    p80: NonNegativeSafeInteger | None = attrs.field(default=None)
    """80th percentile latency, ns."""
    p90: NonNegativeSafeInteger | None = attrs.field(default=None)
    """90th percentile latency, ns."""
    p95: NonNegativeSafeInteger | None = attrs.field(default=None)
    """95th percentile latency, ns."""
    p99: NonNegativeSafeInteger | None = attrs.field(default=None)
    """99th percentile latency, ns."""


@attrs.frozen(kw_only=True)
class Measurement:
    """One measured value."""

    metric: Metric
    statistic: Statistic
    unit: Unit
    value: float
    """The value, in unit."""


@attrs.frozen(kw_only=True)
class Failure:
    """Why a failed run has no valid measurement."""

    reason: Literal["mismatch", "error", "out_of_memory", "timeout", "unsupported"]
    """Class of failure: mismatch (output differs from the reference), error (an
    exception), out_of_memory, timeout, or unsupported (the implementation cannot run
    this workload here)."""
    message: str
    """What went wrong, in one line."""


@attrs.frozen(kw_only=True)
class Correctness:
    """Evidence that the output was checked: the reference, the tolerances and the largest
    errors found."""

    reference: str
    """What the output was compared with, such as a Python entry point."""
    atol: float
    """Absolute tolerance."""
    rtol: float
    """Relative tolerance."""
    max_abs_error: float = attrs.field(metadata={"wire": "maxAbsError"})
    """Largest absolute difference between output and reference."""
    max_rel_error: float = attrs.field(metadata={"wire": "maxRelError"})
    """Largest difference relative to the reference's magnitude."""


@attrs.frozen(kw_only=True)
class SourceNative:
    """What the producing tool reported, untranslated."""

    source: str
    """The producing tool, such as liger-kernel-bench or kernelindex-sdk."""
    benchmark: str | None = attrs.field(default=None)
    """The producing tool's name for the benchmark."""
    external_id: str | None = attrs.field(default=None, metadata={"wire": "externalId"})
    """The producing tool's identifier for this data point."""
    metrics: ScalarMap | None = attrs.field(default=None)
    """The producing tool's own values under its own names, unchanged; an extension point,
    so any key of the allowed form is accepted."""


@attrs.frozen(kw_only=True)
class Workload:
    """What was computed: operation, pass, shape parameters, data types and every option
    that changes the work. Its digest is workloadDigest; nothing volatile belongs here."""

    operation: str
    """The operation, in snake_case, such as jsd or cross_entropy."""
    pass_: Pass = attrs.field(metadata={"wire": "pass"})
    parameters: ScalarMap
    """Shape parameters and options, such as tokens, vocab, beta or dtype; an extension
    point, so any key of the allowed form is accepted."""
    bytes_moved: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "bytesMoved"}
    )
    """The fewest bytes the workload must move through device memory (each input read once,
    each output written once); achieved bandwidth is this over the latency."""


@attrs.frozen(kw_only=True)
class Implementation:
    """What computed the workload: provider, packages and versions, a digest of the
    kernel's source and any chosen configuration. Its digest is implementationDigest;
    nothing volatile belongs here."""

    provider: str
    """The implementation's provider, such as torch, triton, liger or huggingface."""
    entry_point: str | None = attrs.field(default=None, metadata={"wire": "entryPoint"})
    """The callable that was timed, as module:qualname."""
    packages: StringMap | None = attrs.field(default=None)
    """Versions of the packages that supply the implementation, by distribution name; an
    extension point, so any key of the allowed form is accepted."""
    source_digest: Digest | None = attrs.field(default=None, metadata={"wire": "sourceDigest"})
    """Digest of the implementation's source code."""
    config: ScalarMap | None = attrs.field(default=None)
    """Launch configuration chosen for this workload (an autotuned kernel's block sizes,
    warps and stages); an extension point, so any key of the allowed form is accepted."""


ThrottleReason: TypeAlias = str


@attrs.frozen(kw_only=True)
class CpuState:
    """How much of the CPUs this process could run on other processes used while a CPU
    (wall-clock) timing was taken, from the kernel's counters (Linux: /proc/stat).
    Recorded for CPU timings only: a GPU timing's host is often shared by design."""

    available_cpus: int = attrs.field(metadata={"wire": "availableCpus"})
    """The logical CPUs the process could run on (its CPU affinity), over which the
    fractions are taken."""
    window_ms: float = attrs.field(metadata={"wire": "windowMs"})
    """How long the state was read over, milliseconds: the timed loop, and when that was
    shorter than the sampler's shortest window (0.25 s in the harness), the moments
    after it up to that window, since the counters tick every 10 ms."""
    others_busy_fraction: float = attrs.field(metadata={"wire": "othersBusyFraction"})
    """The share of the available CPUs' time over the window spent on anything but this
    process: other processes, the kernel's work for them, and time the hypervisor gave
    to other guests (steal); 0 to 1."""
    online_cpus: int | None = attrs.field(default=None, metadata={"wire": "onlineCpus"})
    """The logical CPUs the machine had online."""
    own_busy_fraction: float | None = attrs.field(
        default=None, metadata={"wire": "ownBusyFraction"}
    )
    """The share of the available CPUs' time over the window this process used (all its
    threads); 0 to 1."""
    load_average1m_at_start: float | None = attrs.field(
        default=None, metadata={"wire": "loadAverage1mAtStart"}
    )
    """The machine's 1-minute load average when the window began."""
    load_average1m_at_end: float | None = attrs.field(
        default=None, metadata={"wire": "loadAverage1mAtEnd"}
    )
    """The machine's 1-minute load average when the window ended."""


@attrs.frozen(kw_only=True)
class SampledRange:
    """A quantity sampled several times: its smallest, median and largest value (min <=
    median <= max)."""

    min: float
    """The smallest value sampled."""
    median: float
    """The median of the values sampled."""
    max: float
    """The largest value sampled."""


@attrs.frozen(kw_only=True)
class Harness:
    """The program that took the measurements."""

    name: str
    """Harness name."""
    version: str | None = attrs.field(default=None)
    """Harness version."""
    repository: str | None = attrs.field(default=None)
    """Where the harness's source lives."""


@attrs.frozen(kw_only=True)
class L2Flush:
    """How the device's last-level cache was cleared between timed calls."""

    policy: Literal["none", "buffer_write", "buffer_read"]
    """none (not flushed), buffer_write (a buffer at least as large as flushBytes written
    before each call: the timed call may pay for writing the flush's dirty lines back),
    or buffer_read (a buffer of flushBytes read with ordinary loads before each call:
    only clean lines are left behind)."""
    flush_bytes: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "flushBytes"}
    )
    """Size of the flush buffer, bytes."""
    l2_bytes: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "l2Bytes"}
    )
    """The device's L2 size as the runtime reported it, bytes."""


@attrs.frozen(kw_only=True)
class CorrectnessPolicy:
    """How outputs were checked before timing."""

    method: Literal["allclose", "none"]
    """allclose (|out - ref| <= atol + rtol * |ref| elementwise) or none."""
    notes: str | None = attrs.field(default=None)
    """Anything else about the check."""


@attrs.frozen(kw_only=True)
class Comparability:
    """When numbers taken under this protocol may be compared."""

    family: str | None = attrs.field(default=None)
    """Protocols of one family produce comparable numbers, in snake_case."""
    notes: str | None = attrs.field(default=None)
    """Caveats in words."""


@attrs.frozen(kw_only=True)
class DeviceSettings:
    """The device settings an administrator changed away from the device's defaults, which
    last from run to run and change what a time means (NVIDIA: nvidia-smi -ac, -pl). A
    setting appears only when it differs from its default, so a machine at its defaults
    has no settings and keeps the digest it had before they were recorded: absent means
    at its default, or unknown. What varies while a run is timed (clocks, power,
    throttling) is the run's conditions instead, never digested."""

    applications_sm_clock_mhz: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "applicationsSmClockMhz"}
    )
    """The applications SM clock set (nvidia-smi -ac), MHz; given with
    applicationsMemoryClockMhz when either differs from its default."""
    applications_memory_clock_mhz: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "applicationsMemoryClockMhz"}
    )
    """The applications memory clock set (nvidia-smi -ac), MHz."""
    power_limit_w: float | None = attrs.field(default=None, metadata={"wire": "powerLimitW"})
    """The power management limit set (nvidia-smi -pl), watts, when it differs from the
    default limit."""


@attrs.frozen(kw_only=True)
class Hardware:
    """The accelerator (or CPU) that ran the work."""

    vendor: str
    """Vendor in lowercase, such as nvidia, amd, intel or cpu."""
    product: str
    """Product name as the driver reports it, such as NVIDIA B200."""
    architecture: str | None = attrs.field(default=None)
    """Instruction-set architecture, such as sm_100 for NVIDIA compute capability 10.0,
    gfx942, or x86_64."""
    memory_bytes: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "memoryBytes"}
    )
    """Device memory, bytes."""
    multiprocessors: NonNegativeSafeInteger | None = attrs.field(default=None)
    """Streaming multiprocessors (or compute units, or CPU cores)."""
    l2_cache_bytes: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "l2CacheBytes"}
    )
    """Last-level cache size as the runtime reports it, bytes."""


@attrs.frozen(kw_only=True)
class Timing:
    """Latency of the timed region."""

    latency_ns: LatencyNs = attrs.field(metadata={"wire": "latencyNs"})
    primary_statistic: Statistic = attrs.field(metadata={"wire": "primaryStatistic"})
    """The statistic of latencyNs that represents the run; latencyNs must carry it."""
    samples: int | None = attrs.field(default=None)
    """How many timed samples the statistics were computed from."""


@attrs.frozen(kw_only=True)
class GpuState:
    """A GPU's state over the timed loop, as its driver reports it (NVIDIA: NVML)."""

    samples: int
    """How many times the state was read during the timed loop."""
    sm_clock_mhz: SampledRange | None = attrs.field(default=None, metadata={"wire": "smClockMhz"})
    """The SM (graphics) clock over the samples taken, MHz: the smallest, the median and
    the largest."""
    memory_clock_mhz: SampledRange | None = attrs.field(
        default=None, metadata={"wire": "memoryClockMhz"}
    )
    """The memory clock over the samples taken, MHz: the smallest, the median and the
    largest."""
    applications_sm_clock_mhz: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "applicationsSmClockMhz"}
    )
    """The SM clock the driver's applications-clocks setting targets, MHz."""
    applications_memory_clock_mhz: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "applicationsMemoryClockMhz"}
    )
    """The memory clock the applications-clocks setting targets, MHz."""
    max_sm_clock_mhz: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "maxSmClockMhz"}
    )
    """The highest SM clock the GPU supports, MHz."""
    max_memory_clock_mhz: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "maxMemoryClockMhz"}
    )
    """The highest memory clock the GPU supports, MHz."""
    power_w: SampledRange | None = attrs.field(default=None, metadata={"wire": "powerW"})
    """Power draw over the samples taken, watts: the smallest, the median and the largest."""
    power_limit_w: float | None = attrs.field(default=None, metadata={"wire": "powerLimitW"})
    """The power limit the driver enforces, watts."""
    temperature_c: SampledRange | None = attrs.field(
        default=None, metadata={"wire": "temperatureC"}
    )
    """GPU temperature over the samples taken, degrees Celsius: the smallest, the median
    and the largest."""
    throttle_reasons: list[ThrottleReason] | None = attrs.field(
        default=None, metadata={"wire": "throttleReasons"}
    )
    """Every reason the driver gave for holding the clocks down at any sample, by the
    driver's own name (NVML: SwPowerCap, HwSlowdown, SwThermalSlowdown,
    HwThermalSlowdown, HwPowerBrakeSlowdown, SyncBoost, ApplicationsClocksSetting,
    DisplayClockSetting), sorted; an idle GPU's reason (GpuIdle) is left out. Empty:
    none seen."""


@attrs.frozen(kw_only=True)
class MeasurementMethod:
    """How each value was taken and summarized."""

    timer: Timer
    primary_statistic: Statistic = attrs.field(metadata={"wire": "primaryStatistic"})
    """The statistic that represents a run."""
    quantile_method: Literal["linear", "lower", "higher", "nearest", "midpoint"] | None = (
        attrs.field(default=None, metadata={"wire": "quantileMethod"})
    )
    """How quantiles are computed from the samples, such as 'linear' (numpy and
    torch.quantile's default interpolation)."""
    warmup_ms: float | None = attrs.field(default=None, metadata={"wire": "warmupMs"})
    """Warm-up time requested before timing, ms."""
    repetition_ms: float | None = attrs.field(default=None, metadata={"wire": "repetitionMs"})
    """Timed repetition time requested, ms (triton.testing.do_bench's rep)."""
    min_samples: NonNegativeSafeInteger | None = attrs.field(
        default=None, metadata={"wire": "minSamples"}
    )
    """Fewest timed samples behind any statistic."""
    l2_flush: L2Flush | None = attrs.field(default=None, metadata={"wire": "l2Flush"})
    notes: str | None = attrs.field(default=None)
    """What exactly was timed, in words."""


@attrs.frozen(kw_only=True)
class EnvironmentSpec:
    """The content of an environment."""

    hardware: Hardware
    software: StringMap
    """Software versions by component name (driver, cuda, torch, triton, python, ...); an
    extension point, so any key of the allowed form is accepted."""
    settings: DeviceSettings | None = attrs.field(default=None)


@attrs.frozen(kw_only=True)
class Conditions:
    """The state the machine was in while the run was timed, read during the timed loop (a
    GPU's clocks, power, temperature and throttling; for a CPU timing, how much of the
    CPUs other processes used): an observation, never part of any digest, so two runs of
    one benchmark keep their digests whatever state they met. A run whose state makes
    its timing unfit to compare is degraded (kernelindex_sdk.conditions.degraded_reason
    says why)."""

    gpu: GpuState | None = attrs.field(default=None)
    cpu: CpuState | None = attrs.field(default=None)


@attrs.frozen(kw_only=True)
class ProtocolSpec:
    """The content of a protocol; nothing volatile belongs here."""

    harness: Harness
    measurement: MeasurementMethod
    correctness: CorrectnessPolicy | None = attrs.field(default=None)
    comparability: Comparability | None = attrs.field(default=None)


@attrs.frozen(kw_only=True)
class ExecutionEnvironment:
    """Where runs ran: hardware and software. Its spec's digest is environmentDigest, so it
    holds nothing volatile."""

    api_version: ApiVersion = attrs.field(
        default="kernelindex.dev/v1alpha1", metadata={"wire": "apiVersion"}
    )
    kind: Literal["ExecutionEnvironment"] = attrs.field(default="ExecutionEnvironment")
    """Record kind; always ExecutionEnvironment."""
    metadata: ObjectMeta
    spec: EnvironmentSpec
    schema: SchemaReference | None = attrs.field(default=None, metadata={"wire": "$schema"})


@attrs.frozen(kw_only=True)
class RunSpec:
    """The content of a run."""

    status: RunStatus
    observed_at: datetime = attrs.field(converter=utc_milliseconds, metadata={"wire": "observedAt"})
    """When the run was observed: RFC 3339 UTC timestamp with exactly three fractional
    digits and 'Z', as in 2026-05-27T17:14:29.000Z; year 0000 is not allowed. The
    pattern fixes the shape in every validator; calendar validity (no 2026-02-30) is
    format: date-time, which JSON Schema 2020-12 only annotates: a validator checks it
    only with format assertion on (kernelindex validate and load_record always do;
    jsonschema-rs needs validate_formats, ajv needs ajv-formats, check-jsonschema checks
    it by default)."""
    protocol_digest: Digest = attrs.field(metadata={"wire": "protocolDigest"})
    """Digest of the BenchmarkProtocol spec the run followed."""
    workload_digest: Digest = attrs.field(metadata={"wire": "workloadDigest"})
    """Digest of the workload (what was computed); recomputable when spec.workload is
    present."""
    environment_digest: Digest = attrs.field(metadata={"wire": "environmentDigest"})
    """Digest of the ExecutionEnvironment spec the run ran in."""
    implementation_digest: Digest = attrs.field(metadata={"wire": "implementationDigest"})
    """Digest of the implementation (what computed it); recomputable when
    spec.implementation is present."""
    timing: Timing | None = attrs.field(default=None)
    measurements: list[Measurement] | None = attrs.field(default=None)
    """Measured values beyond timing.latencyNs, such as latency percentiles, memory or
    achieved bandwidth."""
    failure: Failure | None = attrs.field(default=None)
    correctness: Correctness | None = attrs.field(default=None)
    source_native: SourceNative | None = attrs.field(
        default=None, metadata={"wire": "sourceNative"}
    )
    conditions: Conditions | None = attrs.field(default=None)
    workload: Workload | None = attrs.field(default=None)
    implementation: Implementation | None = attrs.field(default=None)


@attrs.frozen(kw_only=True)
class BenchmarkProtocol:
    """How measurements were taken: everything that decides whether two runs' numbers are
    comparable. Its spec's digest is protocolDigest."""

    api_version: ApiVersion = attrs.field(
        default="kernelindex.dev/v1alpha1", metadata={"wire": "apiVersion"}
    )
    kind: Literal["BenchmarkProtocol"] = attrs.field(default="BenchmarkProtocol")
    """Record kind; always BenchmarkProtocol."""
    metadata: ObjectMeta
    spec: ProtocolSpec
    schema: SchemaReference | None = attrs.field(default=None, metadata={"wire": "$schema"})


@attrs.frozen(kw_only=True)
class BenchmarkRun:
    """One measured benchmark point: what was computed, by what, where, under which
    protocol, and what was measured."""

    api_version: ApiVersion = attrs.field(
        default="kernelindex.dev/v1alpha1", metadata={"wire": "apiVersion"}
    )
    kind: Literal["BenchmarkRun"] = attrs.field(default="BenchmarkRun")
    """Record kind; always BenchmarkRun."""
    metadata: ObjectMeta
    spec: RunSpec
    schema: SchemaReference | None = attrs.field(default=None, metadata={"wire": "$schema"})


@attrs.frozen(kw_only=True)
class RecordBundle:
    """A run together with the protocol and environment it refers to, as records are
    published."""

    run: BenchmarkRun
    """The benchmark run."""
    schema: SchemaReference | None = attrs.field(default=None, metadata={"wire": "$schema"})
    protocol: BenchmarkProtocol | None = attrs.field(default=None)
    """The protocol whose spec digest is run.spec.protocolDigest."""
    environment: ExecutionEnvironment | None = attrs.field(default=None)
    """The environment whose spec digest is run.spec.environmentDigest."""
