"""The GPU path on a real GPU: fast-math numerics, Liger's tolerances, digests, timers.

Run on a machine with CUDA: ``python3 -m pytest -m gpu tests/reference_kernels``.
Tolerances against float64: the float32 path (libdevice expf/logf, in nats) is within a few
1e-7 relative; bf16 and fp16 return the loss in their own dtype, so their rounding bounds
it (2^-8, 2^-11); gradients element by element as in sweep.GRAD_TOLERANCES.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk.reference_kernels import harness
from kernelindex_sdk.reference_kernels.jsd import fused, jsd_torch, jsd_triton, sweep

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
LOSS_RTOL = {"fp32": 2e-6, "bf16": 1e-2, "fp16": 2e-3}
DIGESTS = ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest")
SRC = Path(__file__).resolve().parents[2] / "src"


def inputs(bt: int, v: int, dtype: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(bt, v, generator=g, device="cuda").log_softmax(-1).to(DTYPES[dtype])
    y = torch.randn(bt, v, generator=g, device="cuda").log_softmax(-1).to(DTYPES[dtype])
    return x, y


def labels_for(pattern: str, bt: int) -> torch.Tensor | None:
    if pattern == "none":
        return None
    labels = torch.arange(bt, device="cuda")
    if pattern == "most-ignored":  # 56 of 64 rows ignored, as in the issue
        labels[torch.arange(bt, device="cuda") % 8 != 0] = -100
    elif pattern == "half-ignored":
        labels[1::2] = -100
    else:
        labels[:] = -100
    return labels


@pytest.mark.parametrize("beta", [0.0, 0.215, 0.37, 0.5, 0.9, 1.0], ids=lambda b: f"beta{b}")
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("pattern", ["none", "most-ignored", "half-ignored", "all-ignored"])
@pytest.mark.parametrize("v", [128256, 32003])
def test_loss_and_gradient_against_float64(beta: float, dtype: str, pattern: str, v: int) -> None:
    x, y = inputs(64, v, dtype, seed=int(beta * 1000) + v)
    labels = labels_for(pattern, 64)
    x64 = x.detach().double().requires_grad_()
    expected = jsd_torch(x64, y.double(), beta=beta, labels=labels)
    expected.backward()
    with torch.no_grad():
        loss_only = jsd_triton(x, y, beta=beta, labels=labels)
    xt = x.detach().clone().requires_grad_()
    loss = jsd_triton(xt, y, beta=beta, labels=labels)
    loss.backward()
    torch.testing.assert_close(
        loss_only.double(), expected.detach(), rtol=LOSS_RTOL[dtype], atol=1e-7
    )
    torch.testing.assert_close(
        loss.detach().double(), expected.detach(), rtol=LOSS_RTOL[dtype], atol=1e-7
    )
    atol, rtol = sweep.GRAD_TOLERANCES[dtype]
    scale = float(x64.grad.abs().max())  # type: ignore[union-attr]
    torch.testing.assert_close(
        xt.grad.double(),
        x64.grad,
        rtol=rtol,
        atol=max(atol * scale, sweep.GRAD_ATOL_FLOOR[dtype], 1e-30),  # type: ignore[union-attr]
    )
    if pattern == "all-ignored":
        assert float(loss) == 0.0
        assert not xt.grad.any()  # type: ignore[union-attr]


class LigerTorchJSD(torch.nn.Module):
    """Liger-Kernel's own test reference (test/transformers/test_jsd.py), float32."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        self.kl = torch.nn.KLDivLoss(reduction="batchmean", log_target=True)
        self.beta = beta

    def forward(self, log_q: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
        log_p, log_q = log_p.float(), log_q.float()
        if self.beta == 0.0:
            return self.kl(log_q, log_p)  # type: ignore[no-any-return]
        if self.beta == 1.0:
            return self.kl(log_p, log_q)  # type: ignore[no-any-return]
        m = self.beta * torch.exp(log_p) + (1 - self.beta) * torch.exp(log_q)
        log_m = torch.log(m)
        return self.beta * self.kl(log_m, log_p) + (1 - self.beta) * self.kl(log_m, log_q)  # type: ignore[no-any-return]


@pytest.mark.parametrize("beta", [0.1, 0.5, 0.9])
@pytest.mark.parametrize(
    "shape", [(2 * 4096, 32000), (41 * 401, 1271), (4096, 128256), (3 * 423, 32000)]
)
@pytest.mark.parametrize("last_layer", [True, False])
def test_liger_tolerances_in_float32(beta: float, shape: tuple[int, int], last_layer: bool) -> None:
    """A Liger user's own test: rtol 1e-6, atol 1e-7 against their float32 torch reference."""
    torch.manual_seed(42)
    x = torch.randn(*shape, device="cuda").log_softmax(-1)
    y = torch.randn(*shape, device="cuda").log_softmax(-1)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    expected = LigerTorchJSD(beta)(x1, y)
    got = jsd_triton(x2, y, beta=beta)
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-7)
    factor = 1.0 if last_layer else 2.0
    (expected * factor).backward()
    (got * factor).backward()
    torch.testing.assert_close(x2.grad, x1.grad, rtol=1e-6, atol=1e-7)


_DIGEST_SCRIPT = """
import json, sys, torch
from kernelindex_sdk.reference_kernels.jsd import sweep
out = []
for case in (sweep.JSDCase(tokens=1024, vocab=128256, dtype="fp32", input_grad=True),
             sweep.JSDCase(tokens=1024, vocab=128256, dtype="bf16"),
             sweep.JSDCase(tokens=1000, vocab=32003, dtype="bf16", beta=0.37, input_grad=True)):
    spec = sweep.run_case("triton", case, torch.device("cuda", 0)).run.spec
    out.append([spec.status, spec.protocol_digest, spec.workload_digest,
                spec.environment_digest, spec.implementation_digest])
print(json.dumps(out))
"""


def test_two_processes_give_identical_digests() -> None:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _DIGEST_SCRIPT],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            ).stdout.splitlines()[-1]
        )
        for _ in range(2)
    ]
    assert [row[0] for row in runs[0]] == ["passed"] * 3
    assert runs[0] == runs[1]


def _bench(
    timer: str, fn: Any, grads: list[torch.Tensor], min_samples: int = 100
) -> dict[str, Any]:
    case = sweep.JSDCase(tokens=64, vocab=4096, dtype="fp32")
    doc = ki.dump(
        harness.bench(
            fn,
            workload=case.workload(),
            implementation={"provider": "test"},
            grad_to_none=grads,
            device=torch.device("cuda", 0),
            min_samples=min_samples,
            timer=timer,
        )
    )
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize("timer", ["cuda-events", "cuda-graph"])
def test_gpu_timers_reach_the_sample_floor_and_reset_grads(timer: str) -> None:
    x, y = inputs(64, 4096, "fp32")
    x.requires_grad_()
    seen: list[bool] = []

    def step() -> torch.Tensor:
        seen.append(x.grad is None)
        loss = jsd_triton(x, y)
        if not torch.cuda.is_current_stream_capturing():
            loss.backward()
        return loss

    doc = _bench(timer, step, [x], min_samples=150)
    spec = doc["run"]["spec"]
    assert spec["status"] == "unverified"
    assert spec["timing"]["samples"] >= 150
    assert doc["protocol"]["spec"]["measurement"]["timer"] == timer.replace("-", "_")
    if timer == "cuda-events":
        # grad_to_none: every timed call after the first starts from x.grad None.
        assert seen.count(True) >= 150


def test_the_timer_is_part_of_the_protocol_digest() -> None:
    x, y = inputs(64, 4096, "fp32")
    events = _bench("cuda-events", lambda: jsd_triton(x, y), [])
    graph = _bench("cuda-graph", lambda: jsd_triton(x, y), [])
    assert events["run"]["spec"]["protocolDigest"] != graph["run"]["spec"]["protocolDigest"]
    assert events["run"]["spec"]["workloadDigest"] == graph["run"]["spec"]["workloadDigest"]


def test_sweep_checks_the_gradient_and_records_its_error() -> None:
    case = sweep.JSDCase(tokens=256, vocab=32003, dtype="bf16", beta=0.215, input_grad=True)
    doc = ki.dump(sweep.run_case("triton", case, torch.device("cuda", 0)))
    spec = doc["run"]["spec"]
    assert spec["status"] == "passed", spec.get("failure")
    errors = {m["metric"]: m["value"] for m in spec["measurements"]}
    assert 0 < errors["grad_input_max_rel_error"] < sweep.GRAD_TOLERANCES["bf16"][1]
    assert "config" not in spec["implementation"]
    assert "BLOCK_V" not in json.dumps(spec["implementation"])
    assert "block_v=" in doc["run"]["metadata"]["annotations"]["kernelindex.dev/config"]


def test_a_wrong_gradient_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    real = fused._JSDFunction.backward

    def doubled(ctx: Any, grad_output: torch.Tensor) -> Any:
        dx, *rest = real(ctx, grad_output)
        return (dx * 2, *rest)

    monkeypatch.setattr(fused._JSDFunction, "backward", staticmethod(doubled))
    case = sweep.JSDCase(tokens=64, vocab=4096, dtype="fp32", input_grad=True)
    spec = ki.dump(sweep.run_case("triton", case, torch.device("cuda", 0)))["run"]["spec"]
    assert spec["status"] == "failed"
    assert spec["failure"]["reason"] == "mismatch"
    assert spec["failure"]["message"].startswith("grad_input differs")


def test_a_cuda_graph_replays_the_loss() -> None:
    x, y = inputs(512, 32003, "bf16")
    expected = jsd_torch(x.double(), y.double(), beta=0.37)
    jsd_triton(x, y, beta=0.37)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        jsd_triton(x, y, beta=0.37)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            loss = jsd_triton(x, y, beta=0.37)
    for _ in range(3):
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(loss.double(), expected, rtol=1e-2, atol=1e-7)


def _step_inputs(dtype: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = inputs(256, 32003, dtype, seed=seed)
    return x, y


@pytest.mark.parametrize("scale", [1.0, 2.5])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_a_training_step_captures_in_a_cuda_graph(dtype: str, scale: float) -> None:
    """Forward and loss.backward() in one graph: backward decides on grad_output on the
    GPU (a host copy of it would refuse the capture), and replays follow new inputs."""
    x_static, y_static = _step_inputs(dtype, seed=31)
    x_static.requires_grad_()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):  # compile and warm up on the capture stream
            x_static.grad = None
            (jsd_triton(x_static, y_static, beta=0.37) * scale).backward()
    torch.cuda.current_stream().wait_stream(stream)
    x_static.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        loss = jsd_triton(x_static, y_static, beta=0.37)
        (loss * scale).backward()
    for seed in (32, 33):
        x_new, y_new = _step_inputs(dtype, seed=seed)
        with torch.no_grad():
            x_static.copy_(x_new)
            y_static.copy_(y_new)
        graph.replay()
        torch.cuda.synchronize()
        x64 = x_new.double().requires_grad_()
        expected = jsd_torch(x64, y_new.double(), beta=0.37)
        (expected * scale).backward()
        torch.testing.assert_close(
            loss.detach().double(), expected.detach(), rtol=LOSS_RTOL[dtype], atol=1e-7
        )
        atol, rtol = sweep.GRAD_TOLERANCES[dtype]
        scale_g = float(x64.grad.abs().max())  # type: ignore[union-attr]
        torch.testing.assert_close(
            x_static.grad.double(),  # type: ignore[union-attr]
            x64.grad,
            rtol=rtol,
            atol=atol * scale_g,
        )


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_a_training_step_never_synchronizes_with_the_host(scale: float) -> None:
    x, y = inputs(64, 32003, "bf16", seed=34)
    x.requires_grad_()
    (jsd_triton(x, y) * scale).backward()  # compile outside the check
    x.grad = None
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        (jsd_triton(x, y) * scale).backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    assert x.grad is not None


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
@pytest.mark.parametrize("grad", [False, True])
def test_inputs_on_another_gpu_run_on_their_own_device(grad: bool) -> None:
    """The current device is cuda:0 and the inputs live on cuda:1: the kernel runs on
    cuda:1 (a launch on cuda:0 would read another GPU's addresses)."""
    torch.cuda.set_device(0)
    x, y = inputs(64, 32003, "fp32", seed=35)
    x1, y1 = x.to("cuda:1").requires_grad_(grad), y.to("cuda:1")
    labels = labels_for("half-ignored", 64)
    assert labels is not None
    loss = jsd_triton(x1, y1, beta=0.37, labels=labels.to("cuda:1"))
    assert loss.device == torch.device("cuda", 1)
    assert torch.cuda.current_device() == 0
    x64 = x.double().requires_grad_(grad)
    expected = jsd_torch(x64, y.double(), beta=0.37, labels=labels)
    torch.testing.assert_close(
        loss.detach().cpu().double(), expected.detach().cpu(), rtol=2e-6, atol=1e-7
    )
    if grad:
        (loss * 2.0).backward()
        (expected * 2.0).backward()
        assert x1.grad is not None
        assert x1.grad.device == torch.device("cuda", 1)
        torch.testing.assert_close(
            x1.grad.cpu().double(),
            x64.grad.cpu(),
            rtol=1e-4,
            atol=1e-5 * float(x64.grad.abs().max()),  # type: ignore[union-attr]
        )
