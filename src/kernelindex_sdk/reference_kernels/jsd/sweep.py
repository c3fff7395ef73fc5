"""The JSD forward sweep: cases as data, the providers that compute them, records out.

``kernelindex bench jsd`` (through :mod:`..launch`) runs :func:`run_points` over
:func:`points`, one share of them per device or shard; :func:`run_sweep` runs them all in
one process. The options come as one :class:`JSDOptions`, which :func:`plan` checks and
turns into cases; option errors name the option (``providers``), the CLI its flag.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, cast

import attrs
import torch

from ... import __version__
from ..._base.schemas import SAFE_INT
from ...errors import ArgumentError, SweepOptionError
from ...models import RecordBundle
from ...verdict import BASELINE_LABEL
from .. import harness
from ..options import JSDOptions, options_from
from . import fused, launch_plan, reference

__all__ = [
    "CPU_DEFAULTS",
    "DTYPES",
    "GPU_DEFAULTS",
    "GRAD_TOLERANCES",
    "PROVIDERS",
    "TOLERANCES",
    "JSDCase",
    "JSDOptions",
    "Point",
    "SweepDefaults",
    "SweepOptionError",
    "cases",
    "failed_record",
    "liger_available",
    "plan",
    "point_cost",
    "points",
    "run_case",
    "run_points",
    "run_sweep",
    "step",
    "work",
]

DTYPES: Final = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# (atol, rtol) of the loss against a float64 reference: the loss is returned in the input's
# dtype, so half types are bounded by their own rounding (2^-8 for bf16, 2^-11 for fp16).
TOLERANCES: Final = {"fp32": (1e-6, 1e-4), "bf16": (1e-6, 1e-2), "fp16": (1e-6, 2e-3)}
# (atol as a fraction of max |dL/dinput|, rtol) of the gradient, element by element, against
# float64 autograd: the gradient is written in the input's dtype (half types: their own
# rounding); fp32 leaves room for autograd's own cancellation in the peers' gradients.
GRAD_TOLERANCES: Final = {"fp32": (1e-5, 1e-4), "bf16": (1e-2, 2e-2), "fp16": (2e-3, 4e-3)}
# fp16 cannot hold gradients below its subnormal spacing, 2^-24: rounding alone is up to that.
GRAD_ATOL_FLOOR: Final = {"fp32": 0.0, "bf16": 0.0, "fp16": 2.0**-24}
PROVIDERS: Final = ("torch", "torch-compile", "triton", "liger")
# Rows per float64 reference chunk: a whole 8192 x 128256 problem in float64 with autograd
# would need tens of GB beside the inputs.
_REFERENCE_ROWS: Final = 256


_SIZES: Final = "an integer in [1, 2^53 - 1]"


def _checked(ok: Callable[[Any], bool], expected: str) -> Callable[[Any, Any, Any], None]:
    """An attrs validator raising ArgumentError (named by the field) unless ``ok(value)``."""

    def validate(_: Any, attribute: Any, value: Any) -> None:
        if not ok(value):
            raise ArgumentError(
                argument=attribute.name, reason=f"expected {expected}, got {value!r}"
            )

    return validate


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
    """One sweep point: shape, dtype, beta, and whether the forward also yields dL/dinput.

    Raises:
        ArgumentError: (a ValueError) when built with a field the sweep cannot run or a
            record cannot hold: sizes outside [1, 2^53 - 1], a dtype not in :data:`DTYPES`,
            a beta outside [0, 1], an ``input_grad`` that is not a bool.
    """

    tokens: int = attrs.field(
        validator=_checked(lambda v: type(v) is int and 1 <= v <= SAFE_INT, _SIZES)
    )
    vocab: int = attrs.field(
        validator=_checked(lambda v: type(v) is int and 1 <= v <= SAFE_INT, _SIZES)
    )
    dtype: str = attrs.field(
        validator=_checked(lambda v: v in DTYPES, f"one of {', '.join(DTYPES)}")
    )
    beta: float = attrs.field(
        default=0.5,
        validator=_checked(
            lambda v: type(v) is not bool and isinstance(v, (int, float)) and 0.0 <= v <= 1.0,
            "a number in [0, 1]",
        ),
    )
    input_grad: bool = attrs.field(
        default=False, validator=_checked(lambda v: type(v) is bool, "True or False")
    )

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    @property
    def pass_(self) -> str:
        """The timed pass: ``forward`` (the loss alone) or ``full`` (a training step).

        With ``input_grad`` every provider is timed doing what a training step pays for:
        the forward, then ``loss.backward()`` down to dL/dinput. The pass is part of the
        workload, so the two never share a workload digest (nor does a record made when
        ``inputGrad: true`` timed the forward alone, under ``pass: forward``).
        """
        return "full" if self.input_grad else "forward"

    def workload(self) -> dict[str, Any]:
        """The run's ``spec.workload``: what is computed, never how."""
        size = self.tokens * self.vocab * self.torch_dtype.itemsize
        return {
            "operation": "jsd",
            "pass": self.pass_,
            "parameters": {
                "tokens": self.tokens,
                "vocab": self.vocab,
                "dtype": self.dtype,
                "beta": self.beta,
                "inputGrad": self.input_grad,
            },
            # Read input and target once; with the gradient, write dL/dinput once (the
            # bytes of a training step: what torch.add(x, y, out=out) moves).
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


def _positive(option: str, values: Sequence[int] | None, default: Sequence[int]) -> list[int]:
    chosen = list(default if values is None else values)
    if not chosen:
        raise SweepOptionError(source=option, reason="expected at least one value, got none")
    bad = [v for v in chosen if not 1 <= v <= SAFE_INT]
    if bad:
        raise SweepOptionError(
            source=option, reason=f"expected integers in [1, 2^53 - 1], got {bad[0]!r}"
        )
    _once(option, chosen)
    return chosen


def _once(option: str, values: Sequence[object]) -> None:
    """Refuse a value given twice: the sweep would run (and record) its points twice."""
    for value in values:
        if values.count(value) > 1:
            raise SweepOptionError(source=option, reason=f"{value!r} is given twice")


def _check_bytes_moved(
    tokens: Sequence[int], vocab: Sequence[int], dtypes: Sequence[str], grads: Sequence[bool]
) -> None:
    """Refuse sizes whose bytesMoved a record cannot hold (an exact JSON integer)."""
    itemsize = max(DTYPES[d].itemsize for d in dtypes)
    moved = max(tokens) * max(vocab) * itemsize * (3 if any(grads) else 2)
    if moved > SAFE_INT:
        raise SweepOptionError(
            source="tokens/vocab",
            reason=(
                f"tokens {max(tokens)} x vocab {max(vocab)} would move {moved} bytes,"
                " more than a record can hold (2^53 - 1)"
            ),
        )


def plan(
    options: JSDOptions | None = None, *, device: torch.device, **fields: Any
) -> list[JSDCase]:
    """Check a sweep's options and return its points, defaults filled in for ``device``.

    Args:
        options: The sweep's options (:class:`JSDOptions`).
        device: Where the sweep runs; picks the default points (GPU or CPU).
        **fields: The options one by one instead of ``options``, as earlier versions
            took them (``providers=...``, ``tokens=...``): the same as
            ``plan(JSDOptions(**fields), device=device)``.

    Returns:
        The points in sweep order.

    Raises:
        SweepOptionError: naming the option (``providers``) for an empty list, an unknown
            name, a value out of range or given twice, sizes whose bytesMoved exceeds
            2^53 - 1, or liger without liger-kernel installed.
        ArgumentError: for ``options`` and ``fields`` both given.
    """
    options = options_from(options, fields)
    providers = options.providers
    if not providers:
        raise SweepOptionError(source="providers", reason="expected at least one value, got none")
    unknown = [p for p in providers if p not in PROVIDERS]
    if unknown:
        raise SweepOptionError(
            source="providers",
            reason=f"expected some of {', '.join(PROVIDERS)}, got {unknown[0]!r}",
        )
    _once("providers", list(providers))
    if "liger" in providers and not liger_available():
        raise SweepOptionError(
            source="providers", reason="liger needs liger-kernel (pip install liger-kernel)"
        )
    beta = options.beta
    if not (math.isfinite(beta) and 0.0 <= beta <= 1.0):
        raise SweepOptionError(source="beta", reason=f"expected a number in [0, 1], got {beta!r}")
    grads = {"off": (False,), "on": (True,), "both": (False, True)}
    if options.input_grad not in grads:
        raise SweepOptionError(
            source="input_grad", reason=f"expected off, on or both, got {options.input_grad!r}"
        )
    if options.timer not in harness.TIMERS:
        raise SweepOptionError(
            source="timer",
            reason=f"expected one of {', '.join(harness.TIMERS)}, got {options.timer!r}",
        )
    defaults = GPU_DEFAULTS if device.type == "cuda" else CPU_DEFAULTS
    chosen_dtypes = list(defaults.dtypes if options.dtypes is None else options.dtypes)
    if not chosen_dtypes:
        raise SweepOptionError(source="dtypes", reason="expected at least one value, got none")
    bad = [d for d in chosen_dtypes if d not in DTYPES]
    if bad:
        raise SweepOptionError(
            source="dtypes", reason=f"expected some of {', '.join(DTYPES)}, got {bad[0]!r}"
        )
    _once("dtypes", chosen_dtypes)
    chosen_tokens = _positive("tokens", options.tokens, defaults.tokens)
    chosen_vocab = _positive("vocab", options.vocab, defaults.vocab)
    input_grad = grads[options.input_grad]
    _check_bytes_moved(chosen_tokens, chosen_vocab, chosen_dtypes, input_grad)
    return cases(chosen_tokens, chosen_vocab, chosen_dtypes, beta=beta, input_grad=input_grad)


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
                # The kernel and its launch plan (configs, grid, math): the code that runs.
                "sourceDigest": harness.source_digest(fused, launch_plan),
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


def _inputs(case: JSDCase, device: torch.device, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator(device=device).manual_seed(seed)
    shape = (case.tokens, case.vocab)
    x = torch.randn(shape, generator=generator, device=device).log_softmax(-1).to(case.torch_dtype)
    y = torch.randn(shape, generator=generator, device=device).log_softmax(-1).to(case.torch_dtype)
    return x, y


def float64_reference(
    x: torch.Tensor, y: torch.Tensor, beta: float, input_grad: bool
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """The loss (and dL/dx by float64 autograd) of :func:`reference.jsd_torch`, by row chunks.

    Args:
        x: Input log-probabilities (BT, V), any float dtype.
        y: Target log-probabilities, same shape.
        beta: Weight of P in the mixture.
        input_grad: Whether to return the gradient too.

    Returns:
        The float64 loss, or (loss, gradient) in float64.
    """
    rows = x.shape[0]
    loss = torch.zeros((), dtype=torch.float64, device=x.device)
    grad = torch.empty(x.shape, dtype=torch.float64, device=x.device) if input_grad else None
    for start in range(0, rows, _REFERENCE_ROWS):
        stop = min(start + _REFERENCE_ROWS, rows)
        with torch.enable_grad():
            x64 = x[start:stop].detach().double().requires_grad_(input_grad)
            # The chunk's mean times its share of the rows: its part of the whole mean.
            part = reference.jsd_torch(x64, y[start:stop].double(), beta=beta) * (
                (stop - start) / rows
            )
            if grad is not None:
                (grad[start:stop],) = torch.autograd.grad(part, x64)
        loss += part.detach()
    return (loss, grad) if grad is not None else loss


def step(
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    input_grad: bool,
) -> Callable[[], torch.Tensor]:
    """The call a sweep point times, the same for every provider.

    Args:
        fn: A provider's loss ``fn(input, target)``.
        x: Input log-probabilities; with ``input_grad`` it requires grad, and its
            ``.grad`` should be reset to None before each call (the harness's
            ``grad_to_none``), or backward adds to the last call's gradient.
        y: Target log-probabilities.
        input_grad: False: the loss alone, autograd off (pass ``forward``). True: what a
            training step pays for the loss, the forward then ``loss.backward()`` down to
            dL/dinput in ``x.grad`` (pass ``full``).

    Returns:
        A call returning the loss.
    """
    if not input_grad:

        def forward() -> torch.Tensor:
            with torch.no_grad():
                return fn(x, y)

        return forward

    def training_step() -> torch.Tensor:
        with torch.enable_grad():
            loss = fn(x, y)
            # loss.backward(): what a training step calls, down to dL/dinput in x.grad.
            torch.autograd.backward(loss)
        return loss

    return training_step


def run_case(
    name: str,
    case: JSDCase,
    device: torch.device,
    *,
    seed: int = 0,
    timer: str = "cuda-events",
) -> RecordBundle:
    """Check and time one provider on one case; any failure becomes a failed record.

    With ``case.input_grad`` the timed call is what a training step pays for the loss,
    the same for every provider (:func:`step`): the forward, then ``loss.backward()``
    down to dL/dinput (``x.grad`` reset to None before each call), pass ``full``.
    Providers that compute the gradient in their forward (ours, Liger) and scale it in
    backward pay for both halves just as torch's autograd does. The check covers the
    loss and the ``x.grad`` that very call left (against float64 autograd,
    :data:`GRAD_TOLERANCES`); a backward that leaves no gradient fails the run. Without
    it the timed call is the forward alone.

    Raises:
        ArgumentError: for a timer not in :data:`harness.TIMERS` (it is a ValueError too).
    """
    title = _title(name, case)
    labels = _labels(name)
    try:
        fn, implementation = _provider(name, case)
        x, y = _inputs(case, device, seed)
        x.requires_grad_(case.input_grad)
        notes = {}
        if name == "triton":
            # Chosen by the committed table, not by the user: an observation, not identity.
            config = launch_plan.config_for(x, target=y, compute_grad=case.input_grad)
            notes["kernelindex.dev/config"] = ",".join(
                f"{k}={v}" for k, v in config.as_dict().items()
            )
    except Exception as err:  # setting the point up failed: no inputs, nothing timed
        return _failed(name, case, device, title, labels, err)

    timed = step(fn, x, y, input_grad=case.input_grad)

    def checked() -> Any:
        if not case.input_grad:
            return timed()
        x.grad = None
        loss = timed()
        # The gradient that very step left (mypy would keep x.grad narrowed to None).
        grad = cast("torch.Tensor | None", x.grad)
        x.grad = None
        if grad is None:
            raise RuntimeError(f"{name}: loss.backward() left no gradient in the input")
        return loss.detach(), grad

    def ground_truth() -> Any:
        return float64_reference(x, y, case.beta, case.input_grad)

    atol, rtol = TOLERANCES[case.dtype]
    further = []
    reference_name = "kernelindex_sdk.reference_kernels.jsd.reference:jsd_torch (float64)"
    if case.input_grad:
        grad_atol, grad_rtol = GRAD_TOLERANCES[case.dtype]
        further.append(
            harness.Check(
                name="grad_input",
                atol=grad_atol,
                rtol=grad_rtol,
                relative_atol=True,
                atol_floor=GRAD_ATOL_FLOOR[case.dtype],
            )
        )
        reference_name += "; dL/dinput by float64 autograd"
    try:
        return harness.bench(
            timed,
            workload=case.workload(),
            implementation=implementation,
            reference=ground_truth,
            reference_name=reference_name,
            atol=atol,
            rtol=rtol,
            grad_to_none=[x] if case.input_grad else [],
            device=device,
            timer=timer,
            output=checked,
            further=further,
            title=title,
            slug=case.slug(),
            labels=labels,
            annotations=notes,
        )
    except Exception as err:  # the harness itself failed: say so, and go on
        return _failed(name, case, device, title, labels, err, harness_error=True, timer=timer)


def _labels(name: str) -> dict[str, str]:
    """A run's labels: the sweep, and its baseline (eager torch, measured in the same sweep;
    ``kernelindex.dev/baseline``, what history's relative series divide by)."""
    labels = {"kernelindex.dev/sweep": "jsd-forward"}
    if name != "torch":
        labels[BASELINE_LABEL] = "torch"
    return labels


def _title(name: str, case: JSDCase) -> str:
    what = "forward + backward" if case.input_grad else "forward"
    return f"Jensen-Shannon divergence loss · {name} · {what}"


def _failed(
    name: str,
    case: JSDCase,
    device: torch.device,
    title: str,
    labels: dict[str, str],
    err: BaseException,
    *,
    harness_error: bool = False,
    timer: str = "cuda-events",
) -> RecordBundle:
    """A failed record for a point that could not be set up (or timed), saying why."""
    if harness_error:
        err = RuntimeError(f"harness error: {type(err).__name__}: {err}")
    implementation = {"provider": name, "packages": _packages("torch", "triton")}
    return harness.failed_record(
        err,
        workload=case.workload(),
        implementation=implementation,
        device=device,
        timer=timer,
        title=title,
        slug=case.slug(),
        labels=labels,
    )


def run_sweep(
    providers: Sequence[str],
    sweep: Sequence[JSDCase],
    device: torch.device,
    *,
    timer: str = "cuda-events",
) -> Iterator[RecordBundle]:
    """Yield one record per (case, provider) as soon as it exists; a failing point never raises."""
    return run_points(points(providers, sweep), device, timer=timer)


#: A sweep point: one provider on one case, which gives exactly one record.
Point = tuple[str, JSDCase]


def points(providers: Sequence[str], sweep: Sequence[JSDCase]) -> list[Point]:
    """The sweep's points in :func:`run_sweep`'s order: each case, each provider in turn."""
    return [(name, case) for case in sweep for name in providers]


def point_cost(point: Point) -> float:
    """A point's estimated cost for balancing shards: the bytes its case moves."""
    return float(point[1].workload()["bytesMoved"])


def run_points(
    chosen: Sequence[Point], device: torch.device, *, timer: str = "cuda-events"
) -> Iterator[RecordBundle]:
    """Yield one record per point, in order, as soon as it exists; a failing point never raises."""
    for name, case in chosen:
        yield run_case(name, case, device, timer=timer)
        if device.type == "cuda":
            torch.cuda.empty_cache()


def work(
    chosen: Sequence[Point], target: str, *, timer: str = "cuda-events"
) -> Iterator[RecordBundle]:
    """The worker of :func:`workers.run_on_devices`: run ``chosen`` on the device ``target``."""
    return run_points(chosen, torch.device(target), timer=timer)


def failed_record(
    point: Point, device: torch.device, reason: str, *, timer: str = "cuda-events"
) -> RecordBundle:
    """The failed record of a point that never ran to its end, e.g. because its worker died.

    Built by the harness like every failed record (validated, digests verified), its
    failure message is ``ChildProcessError: <reason>``.

    Args:
        point: The point.
        device: The device the point was to run on, as this process numbers it.
        reason: Why it did not finish, e.g. how the worker process ended.
        timer: The sweep's timer (part of the protocol).
    """
    name, case = point
    title = _title(name, case)
    labels = _labels(name)
    return _failed(name, case, device, title, labels, ChildProcessError(reason), timer=timer)
