"""The benchmark harness: any kernel in, a validated and digested record bundle out.

``bench()`` checks a callable's output against a reference on the same inputs, times it
(CUDA events or CUDA-graph replays on a GPU, a wall clock on the CPU; see :mod:`.timing`),
and returns a RecordBundle whose protocol says everything that decides comparability: timer,
statistics and quantile method, warm-up, the sample floor, and the L2 flush. On a GPU the
GPU's state over the timed loop (clocks, power, temperature, throttle reasons), on the CPU
the share of the CPUs other processes used meanwhile, goes into ``run.spec.conditions``, an
observation no digest covers; inside a git repository (or CI) the run gets the provenance
annotations of the code measured.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, Final, NamedTuple

import attrs
import torch

from .. import __version__, digest, load_record
from .._base import names as _names
from .._base.noise import NOISY_ANNOTATION, is_noisy
from .._base.schemas import API_VERSION as API
from ..conditions import CpuSampler, GpuSampler, sample_cpu, sample_gpu
from ..conditions.nvml import say_once
from ..convert import format_observed_at
from ..errors import ArgumentError
from ..models import RecordBundle
from ..provenance import Provenance, detect
from ..validation import check
from .device import nvml_device
from .environment import environment_spec, volatile_annotations
from .timing import (
    CPU_WARMUP_CALLS,
    WARMUP_MS,
    Measured,
    ReadFlush,
    flush_bytes,
    l2_bytes,
    time_cuda_events,
    time_cuda_graph,
    time_wall_clock,
)

__all__ = [
    "MIN_SAMPLES",
    "TIMERS",
    "Check",
    "Measured",
    "bench",
    "failed_record",
    "noise_annotations",
    "protocol_spec",
    "source_digest",
    "timer_for",
]

MIN_SAMPLES: Final = 100
#: Timers a GPU run can use: CUDA events around each call as made (host launch included
#: when the GPU waits for it), or events around CUDA-graph replays (the GPU's time alone).
TIMERS: Final = ("cuda-events", "cuda-graph")
REPOSITORY: Final = "https://github.com/kernelindex/kernelindex-sdk"


def timer_for(device: torch.device, timer: str = "cuda-events") -> str:
    """The protocol timer the harness uses on ``device`` when asked for ``timer``."""
    if device.type != "cuda":
        return "wall_clock"
    return timer.replace("-", "_")


def protocol_spec(
    device: torch.device, *, min_samples: int = MIN_SAMPLES, timer: str = "cuda-events"
) -> dict[str, Any]:
    """Return the BenchmarkProtocol spec the harness follows on ``device`` with ``timer``.

    Raises:
        ArgumentError: for a timer not in :data:`TIMERS` (it is a ValueError too).
    """
    if timer not in TIMERS:
        raise ArgumentError(
            argument="timer", reason=f"unknown timer {timer!r}; expected one of {', '.join(TIMERS)}"
        )
    harness = {"name": "kernelindex-sdk harness", "version": __version__, "repository": REPOSITORY}
    correctness = {
        "method": "allclose",
        "notes": "before timing, the output is compared with the reference's on the same inputs",
    }
    if device.type == "cuda" and timer == "cuda-graph":
        measurement: dict[str, Any] = {
            "timer": "cuda_graph",
            "primaryStatistic": "median",
            "quantileMethod": "linear",
            "minSamples": min_samples,
            "l2Flush": {"policy": "none"},
            "notes": (
                "triton.testing.do_bench_cudagraph(fn, rep=5, grad_to_none=inputs,"
                " return_mode='all') on a side stream, called until at least minSamples"
                " samples; each sample is CUDA events around one replay of a graph of"
                " back-to-back calls, divided by their number: the GPU's time alone, no host"
                " launch cost, L2 not flushed between calls; median, p20 and p80 of them."
            ),
        }
        family = "kernelindex_do_bench_cudagraph_cuda"
    elif device.type == "cuda":
        measurement = {
            "timer": "cuda_events",
            "primaryStatistic": "median",
            "quantileMethod": "linear",
            "warmupMs": WARMUP_MS,
            "minSamples": min_samples,
            "l2Flush": {
                "policy": "buffer_read",
                "flushBytes": flush_bytes(device),
                "l2Bytes": l2_bytes(device),
            },
            "notes": (
                "kernelindex_sdk.reference_kernels.timing.time_cuda_events: as"
                " triton.testing.do_bench(fn, grad_to_none=inputs) - CUDA events around each"
                " call, warm-up, about 100 ms of calls - but L2 cleared before each call by"
                " reading (not writing) a buffer of flushBytes, so no write-back of the flush"
                " lands in the timed call; at least minSamples samples; median, p20 and p80."
            ),
        }
        family = "kernelindex_cuda_events"
    else:
        measurement = {
            "timer": "wall_clock",
            "primaryStatistic": "median",
            "quantileMethod": "linear",
            "minSamples": min_samples,
            "l2Flush": {"policy": "none"},
            "notes": (
                f"CPU fallback: time.perf_counter_ns around each call after {CPU_WARMUP_CALLS}"
                " warm-up calls; Triton kernels run in its interpreter (TRITON_INTERPRET=1)."
                " Useful for checking records, not for comparing speeds with GPU runs."
            ),
        }
        family = "kernelindex_wall_clock_cpu"
    return {
        "harness": harness,
        "measurement": measurement,
        "correctness": correctness,
        "comparability": {
            "family": family,
            "notes": "Comparable only within one workload digest, environment and protocol.",
        },
    }


def source_digest(*objects: Any) -> str:
    """Digest of the source files that define ``objects`` (modules, classes, functions)."""
    hasher = hashlib.sha256()
    for obj in objects:
        hasher.update(inspect.getsource(inspect.getmodule(obj) or obj).encode())
    return "sha256:" + hasher.hexdigest()


def _flatten(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    raise TypeError(f"outputs must be tensors or tuples of tensors, got {type(value).__name__}")


def _compare(out: Any, ref: Any, atol: float, rtol: float) -> tuple[bool, float, float]:
    """Return (allclose, max |out - ref|, max |out - ref| / max |ref|) of one output."""
    outs, refs = _flatten(out), _flatten(ref)
    if len(outs) != len(refs):
        return False, math.inf, math.inf
    ok, max_abs, max_rel = True, 0.0, 0.0
    for o, r in zip(outs, refs, strict=True):
        if o.shape != r.shape:
            return False, math.inf, math.inf
        o64, r64 = o.detach().double(), r.detach().double().to(o.device)
        diff = (o64 - r64).abs()
        worst = float(diff.max()) if diff.numel() else 0.0
        if not math.isfinite(worst):
            return False, math.inf, math.inf
        scale = float(r64.abs().max()) if r64.numel() else 0.0
        max_abs = max(max_abs, worst)
        max_rel = max(max_rel, worst / scale if scale else (0.0 if worst == 0 else math.inf))
        ok = ok and bool(torch.allclose(o64, r64, atol=atol, rtol=rtol))
    return ok, max_abs, max_rel


@attrs.frozen
class Check:
    """One further output checked beside the first (a gradient, say), with its own tolerances.

    Attributes:
        name: snake_case name of the output, used in the record (``grad_input``).
        atol: Absolute tolerance.
        rtol: Relative tolerance.
    """

    name: str
    atol: float
    rtol: float
    #: atol is a fraction of the reference output's largest magnitude (for outputs, such as
    #: gradients, whose scale depends on the problem's size).
    relative_atol: bool = False
    #: The smallest atol, whatever the scale (a dtype's subnormal spacing, say).
    atol_floor: float = 0.0


def noise_annotations(measured: Measured) -> dict[str, str]:
    """The noisy-run annotation of a timing whose spread passes the one noise rule, else none.

    The rule is :func:`kernelindex_sdk._base.noise.is_noisy` on the p20 and p80 the record
    carries (integer ns): p80 / p20 above 1.10. The value is the ratio rounded up to
    three decimals, so that it always reads above the threshold (a noisy 1.1001 is
    ``"1.101"``, never ``"1.100"``), e.g. ``{"kernelindex.dev/noisy": "1.423"}``. An
    annotation, never digested: a noisy run is an observation about one measurement, not
    a different benchmark.

    Args:
        measured: The run's samples.

    Returns:
        ``{NOISY_ANNOTATION: ratio}`` for a noisy run, an empty dict for a clean one.
    """
    p20, p80 = measured.quantile_ns(0.2), measured.quantile_ns(0.8)
    if not is_noisy(p20, p80):
        return {}
    # Integer ns: the thousandths rounded up exactly, with no float error (1.423 stays 1.423).
    milli = -(-p80 * 1000 // p20)
    return {NOISY_ANNOTATION: f"{milli // 1000}.{milli % 1000:03d}"}


def _one_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip().splitlines()
    return (text[0] if text else type(err).__name__)[:4096]


def _finite(value: float) -> float:
    # Infinite errors (shape mismatch, NaN output) cannot be JSON; the status says failed.
    return value if math.isfinite(value) else 1.7976931348623157e308


def bench(
    fn: Callable[[], Any],
    *,
    workload: dict[str, Any],
    implementation: dict[str, Any],
    reference: Callable[[], Any] | None = None,
    reference_name: str = "reference",
    atol: float = 1e-6,
    rtol: float = 1e-5,
    grad_to_none: Sequence[torch.Tensor] = (),
    device: torch.device | None = None,
    min_samples: int = MIN_SAMPLES,
    timer: str = "cuda-events",
    output: Callable[[], Any] | None = None,
    further: Sequence[Check] = (),
    title: str | None = None,
    slug: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    gpu_state: bool = True,
    cpu_state: bool = True,
    provenance: Provenance | None = None,
) -> RecordBundle:
    """Check ``fn`` against ``reference``, time it, and return the record bundle.

    Args:
        fn: The timed call, with its inputs bound; returns a tensor or tuple of tensors.
        workload: The run's ``spec.workload`` (operation, pass, parameters, bytesMoved).
        implementation: The run's ``spec.implementation`` (provider, packages, ...).
        reference: The same computation by a trusted implementation on the same inputs;
            without it the run is ``unverified``.
        reference_name: What the reference is, for the record.
        atol: Absolute tolerance of the check.
        rtol: Relative tolerance of the check.
        grad_to_none: Tensors whose ``.grad`` is reset before each timed call.
        device: Where ``fn`` runs; the current CUDA device when there is one, else the CPU.
        min_samples: The fewest timing samples behind the statistics.
        timer: ``cuda-events`` (each call as made) or ``cuda-graph`` (graph replays: the
            GPU's time alone); part of the protocol, so each has its own protocol digest.
            The CPU always uses a wall clock.
        output: What is compared with the reference, by default ``fn``'s result. With
            ``further`` checks it returns a tuple: the first output, then one per check.
        further: Outputs after the first, each with its own tolerances; their largest
            errors become measurements (``<name>_max_abs_error``, ``<name>_max_rel_error``).
        title: The run's title; by default from the operation, provider and pass.
        slug: The workload part of the run's name; by default from its parameters.
        labels: The run's labels.
        annotations: Facts the code chose or observed at run time (an autotuner's pick),
            kept in the run's annotations, which no digest covers. A timed run whose
            p80 / p20 passes the noise rule also gets ``kernelindex.dev/noisy`` there
            (:func:`noise_annotations`).
        gpu_state: Sample the GPU's state over the timed loop into ``run.spec.conditions``
            (:func:`kernelindex_sdk.conditions.sample_gpu`; a GPU timer only). Without
            NVML, or where it refuses, the run says so once and records none.
        cpu_state: On the CPU, record how much of the CPUs other processes used over the
            timed loop into ``run.spec.conditions``
            (:func:`kernelindex_sdk.conditions.sample_cpu`, from ``/proc/stat``; the wall
            clock only). Where ``/proc/stat`` does not exist it records none.
        provenance: Where the measured code came from (commit, branch, commit time), as
            run annotations; by default :func:`kernelindex_sdk.provenance.detect`: CI's
            variables, else ``git`` in the working directory, else none. ``Provenance()``
            records none. A part ``annotations`` already gives is kept.

    Returns:
        A RecordBundle whose run passed (every output checked, then timed), is unverified
        (timed, no reference) or failed (mismatch, error or out of memory: no timing),
        validated with every digest verified. A failure of the reference or of the
        harness itself is recorded as such, never blamed on ``fn``.

    Raises:
        ArgumentError: for a timer not in :data:`TIMERS` (it is a ValueError too).
    """
    device = _device(device)
    spec, protocol, environment = _run_spec(device, workload, implementation, min_samples, timer)
    checks = [Check(name="output", atol=atol, rtol=rtol), *further]
    outcome = _attempt(
        fn,
        output or fn,
        reference,
        reference_name,
        checks,
        grad_to_none,
        device,
        min_samples,
        timer,
        gpu_state=gpu_state,
        cpu_state=cpu_state,
    )
    _record_outcome(spec, outcome, verified=reference is not None, workload=workload)
    notes = _notes(device, annotations, outcome.measured, further, provenance)
    return _bundle(
        spec, protocol, environment, device, title=title, slug=slug, labels=labels, notes=notes
    )


def failed_record(
    error: BaseException,
    *,
    workload: dict[str, Any],
    implementation: dict[str, Any],
    device: torch.device | None = None,
    min_samples: int = MIN_SAMPLES,
    timer: str = "cuda-events",
    title: str | None = None,
    slug: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    provenance: Provenance | None = None,
) -> RecordBundle:
    """The failed record of a run that could not be made: nothing checked, nothing timed.

    The record :func:`bench` returns for an ``fn`` that raises ``error``, without calling
    anything: ``out_of_memory`` for a CUDA out-of-memory error, otherwise ``error``, with
    the error's first line as the message.

    Args:
        error: Why the run failed.
        workload: The run's ``spec.workload``.
        implementation: The run's ``spec.implementation``.
        device: Where it was to run; the current CUDA device when there is one, else the CPU.
        min_samples: As for :func:`bench` (part of the protocol).
        timer: As for :func:`bench` (part of the protocol).
        title: As for :func:`bench`.
        slug: As for :func:`bench`.
        labels: As for :func:`bench`.
        annotations: As for :func:`bench`.
        provenance: As for :func:`bench`.

    Returns:
        A failed RecordBundle, validated with every digest verified.

    Raises:
        ArgumentError: for a timer not in :data:`TIMERS` (it is a ValueError too).
    """
    device = _device(device)
    spec, protocol, environment = _run_spec(device, workload, implementation, min_samples, timer)
    outcome = _Attempt(failure=_failure(error))
    _record_outcome(spec, outcome, verified=False, workload=workload)
    notes = _notes(device, annotations, None, (), provenance)
    return _bundle(
        spec, protocol, environment, device, title=title, slug=slug, labels=labels, notes=notes
    )


def _device(device: torch.device | None) -> torch.device:
    """``device``, else the current CUDA device when there is one, else the CPU."""
    if device is not None:
        return device
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _run_spec(
    device: torch.device,
    workload: dict[str, Any],
    implementation: dict[str, Any],
    min_samples: int,
    timer: str,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The run's spec before its outcome (when, what, digests), its protocol and environment."""
    observed = datetime.now(timezone.utc)
    protocol = protocol_spec(device, min_samples=min_samples, timer=timer)
    environment = environment_spec(device)
    spec: dict[str, Any] = {
        "observedAt": observed,
        "workload": workload,
        "implementation": implementation,
        "protocolDigest": digest.protocol_digest(protocol),
        "environmentDigest": digest.environment_digest(environment),
        "workloadDigest": digest.workload_digest(workload),
        "implementationDigest": digest.implementation_digest(implementation),
    }
    return spec, protocol, environment


def _record_outcome(
    spec: dict[str, Any], outcome: _Attempt, *, verified: bool, workload: dict[str, Any]
) -> None:
    """Write an attempt into the run's spec: status, failure, timing and measurements."""
    if outcome.correctness is not None:
        spec["correctness"] = outcome.correctness
    if outcome.failure is not None:
        spec.update(status="failed", failure=outcome.failure)
    errors = outcome.errors
    if errors:
        spec["measurements"] = errors
    measured = outcome.measured
    if measured is None:
        return
    if outcome.conditions is not None:
        spec["conditions"] = outcome.conditions
    spec["status"] = "passed" if verified else "unverified"
    spec["timing"] = {
        "latencyNs": {"median": measured.quantile_ns(0.5)},
        "primaryStatistic": "median",
        "samples": len(measured.samples_ms),
    }
    spec["measurements"] = [
        *errors,
        {"metric": "latency", "statistic": "p20", "unit": "ns", "value": measured.quantile_ns(0.2)},
        {"metric": "latency", "statistic": "p80", "unit": "ns", "value": measured.quantile_ns(0.8)},
    ]
    moved = workload.get("bytesMoved")
    median_ns = spec["timing"]["latencyNs"]["median"]
    if moved and median_ns:
        spec["measurements"].append(
            {
                "metric": "bandwidth",
                "statistic": "median",
                "unit": "GB/s",
                # bytes per ns is GB/s; six significant digits, whatever the size.
                "value": float(f"{moved / median_ns:.6g}"),
            }
        )


def _notes(
    device: torch.device,
    annotations: dict[str, str] | None,
    measured: Measured | None,
    further: Sequence[Check],
    provenance: Provenance | None,
) -> dict[str, str]:
    """The run's annotations: the host's facts, the caller's, the noise mark, tolerances,
    and the provenance the caller's did not give."""
    origin = detect() if provenance is None else provenance
    notes = {**volatile_annotations(device), **(annotations or {})}
    notes.update({k: v for k, v in origin.annotations().items() if k not in notes})
    if measured is not None:
        notes.update(noise_annotations(measured))
    for item in further:
        scale = " x max|reference|" if item.relative_atol else ""
        scale += f" (at least {item.atol_floor!r})" if item.atol_floor else ""
        notes[f"kernelindex.dev/{item.name.replace('_', '-')}-tolerance"] = (
            f"atol={item.atol!r}{scale} rtol={item.rtol!r}"
        )
    return notes


class _Attempt(NamedTuple):
    """What checking and timing a run gave; a failure leaves the later parts empty."""

    #: The evidence the first output matched its reference (None without a reference).
    correctness: dict[str, Any] | None = None
    #: Why the run failed (``reason`` and ``message``), or None.
    failure: dict[str, str] | None = None
    #: The timing samples, when the run was timed.
    measured: Measured | None = None
    #: The further outputs' largest errors, as measurements.
    errors: list[dict[str, Any]] = []  # noqa: RUF012 - a NamedTuple default, never mutated
    #: The GPU's or the CPUs' state over the timed loop (``run.spec.conditions``), when it
    #: was read.
    conditions: dict[str, Any] | None = None


def _failure(err: BaseException) -> dict[str, str]:
    """The record's failure for an error ``fn`` raised."""
    if isinstance(err, torch.cuda.OutOfMemoryError):
        return {"reason": "out_of_memory", "message": _one_line(err)}
    return {"reason": "error", "message": _one_line(err)}


def _blamed(message: str) -> dict[str, str]:
    """A failure that is not the implementation's (the reference's, the harness's own)."""
    return {"reason": "error", "message": message[:4096]}


def _attempt(  # noqa: PLR0911 - one return per kind of failure, each blamed apart
    fn: Callable[[], Any],
    output: Callable[[], Any],
    reference: Callable[[], Any] | None,
    reference_name: str,
    checks: Sequence[Check],
    grad_to_none: Sequence[torch.Tensor],
    device: torch.device,
    min_samples: int,
    timer: str,
    *,
    gpu_state: bool = True,
    cpu_state: bool = True,
) -> _Attempt:
    """Check, then time; on a GPU, sample its state over the timed loop (``gpu_state``); on
    the CPU, how much of the CPUs others used meanwhile (``cpu_state``).

    Only what ``fn`` (or ``output``) raises is the implementation's error; what the
    reference raises, or the comparison, is reported under its own name.
    """
    try:
        result = output()
    except Exception as err:  # any failure of the kernel becomes the record's
        return _Attempt(failure=_failure(err))
    correctness = None
    errors: list[dict[str, Any]] = []
    if reference is not None:
        try:
            expected = reference()
        except Exception as err:  # the reference's failure, not the kernel's
            return _Attempt(failure=_blamed(f"reference {reference_name} raised {_one_line(err)}"))
        try:
            outcome = _check_all(result, expected, checks)
        except Exception as err:
            message = f"harness error while comparing outputs: {_one_line(err)}"
            return _Attempt(failure=_blamed(message))
        first, errors, mismatch = outcome
        correctness = {"reference": reference_name, **first}
        if mismatch is not None:
            failure = {"reason": "mismatch", "message": mismatch}
            return _Attempt(correctness, failure, errors=errors)
    flush = None
    if device.type == "cuda" and timer == "cuda-events":
        try:
            flush = ReadFlush(device)
        except Exception as err:  # the harness's own buffer: not the kernel's failure
            message = f"harness could not allocate its L2 flush buffer: {_one_line(err)}"
            return _Attempt(correctness, _blamed(message), errors=errors)
    sampler: GpuSampler | CpuSampler | None
    if device.type != "cuda":
        # The wall clock only: a GPU timing's host is often shared by design, and the
        # GPU's own state says what the timed kernels met.
        sampler = sample_cpu() if cpu_state else None
    else:
        sampler = _sampler(device) if gpu_state else None
    try:
        if device.type != "cuda":
            measured = time_wall_clock(fn, min_samples, grad_to_none, around=sampler)
        elif timer == "cuda-graph":
            measured = time_cuda_graph(fn, grad_to_none, min_samples, around=sampler)
        else:
            measured = time_cuda_events(fn, grad_to_none, min_samples, flush=flush, around=sampler)
    except Exception as err:  # the kernel failed while being timed
        return _Attempt(correctness, _failure(err), errors=errors)
    conditions = sampler.result if sampler is not None else None
    return _Attempt(correctness, None, measured, errors, conditions)


def _sampler(device: torch.device) -> GpuSampler | None:
    """The GPU-state sampler of ``device``'s timed loop; None on the CPU, or when NVML's
    device cannot be told (said once)."""
    if device.type != "cuda":
        return None
    if torch.version.hip:
        say_once("NVML reads NVIDIA GPUs only")
        return None
    try:
        nvml = nvml_device(device)
    except Exception as err:  # the sampler is never the reason a run fails
        nvml, why = None, _one_line(err)
    else:
        why = "torch gives no UUID and CUDA_VISIBLE_DEVICES hides GPUs"
    if nvml is None:
        say_once(f"NVML's device for {device} cannot be told ({why})")
        return None
    return sample_gpu(nvml)


def _check_all(
    result: Any, expected: Any, checks: Sequence[Check]
) -> tuple[dict[str, float], list[dict[str, Any]], str | None]:
    """Compare each output with its tolerances: (first's evidence, others' errors, mismatch)."""
    if len(checks) > 1:
        results, refs = tuple(result), tuple(expected)
        if len(results) != len(checks) or len(refs) != len(checks):
            raise ValueError(
                f"expected {len(checks)} outputs and references, got {len(results)} and {len(refs)}"
            )
    else:
        results, refs = (result,), (expected,)
    first: dict[str, float] = {}
    errors: list[dict[str, Any]] = []
    mismatch = None
    for item, out, ref in zip(checks, results, refs, strict=True):
        atol = item.atol
        if item.relative_atol:
            atol *= max((float(r.detach().abs().max()) for r in _flatten(ref)), default=0.0)
        atol = max(atol, item.atol_floor)
        ok, max_abs, max_rel = _compare(out, ref, atol, item.rtol)
        if item is checks[0]:
            first = {
                "atol": item.atol,
                "rtol": item.rtol,
                "maxAbsError": _finite(max_abs),
                "maxRelError": _finite(max_rel),
            }
        else:
            for kind, value in (("abs", max_abs), ("rel", max_rel)):
                errors.append(
                    {
                        "metric": f"{item.name}_max_{kind}_error",
                        "statistic": "max",
                        "unit": "1",
                        "value": _finite(value),
                    }
                )
        if not ok and mismatch is None:
            what = "output" if item is checks[0] else item.name
            mismatch = (
                f"{what} differs from the reference: max abs error {max_abs:.3g}"
                f" (atol {atol:g}, rtol {item.rtol:g})"
            )
    return first, errors, mismatch


def _default_slug(parameters: dict[str, Any]) -> str:
    """``tokens1024-vocab128256-fp32-grad``: name and value, a dtype alone, a true flag's name."""
    parts = []
    for key, value in parameters.items():
        if isinstance(value, bool):
            parts.append(key if value else "")
        elif key == "dtype":
            parts.append(str(value))
        else:
            parts.append(f"{key}{str(value).replace('.', 'p')}")
    return "-".join(p for p in parts if p)


def _bundle(
    spec: dict[str, Any],
    protocol: dict[str, Any],
    environment: dict[str, Any],
    device: torch.device,
    *,
    title: str | None,
    slug: str | None,
    labels: dict[str, str] | None,
    notes: dict[str, str],
) -> RecordBundle:
    workload, implementation = spec["workload"], spec["implementation"]
    hardware = environment["hardware"]
    device_part = (
        hardware["product"] if device.type == "cuda" else f"cpu-{hardware['architecture']}"
    )
    stamp = spec["observedAt"].strftime("%Y-%m-%d-%H-%M-%S-%f")[:-3]
    provider = implementation["provider"]
    parts = ["kernelindex", workload["operation"], workload["pass"], provider, device_part]
    parts += [slug or _default_slug(workload["parameters"]), stamp]
    run_meta: dict[str, Any] = {
        # Unique across processes and hosts, not only to the millisecond of the stamp.
        "name": _names.name(*parts, suffix=_names.unique_suffix()),
        "title": title or f"{workload['operation']} · {provider} · {workload['pass']}",
        "annotations": notes,
    }
    if labels:
        run_meta["labels"] = labels
    spec = {
        **spec,
        "observedAt": format_observed_at(spec["observedAt"]),
        "sourceNative": {
            "source": "kernelindex-sdk",
            "benchmark": f"{workload['operation']}/{workload['pass']}",
        },
    }
    product = hardware["product"]
    timer = protocol["measurement"]["timer"]
    doc = {
        "run": {"apiVersion": API, "kind": "BenchmarkRun", "metadata": run_meta, "spec": spec},
        "protocol": {
            "apiVersion": API,
            "kind": "BenchmarkProtocol",
            "metadata": {
                # Named by content: one name always means one protocol.
                "name": _names.name(
                    "kernelindex-harness", timer, suffix=spec["protocolDigest"][7:19]
                ),
                "title": f"kernelindex-sdk harness · {timer}",
            },
            "spec": protocol,
        },
        "environment": {
            "apiVersion": API,
            "kind": "ExecutionEnvironment",
            "metadata": {
                "name": _names.name(product, suffix=spec["environmentDigest"][7:19]),
                "title": product,
            },
            "spec": environment,
        },
    }
    check(doc, verify_digests=True)
    return load_record(doc, validate=False)
