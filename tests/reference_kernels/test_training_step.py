"""``inputGrad`` points time a training step for every provider: forward plus backward.

On the CPU: torch, torch.compile and our kernel (Triton's interpreter) for real; Liger
through a stand-in package of the same shape (its forward computes dL/dinput, its
backward scales it), since liger-kernel is not installed here.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk import digest
from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import sweep

CPU = torch.device("cpu")
STEP = sweep.JSDCase(tokens=4, vocab=96, dtype="fp32", beta=0.37, input_grad=True)

# Liger-Kernel's layout (liger_kernel/transformers/jsd.py, liger_kernel/ops/jsd.py): the
# forward computes the loss and dL/dinput, the backward scales the saved gradient.
_FAKE_LIGER_OPS = """
import torch

SCALE = [1.0]


class LigerJSDFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, _input, target, beta):
        x = _input.detach().double().requires_grad_()
        with torch.enable_grad():
            p, q = target.double().exp(), x.exp()
            m = beta * p + (1 - beta) * q
            loss = (beta * (p * (p.log() - m.log())).sum()
                    + (1 - beta) * (q * (x - m.log())).sum()) / x.shape[0]
            (grad,) = torch.autograd.grad(loss, x)
        ctx.save_for_backward(grad.to(_input.dtype))
        return loss.detach().to(_input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        if torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
            return grad * SCALE[0], None, None
        return grad * grad_output * SCALE[0], None, None
"""

_FAKE_LIGER_MODULE = """
import torch

from liger_kernel.ops.jsd import LigerJSDFunction


class LigerJSD(torch.nn.Module):
    def __init__(self, beta=0.5):
        super().__init__()
        self.beta = beta

    def forward(self, log_q, log_p):
        return LigerJSDFunction.apply(log_q, log_p, self.beta)
"""


@pytest.fixture
def fake_liger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A ``liger_kernel`` package on sys.path with Liger's JSD layout; its ops module."""
    root = tmp_path / "site" / "liger_kernel"
    for sub, text in (("ops", _FAKE_LIGER_OPS), ("transformers", _FAKE_LIGER_MODULE)):
        (root / sub).mkdir(parents=True)
        (root / sub / "__init__.py").write_text("")
        (root / sub / "jsd.py").write_text(textwrap.dedent(text))
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield importlib.import_module("liger_kernel.ops.jsd")
    for name in [n for n in sys.modules if n.split(".")[0] == "liger_kernel"]:
        del sys.modules[name]


class Counter:
    """Counts forward calls of a provider and the dL/dinput its backward produced."""

    def __init__(self) -> None:
        self.forwards = 0
        self.grads = 0
        self.grad_was_reset: list[bool] = []


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Wrap sweep._provider and sweep._inputs: every forward and every dL/dinput counted."""
    counter = Counter()
    real_provider, real_inputs = sweep._provider, sweep._inputs
    seen: dict[str, torch.Tensor] = {}

    def provider(name: str, case: sweep.JSDCase) -> tuple[Callable[..., Any], dict[str, Any]]:
        fn, implementation = real_provider(name, case)

        def forward(x: torch.Tensor, y: torch.Tensor) -> Any:
            counter.forwards += 1
            counter.grad_was_reset.append(x.grad is None)
            return fn(x, y)

        return forward, implementation

    def inputs(case: sweep.JSDCase, device: torch.device, seed: int) -> Any:
        x, y = real_inputs(case, device, seed)
        seen["x"] = x

        def count(grad: torch.Tensor) -> None:
            counter.grads += 1

        # A leaf's hook runs each time autograd computes dL/dx for it.
        original = x.requires_grad_

        def requires_grad_(flag: bool = True) -> torch.Tensor:
            original(flag)
            if flag:
                x.register_hook(count)
            return x

        x.requires_grad_ = requires_grad_  # type: ignore[method-assign]
        return x, y

    monkeypatch.setattr(sweep, "_provider", provider)
    monkeypatch.setattr(sweep, "_inputs", inputs)
    return counter


def _step(provider: str) -> dict[str, Any]:
    return ki.dump(sweep.run_case(provider, STEP, CPU))  # type: ignore[no-any-return]


@pytest.mark.parametrize("provider", ["torch", "torch-compile", "triton", "liger"])
def test_every_provider_s_step_runs_backward_on_every_timed_call(
    provider: str, counted: Counter, request: pytest.FixtureRequest
) -> None:
    """Each forward is followed by a backward that reaches dL/dinput, from a reset x.grad."""
    if provider == "liger":
        request.getfixturevalue("fake_liger")
    doc = _step(provider)
    spec = doc["run"]["spec"]
    assert spec["status"] == "passed", spec.get("failure")
    assert spec["workload"]["pass"] == "full"  # noqa: S105 - a pass
    samples = spec["timing"]["samples"]
    # The check, the warm-up calls and every sample: each one forward and one backward.
    assert counted.forwards == 1 + timing.CPU_WARMUP_CALLS + samples
    assert counted.grads == counted.forwards
    assert all(counted.grad_was_reset)
    errors = {m["metric"]: m["value"] for m in spec["measurements"]}
    assert errors["grad_input_max_rel_error"] < sweep.GRAD_TOLERANCES["fp32"][1]
    assert doc["run"]["metadata"]["title"].endswith("· forward + backward")
    assert doc["run"]["metadata"]["name"].startswith(f"kernelindex-jsd-full-{provider}-cpu-")


def test_a_loss_only_point_never_runs_backward(counted: Counter) -> None:
    case = sweep.JSDCase(tokens=4, vocab=96, dtype="fp32")
    spec = ki.dump(sweep.run_case("torch", case, CPU))["run"]["spec"]
    assert spec["status"] == "passed"
    assert spec["workload"]["pass"] == "forward"  # noqa: S105 - a pass
    assert counted.forwards > 100
    assert counted.grads == 0


def test_the_gradient_checked_is_the_one_the_timed_backward_wrote(fake_liger: Any) -> None:
    """A backward that scales wrongly fails the run, though the forward's gradient is right."""
    fake_liger.SCALE[0] = 1.5
    spec = _step("liger")["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"]["reason"] == "mismatch"
    assert spec["failure"]["message"].startswith("grad_input differs from the reference")
    assert "timing" not in spec


def test_a_step_whose_backward_leaves_no_gradient_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def detached(name: str, case: sweep.JSDCase) -> tuple[Callable[..., Any], dict[str, Any]]:
        def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            # A loss with a graph that never reaches the input.
            return (x.detach() + y).sum().requires_grad_()

        return fn, {"provider": name}

    monkeypatch.setattr(sweep, "_provider", detached)
    spec = _step("torch")["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"] == {
        "reason": "error",
        "message": "RuntimeError: torch: loss.backward() left no gradient in the input",
    }


def test_a_training_step_has_its_own_workload_digest() -> None:
    """Loss alone, the step, and what ``inputGrad: true`` used to time (the forward alone,
    pass ``forward``) are three different works: three workload digests."""
    loss_only = sweep.JSDCase(tokens=1024, vocab=128256, dtype="bf16").workload()
    step = sweep.JSDCase(tokens=1024, vocab=128256, dtype="bf16", input_grad=True).workload()
    old_forward_with_grad = {**step, "pass": "forward"}
    assert (loss_only["pass"], step["pass"]) == ("forward", "full")
    found = {digest.workload_digest(w) for w in (loss_only, step, old_forward_with_grad)}
    assert len(found) == 3
    # A training step moves x and y in and dL/dinput out: the bytes of torch.add(x, y, out=).
    assert step["bytesMoved"] == 3 * 1024 * 128256 * 2
