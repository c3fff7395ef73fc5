"""benchmarks/jsd_forward.py on the CPU, its CUDA timers stubbed: what each column times.

The GPU numbers come from the device; here we check that every side measure of a
gradient point times the same training step as the record (forward, then backward to
dL/dinput), that the forward-only columns do not, and how the table reads them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from kernelindex_sdk.reference_kernels import timing
from kernelindex_sdk.reference_kernels.jsd import sweep

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPT = BENCHMARKS / "jsd_forward.py"
CPU = torch.device("cpu")


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    # The script imports its shared helpers as a sibling module, as when run from there.
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("jsd_forward", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["jsd_forward"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("jsd_forward", None)


class Log:
    """Each stubbed timer's calls: (timer, backward passes the timed call ran)."""

    def __init__(self) -> None:
        self.backwards = 0
        self.calls: list[tuple[str, int]] = []
        # Whether the stubbed sync probe says a training step blocks the host on the GPU.
        self.step_waits = False

    def run(self, timer: str, fn: Callable[[], Any]) -> None:
        before = self.backwards
        fn()
        self.calls.append((timer, self.backwards - before))


@pytest.fixture
def log(script: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Log:
    found = Log()
    real_backward = torch.autograd.backward

    def backward(*args: Any, **kwargs: Any) -> None:
        found.backwards += 1
        real_backward(*args, **kwargs)

    def graph_ms(fn: Callable[[], Any]) -> float:
        found.run("graph", fn)
        return 0.4

    def do_bench(fn: Callable[[], Any], **kwargs: Any) -> float:
        found.run("do_bench", fn)
        return 0.6

    def events(fn: Callable[[], Any], grads: Any, n: int, **kwargs: Any) -> timing.Measured:
        found.run("events", fn)
        return timing.Measured(samples_ms=[0.25])

    def host_us(*fns: Callable[[], Any], **kwargs: Any) -> Any:
        from _results import HostTimes

        for fn in fns:
            found.run("host", fn)
        return HostTimes(us=[[10.0 * (i + 1)] for i in range(len(fns))], outlasted=0)

    def waits_for_gpu(fn: Callable[[], Any]) -> bool:
        found.run("waits", fn)
        # A step that syncs, as a backward reading grad_output on the host does.
        return found.step_waits and found.calls[-1][1] > 0

    monkeypatch.setattr(torch.autograd, "backward", backward)
    monkeypatch.setattr(script, "waits_for_gpu", waits_for_gpu)
    monkeypatch.setattr(script, "graph_ms", graph_ms)
    monkeypatch.setattr(script, "do_bench", do_bench)
    monkeypatch.setattr(script, "host_us", host_us)
    monkeypatch.setattr(script, "read_stream_ms", lambda x, y: 0.2)
    monkeypatch.setattr(timing, "time_cuda_events", events)
    return found


def _measure(script: ModuleType, input_grad: bool) -> list[dict[str, Any]]:
    case = sweep.JSDCase(tokens=4, vocab=64, dtype="fp32", input_grad=input_grad)
    written: list[Any] = []
    rows = script.measure(case, ["torch", "triton"], CPU, 1e12, written.append)
    assert [r.run.spec.status for r in written] == ["passed", "passed"]
    return rows  # type: ignore[no-any-return]


def test_every_side_measure_of_a_step_runs_backward_and_forward_only_does_not(
    script: ModuleType, log: Log
) -> None:
    rows = _measure(script, input_grad=True)
    # Once per case: the same-bytes add (host batch, events, graph), no backward.
    same, *per_provider = _split(log.calls)
    assert same == [("host", 0), ("events", 0), ("graph", 0)]
    for calls in per_provider:
        assert calls == [
            ("waits", 1),  # does the step block the host on the GPU?
            ("graph", 1),  # the step under a CUDA graph
            ("do_bench", 1),  # the step under do_bench
            ("waits", 0),  # does the forward only?
            ("events", 0),  # forward only, as called
            ("graph", 0),  # forward only, CUDA graph
            ("host", 1),  # host batches: the step,
            ("host", 0),  # a torch add_ launch,
            ("host", 0),  # and the forward only
        ]
    for row in rows:
        assert row["same_bytes_ms"] == 0.25
        assert row["step_over_same_bytes"] == pytest.approx(row["median_ms"] / 0.25)
        assert row["step_over_same_bytes_cudagraph"] == pytest.approx(0.4 / 0.4)
        assert (row["host_us_per_call"], row["torch_add_host_us"]) == (10.0, 20.0)
        assert row["forward_only_host_us"] == 30.0
        assert row["forward_only_ms"] == 0.25
        assert (row["waits_for_gpu"], row["forward_only_waits_for_gpu"]) == (False, False)
        # The step also writes dL/dinput: 1.5 times the bytes the read roofline reads.
        assert row["read_roofline_ms"] == pytest.approx(0.3)


def _split(calls: list[tuple[str, int]]) -> list[list[tuple[str, int]]]:
    """The same-bytes calls (first three), then each provider's nine."""
    return [calls[:3], calls[3:12], calls[12:]]


def test_loss_only_points_time_no_backward_and_no_same_bytes(script: ModuleType, log: Log) -> None:
    rows = _measure(script, input_grad=False)
    assert log.backwards == 0
    assert [timer for timer, _ in log.calls] == ["waits", "graph", "do_bench", "host", "host"] * 2
    for row in rows:
        assert "same_bytes_ms" not in row
        assert "forward_only_ms" not in row
        assert "step_over_same_bytes" not in row


def test_a_step_that_waits_for_the_gpu_is_not_captured_in_a_graph(
    script: ModuleType, log: Log
) -> None:
    log.step_waits = True
    rows = _measure(script, input_grad=True)
    # Per provider: no graph of the step, only of the forward alone.
    assert [t for t, _ in log.calls].count("graph") == 1 + 2
    for row in rows:
        assert row["waits_for_gpu"] is True
        assert "cudagraph_ms" not in row
        assert row["cudagraph_ms_error"].startswith("skipped: the call blocks the host")
        assert row["forward_only_cudagraph_ms"] == 0.4
        assert "step_over_same_bytes_cudagraph" not in row
    text = script.table(rows, "CPU", 4.6e12, 4.2e12)
    [line] = [line for line in text.splitlines() if line.startswith("| 4 x 64 |")]
    assert "10 (waits)" in line


def test_a_failing_side_measure_leaves_its_error_and_the_rest(
    script: ModuleType, log: Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(fn: Callable[[], Any]) -> float:
        raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(script, "graph_ms", refused)
    rows = _measure(script, input_grad=True)
    for row in rows:
        assert "cudagraph_ms" not in row
        assert row["cudagraph_ms_error"].startswith("RuntimeError: operation not permitted")
        assert row["do_bench_ms"] == 0.6
        assert "step_over_same_bytes_cudagraph" not in row
        assert row["step_over_same_bytes"] > 0
    assert all("same_bytes_cudagraph_ms_error" in row for row in rows)
    assert all(row["same_bytes_ms"] == 0.25 for row in rows)


def test_the_table_shows_the_training_step_beside_the_same_bytes(
    script: ModuleType, log: Log
) -> None:
    rows = _measure(script, input_grad=False) + _measure(script, input_grad=True)
    text = script.table(rows, "CPU", 4.6e12, 4.2e12)
    lines = text.splitlines()
    assert "## Loss only" in lines
    step = lines.index("## Training step: forward + backward down to dL/dinput")
    header = lines[step + 2]
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[:5] == ["BT x V", "dtype", "torch", "triton", "same bytes: torch.add"]
    assert cells[5:7] == ["torch / same bytes", "triton / same bytes"]
    assert "triton forward only" in cells
    assert "host us/forward only" in cells
    [row] = [line for line in lines[step + 4 :] if line.startswith("| 4 x 64 |")]
    values = [c.strip() for c in row.strip("|").split("|")]
    assert len(values) == len(cells)
    ours = next(r for r in rows if r["provider"] == "triton" and r["input_grad"])
    assert values[4] == "0.250 / 0.400"
    assert values[6] == f"{ours['step_over_same_bytes']:.2f} / 1.00"
    assert values[cells.index("triton forward only")] == "0.250 / 0.400"
    assert values[cells.index("host us/step")] == "10"
    assert values[cells.index("host us/forward only")] == "30"
    assert "`(waits)`: the call blocked the host until the GPU caught up" in text
