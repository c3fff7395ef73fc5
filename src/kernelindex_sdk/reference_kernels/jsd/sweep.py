"""The JSD forward sweep: cases as data, the providers that compute them, records out.

``kernelindex bench jsd`` and benchmarks/jsd_forward.py both run :func:`run_sweep`.
"""

from __future__ import annotations

import importlib.metadata
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import attrs
import torch

from ... import __version__
from ...models import RecordBundle
from .. import harness
from . import fused, reference

__all__ = [
    "CPU_DEFAULTS",
    "DTYPES",
    "GPU_DEFAULTS",
    "PROVIDERS",
    "JSDCase",
    "SweepDefaults",
    "cases",
    "liger_available",
    "run_case",
    "run_sweep",
]

DTYPES: Final = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# Tolerances of the loss against a float64 reference: the loss is returned in the input's
# dtype, so half types are bounded by their own rounding (2^-8 for bf16, 2^-11 for fp16).
TOLERANCES: Final = {"fp32": (1e-6, 1e-4), "bf16": (1e-6, 1e-2), "fp16": (1e-6, 2e-3)}
PROVIDERS: Final = ("torch", "torch-compile", "triton", "liger")


#: Default sweeps: the kernel issue's points on a GPU; small shapes on the CPU, where
#: Triton runs in its interpreter (tens of ms a call).
@attrs.frozen
class SweepDefaults:
    """The points a sweep covers when the command line names none."""

    tokens: tuple[int, ...]
    vocab: tuple[int, ...]
    dtypes: tuple[str, ...]


GPU_DEFAULTS: Final = SweepDefaults(
    tokens=(1024, 2048, 4096, 8192), vocab=(128256,), dtypes=("fp32", "bf16")
)
CPU_DEFAULTS: Final = SweepDefaults(tokens=(4, 16), vocab=(256,), dtypes=("fp32",))


@attrs.frozen
class JSDCase:
    """One sweep point: shape, dtype, beta, and whether the forward also yields dL/dinput."""

    tokens: int
    vocab: int
    dtype: str
    beta: float = 0.5
    input_grad: bool = False

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def workload(self) -> dict[str, Any]:
        """The run's ``spec.workload``: what is computed, never how."""
        size = self.tokens * self.vocab * self.torch_dtype.itemsize
        return {
            "operation": "jsd",
            "pass": "forward",
            "parameters": {
                "tokens": self.tokens,
                "vocab": self.vocab,
                "dtype": self.dtype,
                "beta": self.beta,
                "inputGrad": self.input_grad,
            },
            # Read input and target once; with the gradient, write dL/dinput once.
            "bytesMoved": size * (3 if self.input_grad else 2),
        }

    def slug(self) -> str:
        beta = "" if self.beta == 0.5 else f"-beta{str(self.beta).replace('.', 'p')}"
        grad = "-grad" if self.input_grad else ""
        return f"tokens{self.tokens}-vocab{self.vocab}-{self.dtype}{beta}{grad}"


def cases(
    tokens: Sequence[int],
    vocab: Sequence[int],
    dtypes: Sequence[str],
    *,
    beta: float = 0.5,
    input_grad: Sequence[bool] = (False,),
) -> list[JSDCase]:
    """The cross product of the given values, in sweep order."""
    return [
        JSDCase(tokens=t, vocab=v, dtype=d, beta=beta, input_grad=g)
        for g, d, v, t in itertools.product(input_grad, dtypes, vocab, tokens)
    ]


def liger_available() -> bool:
    """Whether liger-kernel can be imported here."""
    try:
        importlib.import_module("liger_kernel.transformers.jsd")
    except ImportError:
        return False
    return True


def _packages(*names: str) -> dict[str, str]:
    found = {"kernelindex-sdk": __version__}
    installed = {d.metadata["Name"].lower(): d.version for d in importlib.metadata.distributions()}
    found.update({name: installed[name] for name in names if name in installed})
    return found


def _provider(name: str, case: JSDCase) -> tuple[Callable[..., torch.Tensor], dict[str, Any]]:
    """The callable ``f(x, y)`` of a provider, and its implementation descriptor."""
    if name == "torch":
        return (
            lambda x, y: reference.jsd_torch(x, y, beta=case.beta),
            {
                "provider": "torch",
                "entryPoint": "kernelindex_sdk.reference_kernels.jsd.reference:jsd_torch",
                "packages": _packages("torch"),
                "sourceDigest": harness.source_digest(reference),
            },
        )
    if name == "torch-compile":
        compiled = torch.compile(reference.jsd_torch)
        return (
            lambda x, y: compiled(x, y, beta=case.beta),
            {
                "provider": "torch-compile",
                "entryPoint": "kernelindex_sdk.reference_kernels.jsd.reference:jsd_torch",
                "packages": _packages("torch", "triton"),
                "sourceDigest": harness.source_digest(reference),
                "config": {"mode": "default"},
            },
        )
    if name == "triton":
        return (
            lambda x, y: fused.jsd_triton(x, y, beta=case.beta),
            {
                "provider": "triton",
                "entryPoint": "kernelindex_sdk.reference_kernels.jsd.fused:jsd_triton",
                "packages": _packages("torch", "triton"),
                "sourceDigest": harness.source_digest(fused),
            },
        )
    if name == "liger":
        module = importlib.import_module("liger_kernel.transformers.jsd")
        ops = importlib.import_module("liger_kernel.ops.jsd")
        loss = module.LigerJSD(beta=case.beta)
        return (
            loss,
            {
                "provider": "liger",
                "entryPoint": "liger_kernel.transformers.jsd:LigerJSD",
                "packages": _packages("liger-kernel", "torch", "triton"),
                "sourceDigest": harness.source_digest(ops),
            },
        )
    raise ValueError(f"unknown provider {name!r}; expected one of {', '.join(PROVIDERS)}")


def _autotuned_config() -> dict[str, Any]:
    best = getattr(fused.jsd_fwd_kernel, "best_config", None)
    if best is None:
        return {}
    return {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages}


def run_case(name: str, case: JSDCase, device: torch.device, *, seed: int = 0) -> RecordBundle:
    """Check and time one provider on one case; failures (OOM included) become failed records."""
    title = f"Jensen-Shannon divergence loss · {name} · forward"
    labels = {"kernelindex.dev/sweep": "jsd-forward"}
    try:
        fn, implementation = _provider(name, case)
        generator = torch.Generator(device=device).manual_seed(seed)
        shape = (case.tokens, case.vocab)
        x = (
            torch.randn(shape, generator=generator, device=device)
            .log_softmax(-1)
            .to(case.torch_dtype)
        )
        y = (
            torch.randn(shape, generator=generator, device=device)
            .log_softmax(-1)
            .to(case.torch_dtype)
        )
    except torch.cuda.OutOfMemoryError as err:
        # No inputs: a failed record, timed nothing, still says what was asked.
        return _failed(name, case, device, title, labels, err)
    x.requires_grad_(case.input_grad)

    def timed() -> torch.Tensor:
        with torch.set_grad_enabled(case.input_grad):
            return fn(x, y)

    def ground_truth() -> torch.Tensor:
        with torch.no_grad():
            return reference.jsd_torch(x.double(), y.double(), beta=case.beta).to(case.torch_dtype)

    if name == "triton":
        # The first call autotunes; the config it chose belongs to the implementation.
        try:
            timed()
        except torch.cuda.OutOfMemoryError as err:
            return _failed(name, case, device, title, labels, err)
        implementation = {**implementation, "config": _autotuned_config()}
    atol, rtol = TOLERANCES[case.dtype]
    return harness.bench(
        timed,
        workload=case.workload(),
        implementation=implementation,
        reference=ground_truth,
        reference_name="kernelindex_sdk.reference_kernels.jsd.reference:jsd_torch (float64)",
        atol=atol,
        rtol=rtol,
        grad_to_none=[x] if case.input_grad else [],
        device=device,
        title=title,
        slug=case.slug(),
        labels=labels,
    )


def _failed(
    name: str,
    case: JSDCase,
    device: torch.device,
    title: str,
    labels: dict[str, str],
    err: BaseException,
) -> RecordBundle:
    def raise_again() -> None:
        raise err

    implementation = {"provider": name, "packages": _packages("torch", "triton")}
    return harness.bench(
        raise_again,
        workload=case.workload(),
        implementation=implementation,
        device=device,
        title=title,
        slug=case.slug(),
        labels=labels,
    )


def run_sweep(
    providers: Sequence[str], sweep: Sequence[JSDCase], device: torch.device
) -> Iterator[RecordBundle]:
    """Yield one record per (case, provider), each as soon as it exists."""
    for case in sweep:
        for name in providers:
            yield run_case(name, case, device)
            if device.type == "cuda":
                torch.cuda.empty_cache()
