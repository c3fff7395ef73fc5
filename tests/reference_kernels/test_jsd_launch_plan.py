"""The JSD kernel's launch plan: the config tables, their lookup per device and layout, and
the plans kept between calls (``reference_kernels/jsd/launch_plan.py``); no kernel runs here but
the ahead-of-time compile."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from kernelindex_sdk.reference_kernels.jsd import launch_plan

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_the_config_table_is_reproducible_and_shrinks_for_short_rows() -> None:
    first = launch_plan.kernel_config(torch.device("cpu"), 4, 1000, False)
    assert first == launch_plan.kernel_config(torch.device("cpu"), 4, 1000, False)
    assert first.source == "interpreter"
    flat_entries = [entry for table in launch_plan.FLAT_TABLE.values() for entry in table.values()]
    entries = [entry for table in launch_plan.CONFIG_TABLE.values() for entry in table.values()]
    for block, warps, per_sm, stages in entries + flat_entries:
        # A power of two, at least 8 elements per thread, at most 8 programs per SM.
        assert block & (block - 1) == 0
        assert block // (32 * warps) >= 8
        assert 1 <= per_sm <= 8
        assert 1 <= stages <= 4
    for arch, table in launch_plan.FLAT_TABLE.items():
        assert arch in launch_plan.CONFIG_TABLE
        assert set(table) <= set(launch_plan.CONFIG_TABLE[arch])


def as_on_a_gpu(monkeypatch: pytest.MonkeyPatch, arch: tuple[int, int]) -> torch.device:
    """Without a GPU: make kernel_config look a CUDA device of ``arch`` up as on the GPU."""
    monkeypatch.setattr(launch_plan, "INTERPRET", False)
    monkeypatch.setattr(
        torch.cuda,
        "get_device_properties",
        lambda device: types.SimpleNamespace(major=arch[0], minor=arch[1]),
    )
    return torch.device("cuda")


@pytest.mark.parametrize(("arch", "source"), [((9, 0), "sm_90"), ((10, 0), "default")])
def test_the_flat_layout_takes_its_own_entry(
    monkeypatch: pytest.MonkeyPatch, arch: tuple[int, int], source: str
) -> None:
    """Without a GPU: the lookup as a device of that architecture would see it."""
    cuda = as_on_a_gpu(monkeypatch, arch)
    rows_entry = launch_plan.CONFIG_TABLE["sm_90"][(2, True)]
    flat_entry = launch_plan.FLAT_TABLE["sm_90"][(2, True)]
    assert flat_entry != rows_entry

    def picked(cols: int, grad: bool, flat: bool, size: int = 2) -> tuple[int, int, int, int]:
        config = launch_plan.kernel_config(cuda, size, cols, grad, flat)
        assert config.source == source
        return (config.block_v, config.num_warps, config.programs_per_sm, config.stages)

    for rows in (1, 1024, 8192, 16384):
        assert picked(rows * 128256, True, True) == flat_entry
    # Labelled input (row by row) and the loss alone keep CONFIG_TABLE's entries.
    assert picked(128256, True, False) == rows_entry
    assert picked(8192 * 128256, False, True) == launch_plan.CONFIG_TABLE["sm_90"][(2, False)]
    assert picked(8192 * 128256, True, True, size=4) == launch_plan.CONFIG_TABLE["sm_90"][(4, True)]
    # A short flat row (one row of 1000) shrinks the flat entry's tile as any other:
    # 1024 columns, 8 values a thread, so 4 warps; programs per SM and stages kept.
    assert picked(1000, True, True) == (1024, 4, flat_entry[2], flat_entry[3])
    assert picked(100, True, True) == (256, 1, flat_entry[2], flat_entry[3])


def test_an_architecture_with_its_own_row_ignores_another_rows_flat_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """FLAT_TABLE's sm_90 entry stands in only where CONFIG_TABLE's sm_90 row does."""
    cuda = as_on_a_gpu(monkeypatch, (10, 0))
    own = dict.fromkeys(launch_plan.CONFIG_TABLE["sm_90"], (1024, 4, 2, 1))
    monkeypatch.setitem(launch_plan.CONFIG_TABLE, "sm_100", own)
    got = launch_plan.kernel_config(cuda, 2, 1024 * 128256, True, True)
    assert got == launch_plan.KernelConfig(
        block_v=1024, num_warps=4, programs_per_sm=2, stages=1, source="sm_100"
    )


def test_every_table_config_compiles_for_sm_100_ahead_of_time() -> None:
    """Triton builds for a GPU it does not see; no B200 is needed to keep sm_100 valid."""
    pytest.importorskip("triton.backends.nvidia", reason="Triton without its NVIDIA backend")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("aot_compile.py")), "100"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # 3 beta modes x (labels, no labels, flat) x each dtype of the element size; 3 dtypes of
    # the scale kernel; FLAT_TABLE's entries in the flat layout only: 3 beta modes x each dtype.
    rows_keys, flat_keys = launch_plan.CONFIG_TABLE["sm_90"], launch_plan.FLAT_TABLE["sm_90"]
    expected = 3 + sum(3 * 3 * (1 if size == 4 else 2) for size, _ in rows_keys)
    expected += sum(3 * (1 if size == 4 else 2) for size, _ in flat_keys)
    assert done.stdout.split() == [str(expected)]


def test_kernel_config_built_without_stages_means_no_pipelining() -> None:
    config = launch_plan.KernelConfig(block_v=1024, num_warps=4, programs_per_sm=8, source="sm_90")
    assert config.stages == 1
    assert config.as_dict() == {
        "block_v": 1024,
        "num_warps": 4,
        "programs_per_sm": 8,
        "source": "sm_90",
        "stages": 1,
    }


def test_a_plan_a_cuda_graph_captured_outlives_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eviction clears the cache; a captured plan's buffers must stay referenced."""
    monkeypatch.setattr(launch_plan, "_CAPTURED_PLANS", [])
    kept = launch_plan._new_plan(torch.device(DEVICE), torch.float32, 4, 200, False, 2, False, True)
    launch_plan.keep_if_captured(kept, False)
    assert launch_plan._CAPTURED_PLANS == []
    launch_plan.keep_if_captured(kept, True)
    launch_plan.keep_if_captured(kept, True)
    assert [kept] == launch_plan._CAPTURED_PLANS
    assert kept.captured


def test_the_math_follows_the_dtype_and_the_gradient() -> None:
    """Off NVIDIA's backend each dtype keeps its GPU form with Triton's own exp2 and log2."""
    cpu = torch.device("cpu")
    assert launch_plan.math_for(cpu, torch.float32, True) == (launch_plan.PAIR, launch_plan.TL)
    assert launch_plan.math_for(cpu, torch.float32, False) == (launch_plan.PAIR, launch_plan.TL)
    assert launch_plan.math_for(cpu, torch.bfloat16, True) == (launch_plan.FOLD, launch_plan.TL)
    assert launch_plan.math_for(cpu, torch.float16, True) == (launch_plan.FOLD, launch_plan.TL)
    assert launch_plan.math_for(cpu, torch.bfloat16, False) == (launch_plan.LEAN, launch_plan.TL)


@pytest.mark.parametrize(
    ("dtype", "beta_mode", "grad", "unit"),
    [
        (torch.float32, 2, False, math.log(2.0)),
        (torch.bfloat16, 2, True, math.log(2.0)),
        (torch.bfloat16, 2, False, 1.0),
        (torch.float32, 0, True, 1.0),
        (torch.bfloat16, 1, True, 1.0),
    ],
    ids=["pair", "fold", "lean", "pair-beta0", "fold-beta1"],
)
def test_a_plan_scales_base_2_sums_by_ln_2_only(
    dtype: torch.dtype, beta_mode: int, grad: bool, unit: float
) -> None:
    """PAIR and FOLD sum in base 2 at 0 < beta < 1; LEAN and the KL ends sum in nats."""
    made = launch_plan._new_plan(torch.device(DEVICE), dtype, 1, 1000, True, beta_mode, False, grad)
    assert made.unit == unit
    assert made.constexprs["FORM"] == launch_plan.math_for(torch.device(DEVICE), dtype, grad)[0]


def test_fused_exports_the_plans_config_names() -> None:
    """KernelConfig and kernel_config still import from fused, as in 0.6.1."""
    from kernelindex_sdk.reference_kernels.jsd import fused

    assert fused.KernelConfig is launch_plan.KernelConfig
    assert fused.kernel_config is launch_plan.kernel_config
