"""How ``jsd_triton`` learns to launch its compiled kernel without Triton's JIT dispatch.

Triton's launchers differ between versions; these fakes have the shapes seen so far (3.6:
the C entry point gets the kernel's arguments spread; 3.9: as one tuple, after more
metadata) and the ones the learning must refuse. Each test checks that a learnt launch
sends the C entry point (or the wrapper) exactly what Triton's own path sent, with device
addresses in place of tensors. tests/reference_kernels/test_gpu.py checks the real one.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import torch

from kernelindex_sdk.reference_kernels.jsd import fused

STREAM = 7
FUNCTION = 123456789012345


class Wrapper:
    """A fake ``compiled.run``: Triton's Python launcher around its C ``launch``."""

    def __init__(
        self,
        style: str,
        scratch: int = 0,
        *,
        profile_scratch: int = 0,
        gsan: bool = False,
        fresh_tensor: bool = False,
        grid_scale: int = 1,
        entry_calls: int = 1,
    ) -> None:
        self.style = style
        self.global_scratch_size = scratch
        self.profile_scratch_size = profile_scratch
        self.gsan_enabled = gsan
        self.fresh_tensor = fresh_tensor
        self.grid_scale = grid_scale
        self.entry_calls = entry_calls
        self.during: Any = None  # called inside each call, before the entry point
        self.entries: list[tuple[Any, ...]] = []
        self.calls = 0

        def launch(*entry_args: Any) -> None:
            self.entries.append(entry_args)

        self.launch = launch

    def __call__(self, gx: int, gy: int, gz: int, stream: int, function: int, *rest: Any) -> None:
        self.calls += 1
        if self.during is not None:
            self.during()
        packed, _meta, enter, exit_, *args = rest
        # Fresh buffers' addresses: others on every call.
        scratch = 8192 * self.calls if self.global_scratch_size else None
        profile = 4096 * self.calls if self.profile_scratch_size else None
        if self.fresh_tensor:  # something made per call that no size announces
            scratch = torch.empty(1)
        lead = (gx * self.grid_scale, gy, gz, stream, function, False, False)
        for _ in range(self.entry_calls):
            if self.style == "spread":  # Triton 3.6
                self.launch(*lead, packed, None, enter, exit_, scratch, profile, *args)
            else:  # Triton 3.9: annotations and signature, then the arguments as one tuple
                meta = (packed, None, enter, exit_, scratch, profile, "ann", b"sig")
                self.launch(*lead, *meta, tuple(args))


class Compiled:
    def __init__(self, run: Any) -> None:
        self.run = run
        self.function = FUNCTION
        self.packed_metadata = (4, 1, 0)


class Kernel:
    """A fake ``jsd_fwd_kernel``: ``kernel[grid](*args, **constexprs)`` as Triton's JIT."""

    def __init__(
        self, run: Any, with_constexprs: bool = False, extra: int = 0, converted: bool = False
    ) -> None:
        self.compiled = Compiled(run)
        self.with_constexprs = with_constexprs
        self.extra = extra
        self.converted = converted

    def __getitem__(self, grid: tuple[int]) -> Any:
        def launch(*args: Any, num_warps: int, **constexprs: Any) -> Compiled:
            tail = (*args, *constexprs.values()) if self.with_constexprs else args
            tail = (*tail, *range(self.extra))
            if self.converted:  # as many arguments as sent, but not the ones sent
                tail = (*tail[:-1], str(tail[-1]))
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


def _install(monkeypatch: pytest.MonkeyPatch, kernel: Kernel) -> None:
    """Triton's JIT replaced by ``kernel``, compiled kernels kept, no launch hooks."""
    monkeypatch.setattr(fused, "jsd_fwd_kernel", kernel)
    monkeypatch.setattr(fused, "_INTERPRET", False)
    monkeypatch.setattr(fused, "_hooks_set", lambda: False)


def _learn(monkeypatch: pytest.MonkeyPatch, kernel: Kernel) -> fused._Plan:
    _install(monkeypatch, kernel)
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
    assert entry[11] == 8192 * wrapper.calls  # this call's scratch buffer, as Triton gives


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


@pytest.mark.parametrize(
    "settings",
    [{"profile_scratch": 64}, {"gsan": True}, {"fresh_tensor": True}, {"grid_scale": 2}],
    ids=["profile-scratch", "gsan", "a-fresh-tensor", "another-grid"],
)
def test_an_entry_call_that_is_not_a_fixed_prefix_keeps_the_wrapper(
    monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any]
) -> None:
    wrapper = Wrapper("spread", **settings)
    plan = _learn(monkeypatch, Kernel(wrapper))
    assert not _learnt(plan).raw
    assert _learnt(plan).call is wrapper


def test_a_launcher_given_other_values_keeps_tritons_dispatch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = _learn(monkeypatch, Kernel(Wrapper("spread"), converted=True))
    assert plan.jit_only
    assert plan.learnt is None


def test_other_launches_during_learning_postpone_it_then_it_gives_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every learning run sees two launches (as when another thread launches the same
    # kernel meanwhile): no launch is learnt from them, and after three tries none is.
    wrapper = Wrapper("spread")
    kernel = Kernel(wrapper)
    wrapper.during = lambda: None
    _install(monkeypatch, kernel)
    plan = _plan()
    jit_args, _ = _args(plan)
    fused._run(plan, jit_args)
    nested = [True]

    def launch_again() -> None:
        if nested[0]:
            nested[0] = False
            kernel[(1,)](*jit_args, num_warps=4)
            nested[0] = True

    wrapper.during = launch_again
    for tries in (1, 2):
        fused._run(plan, jit_args)
        assert plan.learnt is None
        assert not plan.jit_only
        assert plan.learn_tries == tries
    fused._run(plan, jit_args)
    assert plan.jit_only
    assert kernel.compiled.run is wrapper


def test_an_entry_point_called_twice_is_not_learnt(monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = Wrapper("spread", entry_calls=2)
    plan = _learn(monkeypatch, Kernel(wrapper))
    assert plan.learnt is None  # tried once; two more tries before keeping the wrapper
    jit_args, _ = _args(plan)
    fused._run(plan, jit_args)
    fused._run(plan, jit_args)
    assert not _learnt(plan).raw
    assert _learnt(plan).call is wrapper


def test_a_thread_that_launches_while_another_learns_leaves_no_spy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two plans share one compiled kernel (as two streams do). A learns; while its launch
    # is in flight, B's second call arrives: B launches through Triton (A's spy passes it
    # on) and learns later; afterwards the real launcher is back in place.
    wrapper = Wrapper("spread")
    kernel = Kernel(wrapper)
    _install(monkeypatch, kernel)
    plan_a, plan_b = _plan(), _plan()
    args_a, _ = _args(plan_a)
    args_b, _ = _args(plan_b)
    fused._run(plan_a, args_a)
    fused._run(plan_b, args_b)
    inside, go_on = threading.Event(), threading.Event()

    def hold() -> None:
        if threading.current_thread() is not threading.main_thread():
            inside.set()
            assert go_on.wait(10)

    wrapper.during = hold
    learning = threading.Thread(target=fused._run, args=(plan_a, args_a))
    learning.start()
    assert inside.wait(10)
    calls = wrapper.calls
    fused._run(plan_b, args_b)  # the main thread, while A holds the spies
    assert wrapper.calls == calls + 1
    assert plan_b.learnt is None
    go_on.set()
    learning.join(10)
    wrapper.during = None
    assert kernel.compiled.run is wrapper
    assert "launch" in vars(wrapper)
    assert wrapper.launch.__name__ == "launch"
    assert plan_a.learnt is None  # it saw B's launch too: it tries again
    assert not plan_a.jit_only
    for plan, args in ((plan_a, args_a), (plan_b, args_b)):
        fused._run(plan, args)
        assert _learnt(plan).raw


def test_launch_hooks_set_after_learning_take_tritons_dispatch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernelindex_sdk.reference_kernels.jsd import jsd_triton

    wrapper = Wrapper("spread")
    kernel = Kernel(wrapper)
    monkeypatch.setattr(fused, "jsd_fwd_kernel", kernel)
    hooks = [False]
    monkeypatch.setattr(fused, "_hooks_set", lambda: hooks[0])
    fused._PLANS.clear()
    x, y = torch.randn(4, 100).log_softmax(-1), torch.randn(4, 100).log_softmax(-1)
    jsd_triton(x, y)  # in the interpreter nothing is compiled: give the plan the fake
    (plan,) = fused._PLANS.values()
    plan.compiled = kernel.compiled
    jsd_triton(x, y)
    assert _learnt(plan).raw
    hooks[0] = True
    calls = wrapper.calls
    jsd_triton(x, y)
    assert wrapper.calls == calls + 1  # through Triton, so that the hooks see the launch
    assert plan.direct_calls == 0
    hooks[0] = False
    jsd_triton(x, y)
    assert wrapper.calls == calls + 1
    assert plan.direct_calls == 1
