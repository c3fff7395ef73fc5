"""Generalized Jensen-Shannon divergence loss in plain PyTorch: the ground truth.

With P = exp(target) (teacher) and Q = exp(input) (student), both (BT, V) log-probabilities,
and M = beta*P + (1-beta)*Q:

    loss = beta*KL(P||M) + (1-beta)*KL(Q||M)     for 0 < beta < 1
    loss = KL(P||Q)  for beta = 0,   KL(Q||P)  for beta = 1

summed over V and averaged over the rows whose label is not ``ignore_index`` (0 when
every row is ignored), as Liger-Kernel's ``LigerJSD`` defines it. beta 0 and 1 are the
two KL divergences themselves, not the limits of the formula (which vanish).
"""

from __future__ import annotations

import torch

from ...errors import ArgumentError

__all__ = ["check_jsd_inputs", "jsd_torch"]

SUPPORTED_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)


def check_jsd_inputs(
    input: torch.Tensor, target: torch.Tensor, beta: float, labels: torch.Tensor | None
) -> None:
    """Check that the arguments fit the JSD loss's contract.

    Raises:
        ArgumentError: naming the first argument that does not fit (``input``,
            ``target``, ``beta`` or ``labels``); it is a ValueError too.
    """
    if input.ndim != 2:
        raise ArgumentError(
            argument="input", reason=f"must be 2-D (BT, V), got shape {tuple(input.shape)}"
        )
    if input.shape[0] == 0 or input.shape[1] == 0:
        raise ArgumentError(
            argument="input", reason=f"must not be empty, got shape {tuple(input.shape)}"
        )
    if target.shape != input.shape:
        raise ArgumentError(
            argument="target",
            reason=f"shape {tuple(target.shape)} != input shape {tuple(input.shape)}",
        )
    if input.dtype != target.dtype:
        raise ArgumentError(
            argument="target", reason=f"dtype {target.dtype} != input dtype {input.dtype}"
        )
    if input.dtype not in SUPPORTED_DTYPES:
        raise ArgumentError(
            argument="input",
            reason=f"dtype {input.dtype} is not supported; use float32, bfloat16 or float16",
        )
    if input.device != target.device:
        raise ArgumentError(
            argument="target", reason=f"on {target.device}, input on {input.device}"
        )
    if not 0.0 <= beta <= 1.0:
        raise ArgumentError(argument="beta", reason=f"must be in [0, 1], got {beta!r}")
    if labels is not None:
        if labels.shape != input.shape[:1]:
            raise ArgumentError(
                argument="labels",
                reason=f"must have shape ({input.shape[0]},), got {tuple(labels.shape)}",
            )
        if labels.dtype.is_floating_point or labels.dtype.is_complex or labels.dtype == torch.bool:
            raise ArgumentError(argument="labels", reason=f"must be integers, got {labels.dtype}")
        if labels.device != input.device:
            raise ArgumentError(
                argument="labels", reason=f"on {labels.device}, input on {input.device}"
            )


def jsd_torch(
    input: torch.Tensor,
    target: torch.Tensor,
    *,
    beta: float = 0.5,
    labels: torch.Tensor | None = None,
    ignore_index: int = -100,
) -> torch.Tensor:
    """Return the generalized JSD loss of ``input`` (log Q) against ``target`` (log P).

    Args:
        input: Student log-probabilities, shape (BT, V).
        target: Teacher log-probabilities, same shape and dtype.
        beta: Weight of P in the mixture M, in [0, 1].
        labels: Optional (BT,) integer labels; rows labelled ``ignore_index`` are left out.
        ignore_index: The label value of rows to leave out.

    Returns:
        A scalar in ``input``'s dtype, computed in float32 (float64 for float64 input).

    Raises:
        ArgumentError: for shapes, dtypes, devices, a beta or labels the loss does not
            take (it is a ValueError too).
    """
    check_jsd_inputs(input, target, beta, labels)
    compute = torch.promote_types(input.dtype, torch.float32)
    log_q, log_p = input.to(compute), target.to(compute)
    q, p = log_q.exp(), log_p.exp()
    # A log-probability of -inf (a masked or padded entry) is probability 0, and
    # 0 * log 0 = 0: a term whose leading probability is 0 is 0, by where(), with the
    # logarithms it would have used replaced by 0 so that no inf - inf or 0 * inf reaches
    # the values or the gradient. Where the divergence is infinite (beta 0: P > 0 where
    # Q = 0; beta 1: Q > 0 where P = 0), the term is +inf.
    # != 0, not > 0: a NaN stays a NaN.
    has_p, has_q = p != 0, q != 0
    if beta == 0.0:
        per_element = torch.where(
            has_p, p * (log_p.where(has_p, 0.0) - log_q.where(has_p, 0.0)), 0.0
        )
    elif beta == 1.0:
        per_element = torch.where(
            has_q, q * (log_q.where(has_q, 0.0) - log_p.where(has_q, 0.0)), 0.0
        )
    else:
        m = beta * p + (1.0 - beta) * q
        log_m = m.where(m != 0, 1.0).log()
        per_element = torch.where(
            has_p, beta * p * (log_p.where(has_p, 0.0) - log_m), 0.0
        ) + torch.where(has_q, (1.0 - beta) * q * (log_q.where(has_q, 0.0) - log_m), 0.0)
    per_row = per_element.sum(dim=-1)
    if labels is None:
        loss = per_row.sum() / input.shape[0]
    else:
        kept = labels != ignore_index
        count = kept.sum()
        # where, not a product: an ignored row may hold +inf.
        total = per_row.where(kept, 0.0).sum()
        loss = torch.where(count > 0, total / count.clamp(min=1), 0.0)
    return loss.to(input.dtype)
