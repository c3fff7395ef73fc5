"""How ``jsd_triton`` learns to launch its compiled kernel without Triton's JIT dispatch.

Triton's launchers differ between versions; these fakes have the shapes seen so far (3.6:
the C entry point gets the kernel's arguments spread; 3.9: as one tuple, after more
metadata) and the ones the learning must refuse. Each test checks that a learnt launch
sends the C entry point (or the wrapper) exactly what Triton's own path sent, with device
addresses in place of tensors. tests/reference_kernels/test_gpu.py checks the real one.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kernelindex_sdk.reference_kernels.jsd import fused

STREAM = 7
FUNCTION = 123456789012345


class Wrapper:
    """A fake ``compiled.run``: Triton's Python launcher around its C ``launch``."""

    def __init__(self, style: str, scratch: int = 0) -> None:
        self.style = style
        self.global_scratch_size = scratch
        self.profile_scratch_size = 0
        self.entries: list[tuple[Any, ...]] = []
        self.calls = 0

        def launch(*entry_args: Any) -> None:
            self.entries.append(entry_args)

        self.launch = launch

    def __call__(self, gx: int, gy: int, gz: int, stream: int, function: int, *rest: Any) -> None:
        self.calls += 1
        packed, _meta, enter, exit_, *args = rest
        scratch = torch.empty(self.global_scratch_size) if self.global_scratch_size else None
        lead = (gx, gy, gz, stream, function, False, False)
        if self.style == "spread":  # Triton 3.6
            self.launch(*lead, packed, None, enter, exit_, scratch, None, *args)
        else:  # Triton 3.9: annotations and signature, then the arguments as one tuple
            meta = (packed, None, enter, exit_, scratch, None, "ann", b"sig")
            self.launch(*lead, *meta, tuple(args))


class Compiled:
    def __init__(self, run: Any) -> None:
        self.run = run
        self.function = FUNCTION
        self.packed_metadata = (4, 1, 0)


class Kernel:
    """A fake ``jsd_fwd_kernel``: ``kernel[grid](*args, **constexprs)`` as Triton's JIT."""

    def __init__(self, run: Any, with_constexprs: bool = False, extra: int = 0) -> None:
        self.compiled = Compiled(run)
        self.with_constexprs = with_constexprs
        self.extra = extra

    def __getitem__(self, grid: tuple[int]) -> Any:
        def launch(*args: Any, num_warps: int, **constexprs: Any) -> Compiled:
            tail = (*args, *constexprs.values()) if self.with_constexprs else args
            tail = (*tail, *range(self.extra))
            self.compiled.run(grid[0], 1, 1, STREAM, FUNCTION, (4, 1, 0), None, None, None, *tail)
            return self.compiled

        return launch


def _plan() -> fused._Plan:
    return fused._new_plan(torch.device("cpu"), torch.float32, 4, 100, 2, False, False)


def _args(plan: fused._Plan) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The same call twice: with tensors (Triton's path) and with their addresses."""
    x, y, loss = torch.randn(4, 100), torch.randn(4, 100), torch.empty(())
    tensors = (x, y, x, x, plan.partials, plan.ticket, loss)
    scalars = (4, 100, 100, 100, 0, 0.3, -1.7, -0.5, 0.69, 0.25, -100)
    ptrs = tuple(t.data_ptr() for t in tensors)
    return (*tensors, *scalars), (*ptrs, *scalars)


def _addresses(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        v.data_ptr()
        if isinstance(v, torch.Tensor)
        else _addresses(v)
        if isinstance(v, tuple)
        else v
        for v in values
    )


def _learnt(plan: fused._Plan) -> fused._Learnt:
    assert plan.learnt is not None
    return plan.learnt


def _learn(monkeypatch: pytest.MonkeyPatch, kernel: Kernel) -> fused._Plan:
    monkeypatch.setattr(fused, "jsd_fwd_kernel", kernel)
    monkeypatch.setattr(fused, "_INTERPRET", False)
    monkeypatch.setattr(fused, "_hooks_set", lambda: False)
    plan = _plan()
    jit_args, _ = _args(plan)
    fused._run(plan, jit_args)  # compiles (here: finds the fake) and launches
    fused._run(plan, jit_args)  # learns
    return plan


@pytest.mark.parametrize("style", ["spread", "tuple"])
@pytest.mark.parametrize("with_constexprs", [False, True])
def test_a_learnt_launch_sends_the_c_entry_point_what_triton_sent(
    monkeypatch: pytest.MonkeyPatch, style: str, with_constexprs: bool
) -> None:
    wrapper = Wrapper(style)
    plan = _learn(monkeypatch, Kernel(wrapper, with_constexprs))
    learnt = plan.learnt
    assert learnt is not None
    assert learnt.raw
    assert learnt.call is wrapper.launch
    assert learnt.args_as_tuple == (style == "tuple")
    assert learnt.with_constexprs == with_constexprs
    jit_args, ptr_args = _args(plan)
    fused._run(plan, jit_args)  # after learning, Triton's path again: what it sends
    sent_by_triton = _addresses(wrapper.entries[-1])
    calls = wrapper.calls
    fused._launch_direct(plan, _learnt(plan), ptr_args)
    assert wrapper.calls == calls  # the wrapper was skipped
    assert wrapper.entries[-1] == sent_by_triton
    assert plan.direct_calls == 1


@pytest.mark.parametrize("style", ["spread", "tuple"])
def test_a_kernel_with_scratch_memory_keeps_the_wrapper(
    monkeypatch: pytest.MonkeyPatch, style: str
) -> None:
    # Scratch is allocated per call, so the entry point's arguments are not a fixed prefix.
    wrapper = Wrapper(style, scratch=64)
    plan = _learn(monkeypatch, Kernel(wrapper))
    assert not _learnt(plan).raw
    assert _learnt(plan).call is wrapper
    _, ptr_args = _args(plan)
    fused._launch_direct(plan, _learnt(plan), ptr_args)
    assert wrapper.calls == 3
    entry = wrapper.entries[-1]
    assert entry[:5] == (plan.programs, 1, 1, STREAM, FUNCTION)
    assert isinstance(entry[11], torch.Tensor)  # a fresh scratch buffer, as Triton gives


def test_a_plain_launcher_is_called_as_triton_calls_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, ...]] = []

    def run(*launch_args: Any) -> None:  # no C entry point to find
        seen.append(launch_args)

    plan = _learn(monkeypatch, Kernel(run))
    assert not _learnt(plan).raw
    assert _learnt(plan).call is run
    jit_args, ptr_args = _args(plan)
    fused._run(plan, jit_args)
    fused._launch_direct(plan, _learnt(plan), ptr_args)
    assert seen[-1] == _addresses(seen[-2])


def test_an_unknown_launcher_keeps_tritons_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = Wrapper("spread")
    plan = _learn(monkeypatch, Kernel(wrapper, extra=2))  # two arguments nobody sent
    assert plan.jit_only
    assert plan.learnt is None
    jit_args, _ = _args(plan)
    fused._run(plan, jit_args)
    assert wrapper.calls == 3


def test_hooks_during_learning_postpone_it(monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = Wrapper("spread")
    monkeypatch.setattr(fused, "jsd_fwd_kernel", Kernel(wrapper))
    monkeypatch.setattr(fused, "_INTERPRET", False)
    hooks = [True]
    monkeypatch.setattr(fused, "_hooks_set", lambda: hooks[0])
    plan = _plan()
    jit_args, _ = _args(plan)
    fused._run(plan, jit_args)
    fused._run(plan, jit_args)
    assert plan.learnt is None
    assert not plan.jit_only
    hooks[0] = False
    fused._run(plan, jit_args)
    assert _learnt(plan).raw
    # The wrapper is back in place, and the entry point too, after learning.
    assert plan.compiled.run is wrapper
    assert wrapper.launch is _learnt(plan).call


def test_a_plan_shared_by_calls_takes_each_calls_beta_and_rows() -> None:
    # Without labels (BT, V) is one flat row of BT x V, so 6 x 40 and 4 x 60 share a plan;
    # 1/BT and beta's logarithms must still be each call's.
    from kernelindex_sdk.reference_kernels.jsd import jsd_torch, jsd_triton

    fused._PLANS.clear()
    g = torch.Generator().manual_seed(3)
    calls = []
    for bt, v, beta in [(6, 40, 0.3), (4, 60, 0.3), (4, 60, 0.7), (6, 40, 0.7), (6, 40, 0.3)]:
        x = torch.randn(bt, v, generator=g).log_softmax(-1)
        y = torch.randn(bt, v, generator=g).log_softmax(-1)
        calls.append((jsd_triton(x, y, beta=beta), jsd_torch(x.double(), y.double(), beta=beta)))
    assert len(fused._PLANS) == 1
    for got, expected in calls:
        torch.testing.assert_close(got.double(), expected, rtol=2e-6, atol=1e-7)
