"""Masked vocabularies: log-probabilities of -inf are probability 0, with 0 * log 0 = 0.

A vocabulary padded to a multiple of 64 or 128 with -inf logits has such entries, and so
does a top-k or top-p teacher in distillation. The ground truth here is written from the
definition in float64, entry by entry over the entries whose probability is not 0
(boolean indexing, not the where() of ``jsd_torch``), with the gradient from its closed
form (jsd/README.md). Where the divergence is infinite by definition (beta 0: P > 0 where
Q = 0; beta 1: Q > 0 where P = 0) the loss is +inf. These run through the interpreter on
the CPU and on the GPU when there is one (``-m gpu`` selects the large shapes).
"""

from __future__ import annotations

import math

import pytest
import torch

from kernelindex_sdk.reference_kernels.jsd import jsd_torch, jsd_triton, sweep

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
RTOL = {"fp32": 2e-6, "bf16": 1e-2, "fp16": 2e-3}
BETAS = [0.0, 0.1, 0.3, 0.5, 0.9, 1.0]
#: Entries per row that are -inf in both inputs, in the target only, in the input only.
MASKS = {
    "both-and-target": (8, 4, 0),  # the 2 x 64 case: finite but at beta 1
    "both-and-input": (8, 0, 4),  # finite but at beta 0
    "all-three": (5, 3, 2),  # infinite at beta 0 and at beta 1
    "both-only": (40, 0, 0),  # finite at every beta; most of a 64-entry row gone
}


def masked_inputs(
    bt: int, v: int, dtype: str, mask: str, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-softmax of random logits, with each row's masked entries at random columns."""
    both, target_only, input_only = MASKS[mask]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(bt, v, generator=g, dtype=torch.float64) * 2
    y = torch.randn(bt, v, generator=g, dtype=torch.float64) * 2
    for row in range(bt):
        cols = torch.randperm(v, generator=g)
        x[row, cols[:both]] = -math.inf
        y[row, cols[:both]] = -math.inf
        y[row, cols[both : both + target_only]] = -math.inf
        x[row, cols[both + target_only : both + target_only + input_only]] = -math.inf
    x, y = x.log_softmax(-1), y.log_softmax(-1)
    return x.to(DEVICE, DTYPES[dtype]), y.to(DEVICE, DTYPES[dtype])


def truth(
    x: torch.Tensor, y: torch.Tensor, beta: float, labels: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss and dloss/dinput in float64, from the definition."""
    x, y = x.double().cpu(), y.double().cpu()
    q, p = x.exp(), y.exp()
    terms = torch.zeros_like(x)
    grad = torch.zeros_like(x)
    has_p, has_q = p > 0, q > 0
    if beta == 0.0:
        terms[has_p] = p[has_p] * (y[has_p] - x[has_p])  # +inf where Q = 0
        grad = -p
    elif beta == 1.0:
        terms[has_q] = q[has_q] * (x[has_q] - y[has_q])  # +inf where P = 0
        grad[has_q] = q[has_q] * (x[has_q] - y[has_q] + 1.0)
    else:
        log_m = (beta * p + (1.0 - beta) * q).log()
        terms[has_p] += beta * p[has_p] * (y[has_p] - log_m[has_p])
        terms[has_q] += (1.0 - beta) * q[has_q] * (x[has_q] - log_m[has_q])
        grad[has_q] = (1.0 - beta) * q[has_q] * (x[has_q] - log_m[has_q])
    rows = torch.ones(x.shape[0], dtype=torch.bool)
    if labels is not None:
        rows = labels.cpu() != -100
    kept = int(rows.sum())
    if kept == 0:
        return torch.tensor(0.0, dtype=torch.float64), torch.zeros_like(x)
    grad[~rows] = 0.0
    return terms[rows].sum() / kept, grad / kept


def check(got: torch.Tensor, expected: torch.Tensor, dtype: str) -> None:
    if math.isinf(float(expected)):
        assert float(got) == float(expected)
    else:
        torch.testing.assert_close(got.double().cpu(), expected, rtol=RTOL[dtype], atol=1e-6)


def check_grad(got: torch.Tensor, expected: torch.Tensor, dtype: str) -> None:
    got = got.double().cpu()
    assert not got.isnan().any()
    # Infinite entries must be the same infinities; the finite ones as in test_jsd.py.
    assert torch.equal(got.isinf(), expected.isinf())
    assert torch.equal(got[got.isinf()], expected[expected.isinf()])
    finite = expected.isfinite()
    atol, rtol = sweep.GRAD_TOLERANCES[dtype]
    scale = float(expected[finite].abs().max())
    torch.testing.assert_close(
        got[finite],
        expected[finite],
        rtol=rtol,
        atol=max(atol * scale, sweep.GRAD_ATOL_FLOOR[dtype], 1e-30),
    )


def infinite_by_definition(mask: str, beta: float) -> bool:
    _, target_only, input_only = MASKS[mask]
    return (beta == 0.0 and input_only > 0) or (beta == 1.0 and target_only > 0)


@pytest.mark.parametrize("beta", BETAS, ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("mask", list(MASKS))
def test_masked_entries_give_the_defined_loss_and_gradient(
    mask: str, dtype: str, beta: float
) -> None:
    # V = 64: the rows; 2 x 64 is one flat row of 128 (two interpreter tiles).
    x, y = masked_inputs(2, 64, dtype, mask, seed=int(beta * 10) + len(mask))
    expected, expected_grad = truth(x, y, beta)
    assert math.isinf(float(expected)) == infinite_by_definition(mask, beta)
    with torch.no_grad():
        check(jsd_triton(x, y, beta=beta), expected, dtype)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=beta)
    loss.backward()
    check(loss.detach(), expected, dtype)
    check_grad(xt.grad, expected_grad, dtype)  # type: ignore[arg-type]
    # The reference, with autograd's gradient, agrees with the definition too.
    x64 = x.double().requires_grad_()
    reference = jsd_torch(x64, y.double(), beta=beta)
    reference.backward()
    check(reference.detach(), expected, "fp32")
    check_grad(x64.grad, expected_grad, "fp32")  # type: ignore[arg-type]


@pytest.mark.parametrize("beta", BETAS, ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("v", [129, 300])
def test_masked_entries_with_labels_and_padding_lanes(v: int, dtype: str, beta: float) -> None:
    """By rows (labels), with partly filled tiles: ignored rows get a gradient of 0."""
    x, y = masked_inputs(6, v, dtype, "all-three", seed=v)
    labels = torch.tensor([3, -100, 5, -100, -100, 1], device=DEVICE)
    expected, expected_grad = truth(x, y, beta, labels)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=beta, labels=labels)
    loss.backward()
    check(loss.detach(), expected, dtype)
    check_grad(xt.grad, expected_grad, dtype)  # type: ignore[arg-type]
    assert not xt.grad[[1, 3, 4]].any()  # type: ignore[index]
    check(jsd_torch(x.double(), y.double(), beta=beta, labels=labels), expected, "fp32")


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0], ids=lambda b: f"beta{b}")
def test_an_ignored_row_with_an_infinite_divergence_leaves_the_loss_finite(beta: float) -> None:
    x, y = masked_inputs(4, 64, "fp32", "all-three", seed=4)
    labels = torch.tensor([-100, 1, -100, 2], device=DEVICE)
    x[1], y[1] = x[1].nan_to_num(neginf=-30.0), y[1].nan_to_num(neginf=-30.0)
    x[3], y[3] = x[3].nan_to_num(neginf=-30.0), y[3].nan_to_num(neginf=-30.0)
    expected, _ = truth(x, y, beta, labels)
    assert math.isfinite(float(expected))
    check(jsd_triton(x, y, beta=beta, labels=labels), expected, "fp32")
    check(jsd_torch(x.double(), y.double(), beta=beta, labels=labels), expected, "fp32")


@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0], ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("where", ["input", "target"])
def test_a_nan_stays_a_nan(where: str, dtype: str, beta: float) -> None:
    """The floor that maps -inf to a zero probability must not turn a NaN into one."""
    x, y = masked_inputs(2, 64, dtype, "both-only", seed=9)
    finite = x[0].isfinite() & y[0].isfinite()
    col = int(finite.nonzero()[0])
    (x if where == "input" else y)[0, col] = math.nan
    assert math.isnan(float(jsd_triton(x, y, beta=beta)))
    assert math.isnan(float(jsd_torch(x, y, beta=beta)))


class TextbookJSD(torch.nn.Module):
    """The plain PyTorch formula Liger-Kernel's tests hold its kernel to
    (test/transformers/test_jsd.py: KLDivLoss with log_target=True), float32."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        self.kl = torch.nn.KLDivLoss(reduction="batchmean", log_target=True)
        self.beta = beta

    def forward(self, log_q: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
        log_p, log_q = log_p.float(), log_q.float()
        if self.beta == 0.0:
            return self.kl(log_q, log_p)  # type: ignore[no-any-return]
        m = self.beta * log_p.exp() + (1 - self.beta) * log_q.exp()
        return (  # type: ignore[no-any-return]
            self.beta * self.kl(m.log(), log_p) + (1 - self.beta) * self.kl(m.log(), log_q)
        )


@pytest.mark.parametrize("beta", [0.0, 0.3, 0.5], ids=lambda b: f"beta{b}")
def test_the_textbook_formula_gives_nan_where_ours_is_finite(beta: float) -> None:
    """What docs/guides/jsd-kernels.md says of the peers: the issue's 2 x 64 input."""
    x, y = masked_inputs(2, 64, "fp32", "both-and-target", seed=24)
    expected, _ = truth(x, y, beta)
    assert math.isfinite(float(expected))
    assert math.isnan(float(TextbookJSD(beta)(x, y)))
    check(jsd_triton(x, y, beta=beta), expected, "fp32")


@pytest.mark.gpu
@pytest.mark.parametrize("beta", [0.0, 0.3, 0.5, 1.0], ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_masked_entries_at_a_full_vocabulary(dtype: str, beta: float) -> None:
    """The issue's H200 case: 8 x 128256, a padded tail and a top-k teacher's zeros."""
    x, y = masked_inputs(8, 128256, dtype, "both-and-target", seed=5)
    # A vocabulary padded from 128000: the last 256 entries masked in both.
    x[:, 128000:], y[:, 128000:] = -math.inf, -math.inf
    expected, expected_grad = truth(x, y, beta)
    xt = x.clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=beta)
    loss.backward()
    check(loss.detach(), expected, dtype)
    check_grad(xt.grad, expected_grad, dtype)  # type: ignore[arg-type]


@pytest.mark.gpu
@pytest.mark.parametrize("beta", [0.0, 0.3, 0.5], ids=lambda b: f"beta{b}")
def test_ligers_kernel_gives_nan_where_ours_is_finite(beta: float) -> None:
    """What docs/guides/jsd-kernels.md says of Liger-Kernel (0.8.5 measured)."""
    liger = pytest.importorskip("liger_kernel.transformers.jsd", reason="needs liger-kernel")
    x, y = masked_inputs(8, 128256, "fp32", "both-and-target", seed=6)
    expected, _ = truth(x, y, beta)
    assert math.isfinite(float(expected))
    xl = x.clone().requires_grad_()
    theirs = liger.LigerJSD(beta=beta)(xl, y)
    theirs.backward()
    assert math.isnan(float(theirs)) or bool(xl.grad.isnan().any())  # type: ignore[union-attr]
    check(jsd_triton(x, y, beta=beta), expected, "fp32")
