"""The benchmark harness: any kernel in, a validated and digested record bundle out.

``bench()`` checks a callable's output against a reference on the same inputs, times it
(``triton.testing.do_bench`` on a GPU, a wall clock on the CPU), and returns a
RecordBundle whose protocol says everything that decides comparability: timer,
statistics and quantile method, warm-up, the sample floor, and the L2 flush.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, Final

import attrs
import torch

from .. import __version__, digest, load_record
from .._schemas import API_VERSION as API
from ..convert import format_observed_at
from ..models import RecordBundle
from ..validation import check
from .environment import environment_spec, volatile_annotations

__all__ = [
    "MIN_SAMPLES",
    "Measured",
    "bench",
    "protocol_spec",
    "source_digest",
    "timer_for",
]

MIN_SAMPLES: Final = 100
WARMUP_MS: Final = 25.0
CPU_WARMUP_CALLS: Final = 3
_FIRST_REP_MS: Final = 100.0
REPOSITORY: Final = "https://github.com/kernelindex/kernelindex-sdk"


@attrs.frozen
class Measured:
    """Timing samples in milliseconds, in the order they were taken."""

    samples_ms: Sequence[float]

    def quantile_ns(self, q: float) -> int:
        """The q-quantile in integer ns, interpolated linearly (numpy's default)."""
        ordered = sorted(self.samples_ms)
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        value = ordered[low] + (ordered[high] - ordered[low]) * (position - low)
        return round(value * 1e6)


def timer_for(device: torch.device) -> str:
    """The protocol timer the harness uses on ``device``."""
    return "cuda_events" if device.type == "cuda" else "wall_clock"


def _flush_bytes() -> int:
    import triton

    cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
    return int(cache.numel() * cache.element_size())


def protocol_spec(device: torch.device, *, min_samples: int = MIN_SAMPLES) -> dict[str, Any]:
    """Return the BenchmarkProtocol spec the harness follows on ``device``."""
    harness = {"name": "kernelindex-sdk harness", "version": __version__, "repository": REPOSITORY}
    correctness = {
        "method": "allclose",
        "notes": "before timing, the output is compared with the reference's on the same inputs",
    }
    if device.type == "cuda":
        l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0))
        flush = _flush_bytes()
        measurement: dict[str, Any] = {
            "timer": "cuda_events",
            "primaryStatistic": "median",
            "quantileMethod": "linear",
            "warmupMs": WARMUP_MS,
            "minSamples": min_samples,
            "l2Flush": {"policy": "buffer_write", "flushBytes": flush, "l2Bytes": l2},
            "notes": (
                "triton.testing.do_bench(fn, grad_to_none=inputs, return_mode='all'): CUDA events"
                " around each call, L2 flushed by writing the flush buffer before each call;"
                " rep raised until at least minSamples samples; median, p20 and p80 of them."
            ),
        }
        family = "kernelindex_do_bench_cuda"
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


def _time_gpu(
    fn: Callable[[], Any], grad_to_none: Sequence[torch.Tensor], min_samples: int
) -> Measured:
    from triton.testing import do_bench

    rep = _FIRST_REP_MS
    while True:
        samples = do_bench(
            fn, warmup=WARMUP_MS, rep=rep, grad_to_none=list(grad_to_none), return_mode="all"
        )
        if len(samples) >= min_samples:
            return Measured(samples_ms=list(samples))
        # do_bench sizes its loop from a short estimate: ask for proportionally more.
        rep *= 1.25 * min_samples / max(len(samples), 1)


def _time_cpu(fn: Callable[[], Any], min_samples: int) -> Measured:
    for _ in range(CPU_WARMUP_CALLS):
        fn()
    samples = []
    for _ in range(min_samples):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return Measured(samples_ms=samples)


def _flatten(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    raise TypeError(f"outputs must be tensors or tuples of tensors, got {type(value).__name__}")


def _compare(out: Any, ref: Any, atol: float, rtol: float) -> tuple[bool, float, float]:
    """Return (allclose, max |out - ref|, max |out - ref| / max |ref|)."""
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


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


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
    title: str | None = None,
    slug: str | None = None,
    labels: dict[str, str] | None = None,
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
        title: The run's title; by default from the operation, provider and pass.
        slug: The workload part of the run's name; by default from its parameters.
        labels: The run's labels.

    Returns:
        A RecordBundle whose run passed (checked and timed), is unverified (timed, no
        reference) or failed (mismatch, error or out of memory: no timing), validated
        with every digest verified.
    """
    if device is None:
        device = (
            torch.device("cuda", torch.cuda.current_device())
            if torch.cuda.is_available()
            else torch.device("cpu")
        )
    observed = datetime.now(timezone.utc)
    protocol = protocol_spec(device, min_samples=min_samples)
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
    correctness, failure, measured = _attempt(
        fn, reference, reference_name, atol, rtol, grad_to_none, device, min_samples
    )
    if correctness is not None:
        spec["correctness"] = correctness
    if failure is not None:
        spec.update(status="failed", failure=failure)
    if measured is not None:
        spec["status"] = "passed" if reference is not None else "unverified"
        spec["timing"] = {
            "latencyNs": {"median": measured.quantile_ns(0.5)},
            "primaryStatistic": "median",
            "samples": len(measured.samples_ms),
        }
        spec["measurements"] = [
            {
                "metric": "latency",
                "statistic": "p20",
                "unit": "ns",
                "value": measured.quantile_ns(0.2),
            },
            {
                "metric": "latency",
                "statistic": "p80",
                "unit": "ns",
                "value": measured.quantile_ns(0.8),
            },
        ]
        moved = workload.get("bytesMoved")
        median_ns = spec["timing"]["latencyNs"]["median"]
        if moved and median_ns:
            spec["measurements"].append(
                {
                    "metric": "bandwidth",
                    "statistic": "median",
                    "unit": "GB/s",
                    "value": round(moved / median_ns, 3),
                }
            )
    return _bundle(spec, protocol, environment, device, title=title, slug=slug, labels=labels)


def _attempt(
    fn: Callable[[], Any],
    reference: Callable[[], Any] | None,
    reference_name: str,
    atol: float,
    rtol: float,
    grad_to_none: Sequence[torch.Tensor],
    device: torch.device,
    min_samples: int,
) -> tuple[dict[str, Any] | None, dict[str, str] | None, Measured | None]:
    """Check, then time: (correctness evidence, failure, samples); a failure has no samples."""
    correctness = None
    try:
        result = fn()
        if reference is not None:
            ok, max_abs, max_rel = _compare(result, reference(), atol, rtol)
            correctness = {
                "reference": reference_name,
                "atol": atol,
                "rtol": rtol,
                "maxAbsError": _finite(max_abs),
                "maxRelError": _finite(max_rel),
            }
            if not ok:
                message = (
                    f"output differs from {reference_name}: max abs error {max_abs:.3g}"
                    f" (atol {atol:g}, rtol {rtol:g})"
                )
                return correctness, {"reason": "mismatch", "message": message}, None
        if device.type == "cuda":
            return correctness, None, _time_gpu(fn, grad_to_none, min_samples)
        return correctness, None, _time_cpu(fn, min_samples)
    except torch.cuda.OutOfMemoryError as err:
        return correctness, {"reason": "out_of_memory", "message": _one_line(err)}, None
    except Exception as err:  # any failure of the kernel becomes the record's
        return correctness, {"reason": "error", "message": _one_line(err)}, None


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
    return _slug("-".join(p for p in parts if p))


def _bundle(
    spec: dict[str, Any],
    protocol: dict[str, Any],
    environment: dict[str, Any],
    device: torch.device,
    *,
    title: str | None,
    slug: str | None,
    labels: dict[str, str] | None,
) -> RecordBundle:
    workload, implementation = spec["workload"], spec["implementation"]
    hardware = environment["hardware"]
    device_slug = _slug(
        hardware["product"] if device.type == "cuda" else f"cpu-{hardware['architecture']}"
    )
    stamp = spec["observedAt"].strftime("%Y-%m-%d-%H-%M-%S-%f")[:-3]
    provider = implementation["provider"]
    parts = ["kernelindex", workload["operation"], workload["pass"], provider, device_slug]
    parts += [slug or _default_slug(workload["parameters"]), stamp]
    run_meta: dict[str, Any] = {
        "name": _slug("-".join(parts))[:253].strip("-"),
        "title": title or f"{workload['operation']} · {provider} · {workload['pass']}",
        "annotations": volatile_annotations(device),
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
                "name": f"kernelindex-harness-{_slug(timer)}-{spec['protocolDigest'][7:19]}",
                "title": f"kernelindex-sdk harness · {timer}",
            },
            "spec": protocol,
        },
        "environment": {
            "apiVersion": API,
            "kind": "ExecutionEnvironment",
            "metadata": {
                "name": f"{_slug(product)[:200]}-{spec['environmentDigest'][7:19]}",
                "title": product,
            },
            "spec": environment,
        },
    }
    check(doc, verify_digests=True)
    return load_record(doc, validate=False)
