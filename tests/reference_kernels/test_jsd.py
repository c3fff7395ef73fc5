"""JSD loss: the Triton kernel against the PyTorch reference and a float64 ground truth.

Tolerances, relative to the float64 value: 2e-6 for float32 (the interpreter runs the
GPU's float32 form with numpy's exp2 for the MUFU instructions; test_gpu.py holds the GPU
to the same), 1e-2 for bfloat16 and 2e-3 for float16 (the loss is returned in the input
dtype, so its own rounding bounds the error); gradients element-wise with atol scaled to
the gradient's largest magnitude.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

from kernelindex_sdk.errors import ArgumentError, KernelIndexError, StateError
from kernelindex_sdk.reference_kernels.jsd import fused, jsd_torch, jsd_triton, launch_plan

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
RTOL = {"fp32": 2e-6, "bf16": 1e-2, "fp16": 2e-3}
BETAS = [0.0, 0.1, 0.5, 0.9, 1.0]
SHAPES = [(1, 63), (2, 1000), (7, 130), (16, 257)]


def inputs(bt: int, v: int, dtype: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(bt, v, generator=g) * 2).log_softmax(-1)
    y = (torch.randn(bt, v, generator=g) * 2).log_softmax(-1)
    return x.to(DEVICE, DTYPES[dtype]), y.to(DEVICE, DTYPES[dtype])


def labels_for(pattern: str, bt: int) -> torch.Tensor | None:
    if pattern == "none":
        return None
    if pattern == "some-ignored":
        return torch.tensor([-100 if i % 3 == 1 else i for i in range(bt)], device=DEVICE)
    if pattern == "most-ignored":  # 7 of every 8 rows, as in 56 of 64
        return torch.tensor([i if i % 8 == 0 else -100 for i in range(bt)], device=DEVICE)
    return torch.full((bt,), -100, device=DEVICE)


def ground_truth(x: torch.Tensor, y: torch.Tensor, **kw: Any) -> torch.Tensor:
    return jsd_torch(x.double(), y.double(), **kw)


def case_id(bt: int, v: int, dtype: str) -> str:
    return f"B{bt}-V{v}-{dtype}"


@pytest.mark.parametrize("beta", BETAS, ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize(("bt", "v"), SHAPES, ids=[f"B{b}-V{v}" for b, v in SHAPES])
def test_loss_matches_float64_ground_truth(bt: int, v: int, dtype: str, beta: float) -> None:
    x, y = inputs(bt, v, dtype)
    expected = ground_truth(x, y, beta=beta)
    with torch.no_grad():
        got = jsd_triton(x, y, beta=beta)
    assert got.dtype == x.dtype
    assert got.shape == ()
    torch.testing.assert_close(got.double(), expected, rtol=RTOL[dtype], atol=1e-6)
    torch.testing.assert_close(
        jsd_torch(x, y, beta=beta).double(), expected, rtol=RTOL[dtype], atol=1e-6
    )


@pytest.mark.parametrize("pattern", ["none", "some-ignored", "most-ignored", "all-ignored"])
@pytest.mark.parametrize("beta", [0.0, 0.215, 0.37, 0.5, 1.0], ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("v", [300, 129])
def test_labels_leave_out_ignored_rows(pattern: str, beta: float, v: int) -> None:
    # V = 300 and 129 are not multiples of the tile (128 here): padding lanes in every row.
    x, y = inputs(16, v, "fp32", seed=1)
    labels = labels_for(pattern, 16)
    expected = ground_truth(x, y, beta=beta, labels=labels)
    got = jsd_triton(x, y, beta=beta, labels=labels)
    torch.testing.assert_close(got.double(), expected, rtol=2e-6, atol=1e-7)
    xt = x.clone().requires_grad_()
    jsd_triton(xt, y, beta=beta, labels=labels).backward()
    x64 = x.double().requires_grad_()
    ground_truth(x64, y, beta=beta, labels=labels).backward()
    scale = float(x64.grad.abs().max()) if pattern != "all-ignored" else 1.0  # type: ignore[union-attr]
    torch.testing.assert_close(xt.grad.double(), x64.grad, rtol=1e-5, atol=1e-6 * scale)  # type: ignore[union-attr]
    if pattern == "all-ignored":
        assert float(got) == 0.0
        assert not xt.grad.any()  # type: ignore[union-attr]


@pytest.mark.parametrize("beta", [0.0, 0.215, 1.0], ids=lambda b: f"beta{b}")
def test_ignored_rows_are_never_read(beta: float) -> None:
    """NaN in every ignored row changes nothing: their tiles load and compute nothing."""
    x, y = inputs(8, 200, "fp32", seed=9)
    labels = labels_for("most-ignored", 8)
    assert labels is not None
    ignored = labels == -100
    expected = ground_truth(x, y, beta=beta, labels=labels)
    x[ignored], y[ignored] = float("nan"), float("nan")
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=beta, labels=labels)
    loss.backward()
    torch.testing.assert_close(loss.double(), expected, rtol=2e-6, atol=1e-7)
    assert not xt.grad[ignored].any()  # type: ignore[index]


@pytest.mark.skipif(DEVICE != "cpu", reason="sets the interpreter's launch config")
@pytest.mark.parametrize(
    "config",
    [(128, 1, 1), (128, 8, 1), (128, 8, 2), (32, 3, 3)],
    ids=lambda c: f"block{c[0]}-per_sm{c[1]}-stages{c[2]}",
)
@pytest.mark.parametrize("shape", [(1, 1), (3, 127), (2, 128), (7, 129), (5, 300), (4, 256)])
@pytest.mark.parametrize("pattern", ["none", "some-ignored"])
def test_every_tile_is_taken_once_at_any_split(
    config: tuple[int, int, int],
    shape: tuple[int, int],
    pattern: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Full tiles and each row's partial tile go through two loops in one turn: at tiles
    per row of 0 (V < BLOCK_V), exact (V a multiple), or with a tail, with more programs
    than a row has tiles, flat or by rows, every value counts once (loss and gradient)."""
    block, per_sm, stages = config
    monkeypatch.setattr(
        launch_plan,
        "_INTERPRETER_CONFIG",
        launch_plan.KernelConfig(block, 1, per_sm, "interpreter", stages),
    )
    monkeypatch.setattr(launch_plan, "_PLANS", {})
    bt, v = shape
    labels = labels_for(pattern, bt)
    x, y = inputs(bt, v, "fp32", seed=bt * 1000 + v)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=0.215, labels=labels)
    loss.backward()
    x64 = x.double().requires_grad_()
    expected = ground_truth(x64, y, beta=0.215, labels=labels)
    expected.backward()
    torch.testing.assert_close(loss.double(), expected.detach(), rtol=2e-6, atol=1e-7)
    scale = float(x64.grad.abs().max())  # type: ignore[union-attr]
    torch.testing.assert_close(xt.grad.double(), x64.grad, rtol=1e-5, atol=1e-6 * scale)  # type: ignore[union-attr]
    with torch.no_grad():
        half = jsd_triton(x.bfloat16(), y.bfloat16(), beta=0.215, labels=labels)
    reference = ground_truth(x.bfloat16(), y.bfloat16(), beta=0.215, labels=labels)
    torch.testing.assert_close(half.double(), reference, rtol=RTOL["bf16"], atol=1e-6)


@triton.jit
def _padding_terms(out_ptr, beta, log2_beta, log2_omb, mode: tl.constexpr, form: tl.constexpr):
    o = tl.arange(0, 16)
    b_pad = tl.full([16], fused.PAD, tl.float32)
    b_zero = tl.zeros([16], tl.float32)
    b_acc, b_acc_p, b_acc_q, b_g = fused._tile(
        b_zero, b_zero, b_zero, b_pad, b_pad, beta, log2_beta, log2_omb, 1.0, 1.0, mode, form, "tl"
    )
    tl.store(out_ptr + o, b_acc)
    tl.store(out_ptr + 16 + o, b_g)
    tl.store(out_ptr + 32 + o, b_acc_p)
    tl.store(out_ptr + 48 + o, b_acc_q)


@pytest.mark.parametrize("form", [launch_plan.PAIR, launch_plan.LEAN, launch_plan.FOLD], ids=str)
@pytest.mark.parametrize("beta", [0.0, 1e-6, 0.215, 0.5, 1.0], ids=lambda b: f"beta{b}")
def test_padding_lanes_add_exactly_nothing(form: int, beta: float) -> None:
    """What a masked load gives a padding lane (PAD) adds exactly 0 to the loss and writes
    exactly 0 to the gradient, in every form (the kernel has no select for them)."""
    mode = 0 if beta == 0.0 else 1 if beta == 1.0 else 2
    log2_beta = math.log2(beta) if mode == 2 else 0.0
    log2_omb = math.log2(1.0 - beta) if mode == 2 else 0.0
    out = torch.full((64,), float("nan"), device=DEVICE)
    _padding_terms[(1,)](out, beta, log2_beta, log2_omb, mode=mode, form=form)
    assert out.tolist() == [0.0] * 64


@triton.jit
def _log2_1p_values(t_ptr, out_ptr, n):
    o = tl.arange(0, 1024)
    b_t = tl.load(t_ptr + o, mask=o < n, other=0.0)
    tl.store(out_ptr + o, fused._log2_1p(b_t), mask=o < n)


def test_the_kernels_log2_1p_is_the_published_polynomial() -> None:
    """The kernel writes LOG2_1P's coefficients as literals: they are the same numbers."""
    t = torch.linspace(0, 1, 1000, dtype=torch.float32, device=DEVICE)
    out = torch.full_like(t, float("nan"))
    _log2_1p_values[(1,)](t, out, t.numel())
    expected = torch.zeros_like(t, dtype=torch.float64)
    for c in reversed(fused.LOG2_1P):
        expected = expected * t.double() + c
    expected = expected * t.double()
    torch.testing.assert_close(out.double(), expected, rtol=0, atol=3e-7)


def test_the_log2_1p_polynomial_is_within_its_stated_bound() -> None:
    t = torch.linspace(0, 1, 100_001, dtype=torch.float64)
    approx = torch.zeros_like(t)
    for c in reversed(fused.LOG2_1P):
        approx = approx * t + c
    error = (approx * t - torch.log2(1 + t)).abs().max()
    assert float(error) < 7.2e-9


@pytest.mark.parametrize("beta", BETAS, ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("pattern", ["none", "some-ignored"])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_gradient_matches_autograd_of_the_reference(beta: float, pattern: str, dtype: str) -> None:
    x, y = inputs(5, 257, dtype, seed=2)
    labels = labels_for(pattern, 5)
    x64 = x.detach().double().requires_grad_()
    jsd_torch(x64, y.double(), beta=beta, labels=labels).backward()
    xt = x.detach().clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=beta, labels=labels)
    (loss * 3.0).backward()
    assert xt.grad is not None
    assert xt.grad.dtype == x.dtype
    scale = float(x64.grad.abs().max())  # type: ignore[union-attr]
    torch.testing.assert_close(
        xt.grad.double(),
        3.0 * x64.grad,
        rtol=RTOL[dtype],
        atol=RTOL[dtype] * 3.0 * scale,  # type: ignore[operator]
    )


def test_gradient_of_a_loss_backpropagated_directly_is_the_saved_one() -> None:
    x, y = inputs(3, 100, "fp32", seed=3)
    x = x.requires_grad_()
    jsd_triton(x, y).backward()
    x64 = x.detach().double().requires_grad_()
    jsd_torch(x64, y.double()).backward()
    torch.testing.assert_close(x.grad.double(), x64.grad, rtol=1e-5, atol=1e-9)  # type: ignore[union-attr]


def test_backward_releases_the_gradient_buffer_and_refuses_a_second_pass() -> None:
    """dx lives until backward, not as long as the loss (BT x V: 525 MB at 1024 x 128256)."""
    x, y = inputs(3, 100, "fp32", seed=3)
    x = x.requires_grad_()
    loss = jsd_triton(x, y)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_a_plan_shared_by_calls_takes_each_calls_beta_and_rows() -> None:
    """Without labels (BT, V) is one flat row of BT x V, so 6 x 40 and 4 x 60 share a plan
    (its config and buffers); 1/BT and beta's logarithms must still be each call's."""
    launch_plan._PLANS.clear()
    g = torch.Generator().manual_seed(3)
    calls = []
    for bt, v, beta in [(6, 40, 0.3), (4, 60, 0.3), (4, 60, 0.7), (6, 40, 0.7), (6, 40, 0.3)]:
        x = torch.randn(bt, v, generator=g).log_softmax(-1).to(DEVICE)
        y = torch.randn(bt, v, generator=g).log_softmax(-1).to(DEVICE)
        calls.append((jsd_triton(x, y, beta=beta), ground_truth(x, y, beta=beta)))
    assert len(launch_plan._PLANS) == 1
    for got, expected in calls:
        torch.testing.assert_close(got.double(), expected, rtol=2e-6, atol=1e-7)


def test_the_launch_path_uses_no_private_triton_or_torch_entry_point() -> None:
    """A reading of fused.py and launch_plan.py, kept: no launcher internals, no torch._C,
    no spies."""
    for module in (fused, launch_plan):
        source = Path(module.__file__).read_text(encoding="utf-8")
        for private in ("torch._C", "._run", ".run(", "launch_enter_hook", "packed_metadata"):
            assert private not in source, (module.__name__, private)


@pytest.mark.parametrize("scale", [2.5, -1.0, 0.0, 1.0])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_backward_scales_the_gradient_by_grad_output_on_the_device(
    scale: float, dtype: str
) -> None:
    x, y = inputs(5, 300, dtype, seed=11)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=0.37)
    (loss * scale).backward()
    unscaled = x.clone().requires_grad_()
    jsd_triton(unscaled, y, beta=0.37).backward()
    assert unscaled.grad is not None
    expected = (unscaled.grad.float() * scale).to(unscaled.grad.dtype)
    if dtype == "fp32":
        assert torch.equal(xt.grad, expected)  # type: ignore[arg-type]
    else:
        # The interpreter rounds float32 to bf16 by truncation: one bf16 step apart at most.
        torch.testing.assert_close(xt.grad, expected, rtol=2**-7, atol=0)


def test_backward_through_a_retained_graph_gives_each_grad_output_its_gradient() -> None:
    """The first backward scales dx in place; a second one through the retained graph
    must neither see that product as its own nor change the gradient returned before."""
    x, y = inputs(4, 200, "fp32", seed=12)
    reference = x.clone().requires_grad_()
    jsd_triton(reference, y).backward()
    assert reference.grad is not None
    for first in (1.0, 2.0):
        xt = x.clone().requires_grad_()
        loss = jsd_triton(xt, y)
        (loss * first).backward(retain_graph=True)
        assert xt.grad is not None
        after_first = xt.grad.clone()
        (loss * 3.0).backward()
        torch.testing.assert_close(after_first, reference.grad * first, rtol=0, atol=0)
        torch.testing.assert_close(xt.grad, reference.grad * (first + 3.0), rtol=1e-6, atol=1e-12)


# (name, rows, columns, label rows, target row stride, flat): what the launch must ask of
# kernel_config, (columns, flat), for each layout.
LAYOUTS = [
    ("rows-back-to-back", 4, 300, False, 300, (4 * 300, True)),
    ("strided-target", 4, 300, False, 600, (300, False)),
    ("labels", 4, 300, True, 300, (300, False)),
    ("one-row", 1, 300, False, 300, (300, True)),
    ("one-strided-row", 1, 300, False, 600, (300, True)),
    ("one-labelled-row", 1, 300, True, 300, (300, False)),
    ("short-rows", 3, 40, False, 40, (3 * 40, True)),
]


@pytest.mark.parametrize("grad", [False, True], ids=["loss", "grad"])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_config_for_asks_what_the_launch_asks(
    monkeypatch: pytest.MonkeyPatch, dtype: str, grad: bool
) -> None:
    """A record's config is the launch's: config_for asks kernel_config the same element
    size, columns, gradient and layout as the launch does, in every layout (one flat row
    only when both inputs are row after row, or when there is one row and no labels)."""
    seen: list[tuple[int, int, bool, bool]] = []
    original = launch_plan.kernel_config

    def spy(device: torch.device, size: int, cols: int, grad: bool, flat: bool = False) -> Any:
        seen.append((size, cols, grad, flat))
        return original(device, size, cols, grad, flat)

    monkeypatch.setattr(launch_plan, "kernel_config", spy)
    size = DTYPES[dtype].itemsize
    for name, bt, v, labelled, stride_y, (cols, flat) in LAYOUTS:
        x, y = inputs(bt, v, dtype)
        target = torch.empty(bt, stride_y, device=DEVICE, dtype=x.dtype)[:, :v].copy_(y)
        labels = torch.zeros(bt, dtype=torch.int64, device=DEVICE) if labelled else None
        seen.clear()
        launch_plan.config_for(x, target=target, labels=labels, compute_grad=grad)
        launch_plan._PLANS.clear()
        loss = jsd_triton(x.requires_grad_(grad), target, labels=labels)
        if grad:
            loss.backward()
            assert x.grad is not None
        assert seen == [(size, cols, grad, flat)] * 2, name


def test_no_grad_computes_the_loss_only() -> None:
    x, y = inputs(3, 100, "fp32")
    x = x.requires_grad_()
    with torch.no_grad():
        loss = jsd_triton(x, y)
    assert not loss.requires_grad
    assert loss.grad_fn is None


def test_input_without_grad_needs_no_gradient() -> None:
    x, y = inputs(3, 100, "fp32")
    loss = jsd_triton(x, y)
    assert not loss.requires_grad


def test_row_strided_inputs() -> None:
    """Rows of a wider buffer: stride(0) > V, stride(1) == 1."""
    wide_x, wide_y = inputs(4, 300, "fp32", seed=4)
    x, y = wide_x[:, :200], wide_y[:, 50:250]
    x = x - x.logsumexp(-1, keepdim=True)
    y = y - y.logsumexp(-1, keepdim=True)
    x_strided = torch.empty(4, 300, device=DEVICE)[:, :200].copy_(x)
    assert x_strided.stride(0) == 300
    expected = ground_truth(x, y)
    torch.testing.assert_close(jsd_triton(x_strided, y).double(), expected, rtol=2e-6, atol=1e-7)


def test_triton_and_torch_agree_on_a_random_beta_and_shape() -> None:
    g = torch.Generator().manual_seed(5)
    bt, v = (
        int(torch.randint(1, 9, (1,), generator=g)),
        int(torch.randint(2, 700, (1,), generator=g)),
    )
    beta = float(torch.rand(1, generator=g))
    x, y = inputs(bt, v, "fp32", seed=6)
    torch.testing.assert_close(
        jsd_triton(x, y, beta=beta), jsd_torch(x, y, beta=beta), rtol=1e-5, atol=1e-7
    )


def test_beta_zero_is_forward_kl_and_one_is_reverse_kl() -> None:
    x, y = inputs(2, 50, "fp32", seed=7)
    p, q = y.exp(), x.exp()
    forward_kl = (p * (y - x)).sum() / 2
    reverse_kl = (q * (x - y)).sum() / 2
    torch.testing.assert_close(jsd_triton(x, y, beta=0.0), forward_kl, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(jsd_triton(x, y, beta=1.0), reverse_kl, rtol=1e-5, atol=1e-7)


LONG = torch.long


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x, y: jsd_triton(x[0], y[0]), "input: must be 2-D"),
        (lambda x, y: jsd_triton(x, y[:, :-1]), "target: shape"),
        (lambda x, y: jsd_triton(x, y.double()), "target: dtype torch.float64"),
        (lambda x, y: jsd_triton(x, y.bfloat16()), "target: dtype torch.bfloat16"),
        (lambda x, y: jsd_triton(x.double(), y.double()), "input: .* use jsd_torch for float64"),
        (lambda x, y: jsd_triton(x.int(), y.int()), "input: dtype torch.int32"),
        (lambda x, y: jsd_triton(x.t(), y.t()), r"input: rows must be contiguous"),
        (lambda x, y: jsd_triton(x, y.t().contiguous().t()), r"target: rows must be contiguous"),
        (lambda x, y: jsd_triton(x[:0], y[:0]), "input: must not be empty"),
        (lambda x, y: jsd_triton(x[:, :0], y[:, :0]), "input: must not be empty"),
        (lambda x, y: jsd_triton(x, y.to("meta")), "target: on meta"),
        (lambda x, y: jsd_triton(x, y, beta=1.5), r"beta: must be in \[0, 1\]"),
        (lambda x, y: jsd_triton(x, y, beta=-0.0001), r"beta: must be in \[0, 1\]"),
        (lambda x, y: jsd_triton(x, y, beta=math.nan), r"beta: must be in \[0, 1\], got nan"),
        (lambda x, y: jsd_triton(x, y, labels=torch.zeros(4, dtype=LONG)), "labels: must have"),
        (lambda x, y: jsd_triton(x, y, labels=torch.zeros(3)), "labels: must be integers"),
        (
            lambda x, y: jsd_triton(x, y, labels=torch.zeros(3, dtype=torch.complex64)),
            "labels: must be integers",
        ),
        (lambda x, y: jsd_triton(x, y, ignore_index=-100.0), "ignore_index: expected an integer"),
        (lambda x, y: jsd_triton(x, y, ignore_index=None), "ignore_index: expected an integer"),
        (
            lambda x, y: jsd_triton(x, y, labels=torch.zeros(3, dtype=LONG, device="meta")),
            "labels: on meta",
        ),
    ],
)
@pytest.mark.parametrize("grad", [False, True])
def test_bad_inputs_raise_an_argument_error(call: Any, message: str, grad: bool) -> None:
    x, y = inputs(3, 64, "fp32")
    with pytest.raises(ArgumentError, match=message) as caught:
        call(x.requires_grad_(grad), y)
    assert isinstance(caught.value, KernelIndexError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: torch.tensor([1, -100, 2, -100, -100, 5, -100, 7, 3, 3, -100, 4], device=d)[::2],
        lambda d: torch.tensor([-100], device=d).expand(6),
        lambda d: torch.tensor(
            [[0, 1], [2, -100], [-100, 5], [6, 7], [-100, 9], [1, 2]], device=d
        ).t()[1],
    ],
    ids=["every-other", "stride-0", "a-column"],
)
def test_labels_of_any_stride_are_read_as_given(make: Any) -> None:
    x, y = inputs(6, 129, "fp32")
    # Made on the device: a copy there (.to) would be contiguous.
    labels = make(DEVICE)
    assert labels.stride(0) != 1
    torch.testing.assert_close(
        jsd_triton(x, y, beta=0.37, labels=labels).double(),
        jsd_torch(x.double(), y.double(), beta=0.37, labels=labels),
        rtol=2e-6,
        atol=1e-7,
    )


def test_an_int_beta_and_a_numpy_index_are_taken_as_they_read() -> None:
    np = pytest.importorskip("numpy")
    x, y = inputs(3, 64, "fp32")
    labels = torch.tensor([0, -7, 2], device=DEVICE)
    expected = jsd_torch(x.double(), y.double(), beta=1.0, labels=labels, ignore_index=-7)
    for beta in (1, 1.0, np.float32(1.0), 1):
        got = jsd_triton(x, y, beta=beta, labels=labels, ignore_index=np.int64(-7))
        torch.testing.assert_close(got.double(), expected, rtol=2e-6, atol=1e-7)


@pytest.mark.skipif(DEVICE != "cpu", reason="the interpreter check only applies without a GPU")
def test_cpu_tensors_run_through_the_interpreter() -> None:
    # The kernel was defined as an interpreted function, and it computes on CPU tensors.
    assert type(fused.jsd_fwd_kernel).__name__ == "InterpretedFunction"
    x, y = inputs(2, 100, "fp32")
    got = jsd_triton(x, y, beta=0.215)
    assert got.device.type == "cpu"
    torch.testing.assert_close(got.double(), ground_truth(x, y, beta=0.215), rtol=2e-6, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_large_vocabulary_on_the_gpu(dtype: str) -> None:
    x, y = inputs(64, 128256, dtype, seed=8)
    torch.testing.assert_close(
        jsd_triton(x, y).double(), ground_truth(x, y), rtol=RTOL[dtype], atol=1e-6
    )


def test_a_second_backward_after_a_zero_grad_output_is_refused_not_nan() -> None:
    """dx was scaled to 0 in place by the first backward: nothing is left to rescale."""
    x, y = inputs(4, 200, "fp32", seed=13)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y)
    (loss * 0.0).backward(retain_graph=True)
    assert xt.grad is not None
    assert torch.equal(xt.grad, torch.zeros_like(xt))
    with pytest.raises(StateError, match="second backward through a retained graph"):
        loss.backward()


def test_double_backward_is_refused_not_cut_off() -> None:
    """The gradient comes from the forward: there is no graph to differentiate again."""
    x, y = inputs(4, 200, "fp32", seed=14)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y)
    with pytest.raises(StateError, match="create_graph=True: the kernel has no second"):
        torch.autograd.grad(loss, xt, create_graph=True)
    # Without create_graph the same call still gives the gradient.
    (grad,) = torch.autograd.grad(loss, xt)
    assert grad.shape == xt.shape
