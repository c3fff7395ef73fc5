"""The training step on a real GPU: every provider's timed call runs backward to dL/dinput.

Run on a machine with CUDA: ``python3 -m pytest -m gpu tests/reference_kernels``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk.reference_kernels.jsd import sweep

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

PROVIDERS = ["torch", "torch-compile", "triton", "liger"]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_timed_step_runs_one_backward_per_forward(
    provider: str, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if provider == "liger" and not sweep.liger_available():
        pytest.skip("liger-kernel is not installed")
    counts = {"forward": 0, "backward": 0}
    real_provider, real_backward = sweep._provider, torch.autograd.backward

    def provider_counted(name: str, case: sweep.JSDCase) -> tuple[Callable[..., Any], Any]:
        fn, implementation = real_provider(name, case)

        def forward(x: torch.Tensor, y: torch.Tensor) -> Any:
            counts["forward"] += 1
            return fn(x, y)

        return forward, implementation

    def backward(*args: Any, **kwargs: Any) -> None:
        counts["backward"] += 1
        real_backward(*args, **kwargs)

    monkeypatch.setattr(sweep, "_provider", provider_counted)
    monkeypatch.setattr(torch.autograd, "backward", backward)
    case = sweep.JSDCase(tokens=64, vocab=4096, dtype=dtype, input_grad=True)
    doc = ki.dump(sweep.run_case(provider, case, torch.device("cuda", 0)))
    spec = doc["run"]["spec"]
    assert spec["status"] == "passed", spec.get("failure")
    assert spec["workload"]["pass"] == "full"  # noqa: S105 - a pass
    assert counts["backward"] == counts["forward"] >= spec["timing"]["samples"]
