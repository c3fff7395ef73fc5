"""The harness's wall clock records how much of the CPUs others used, and a shared run is
degraded everywhere downstream: the bench summary, validate and compare."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import kernelindex_sdk as ki
from kernelindex_sdk._cli import main
from kernelindex_sdk.conditions import DEGRADED_OTHERS_BUSY_FRACTION
from kernelindex_sdk.provenance import Provenance
from kernelindex_sdk.reference_kernels import harness

CPU = torch.device("cpu")
DIGESTS = ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest")
LINUX = Path("/proc/stat").exists() and hasattr(os, "sched_setaffinity")


def _bench(fn: Any = lambda: torch.ones(3), **kwargs: Any) -> ki.RecordBundle:
    return harness.bench(
        fn,
        reference=lambda: torch.ones(3),
        workload={"operation": "ones", "pass": "forward", "parameters": {"n": 3}},
        implementation={"provider": "torch"},
        device=CPU,
        min_samples=10,
        provenance=Provenance(),
        **kwargs,
    )


class _Watcher:
    """Stands in for the CPU sampler: notes how many calls were made when it was entered
    and left, and gives a fixed state."""

    def __init__(self, calls: list[int]) -> None:
        self.calls = calls
        self.seen: list[int] = []
        self.result = {"cpu": {"availableCpus": 2, "windowMs": 250, "othersBusyFraction": 0.5}}

    def __enter__(self) -> _Watcher:
        self.seen.append(len(self.calls))
        return self

    def __exit__(self, *exc: object) -> None:
        self.seen.append(len(self.calls))


def test_the_state_covers_the_timed_calls_and_not_the_check_or_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    watcher = _Watcher(calls)
    monkeypatch.setattr(harness, "sample_cpu", lambda: watcher)

    def fn() -> torch.Tensor:
        calls.append(1)
        return torch.ones(3)

    record = _bench(fn)
    # One call for the check, the warm-up, then the 10 timed calls inside the sampler.
    before = 1 + harness.CPU_WARMUP_CALLS
    assert watcher.seen == [before, before + 10]
    spec = ki.dump(record)["run"]["spec"]
    assert spec["conditions"] == watcher.result
    assert ki.validate(record, verify_digests=True) == []
    assert ki.conditions.degraded_reason(spec) == (
        "CPU shared: other processes used 50% of 2 CPUs during the timed loop (limit 10%)"
    )


@pytest.mark.skipif(not LINUX, reason="reads /proc/stat")
def test_a_cpu_run_records_the_cpus_state_and_keeps_its_digests() -> None:
    plain = ki.dump(_bench(cpu_state=False))["run"]["spec"]
    record = _bench()
    spec = ki.dump(record)["run"]["spec"]
    assert "conditions" not in plain
    cpu = spec["conditions"]["cpu"]
    assert cpu["availableCpus"] == len(os.sched_getaffinity(0))
    assert cpu["windowMs"] >= 250
    assert 0 <= cpu["othersBusyFraction"] <= 1
    assert "gpu" not in spec["conditions"]
    assert ki.validate(record, verify_digests=True) == []
    assert [spec[d] for d in DIGESTS] == [plain[d] for d in DIGESTS]


def _pinned(cpu: int, code: str) -> list[str]:
    """Our interpreter running ``code`` pinned to ``cpu`` (set in the child itself: no
    preexec_fn in a process with threads)."""
    return [sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{cpu}}})\n{code}"]


@contextlib.contextmanager
def _busy_loop_on(cpu: int) -> Iterator[None]:
    """A Python busy loop pinned to ``cpu`` for the duration of the block."""
    proc = subprocess.Popen(_pinned(cpu, "while True:\n    pass\n"))
    try:
        yield
    finally:
        proc.terminate()
        proc.wait()


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(b""))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.skipif(not LINUX, reason="reads /proc/stat and pins processes to a CPU")
def test_kernelindex_bench_beside_a_busy_loop_is_degraded_in_validate_and_compare(
    tmp_path: Path,
) -> None:
    """The README's job beside a busy loop: the bench and the loop share one CPU (pinned by
    affinity, so the test means the same on 2 CPUs or 64), the loop takes about half of it,
    and every record says so."""
    cpu = min(os.sched_getaffinity(0))
    out = tmp_path / "runs.jsonl"
    argv = [
        "kernelindex",
        "bench",
        "jsd",
        "--impl",
        "torch",
        "--tokens",
        "4,16",
        "--vocab",
        "64",
        "--no-progress",
        "-o",
        str(out),
    ]
    # The command as `python -m kernelindex_sdk` runs it, from a process pinned first.
    command = _pinned(
        cpu,
        f"import runpy, sys\nsys.argv = {argv!r}\n"
        "runpy.run_module('kernelindex_sdk', run_name='__main__')",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with _busy_loop_on(cpu):
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        state = record["run"]["spec"]["conditions"]["cpu"]
        assert state["availableCpus"] == 1
        assert state["othersBusyFraction"] > DEGRADED_OTHERS_BUSY_FRACTION
    # The bench summary marks each median and says why.
    assert done.stderr.count("CPU shared: other processes used") == 2
    status, _, err = _cli("validate", str(out))
    assert status == 0, err
    notices = [line for line in err.splitlines() if ": degraded: CPU shared: " in line]
    assert len(notices) == 2
    status, text, err = _cli("compare", str(out), str(out), "--format", "json")
    assert status == 0, err
    rows = json.loads(text)
    assert [row["verdict"] for row in rows] == ["degraded", "degraded"]
    assert all("CPU shared" in row["evidence"] for row in rows)
