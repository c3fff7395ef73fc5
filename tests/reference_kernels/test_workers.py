"""The per-device worker pool, with CPU processes standing in for GPUs.

What this proves: the process plumbing (one spawned process per device, the pinning
variables set before the worker loads, records streamed back to the parent, dead workers
turned into failed records, interrupts) on the CPU. It does not prove that a GPU is
pinned: that needs CUDA_VISIBLE_DEVICES read by a real CUDA runtime, on a GPU host.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _fake_workers import MARK, PINNED, fake_worker, record

from kernelindex_sdk.errors import LaunchError
from kernelindex_sdk.models import RecordBundle
from kernelindex_sdk.reference_kernels.workers import (
    Device,
    Finished,
    cuda_devices,
    parse_devices,
    run_on_devices,
)

CPUS = [Device(name=f"cpu-{tag}", target="cpu", environ={PINNED: tag}) for tag in "ab"]


def failed(point: tuple[str, int], device: Device, reason: str) -> dict[str, Any]:
    doc = record(point[1], device=device.name)
    doc["run"]["metadata"]["annotations"]["test.kernelindex.dev/failure"] = reason
    return doc


def run(points: list[tuple[str, int]], devices: list[Device] = CPUS) -> list[Finished[Any]]:
    with contextlib.closing(run_on_devices(fake_worker, points, devices, failed=failed)) as it:
        return list(it)


def annotations(finished: Finished[Any]) -> dict[str, str]:
    if isinstance(finished.record, RecordBundle):
        return dict(finished.record.run.metadata.annotations or {})
    return dict(finished.record["run"]["metadata"]["annotations"])


def test_every_point_runs_once_in_one_process_per_device() -> None:
    points = [("ok", i) for i in range(6)]
    results = run(points)
    assert sorted(r.point for r in results) == sorted(points)
    assert all(isinstance(r.record, RecordBundle) for r in results)
    assert not any(r.worker_failed for r in results)
    by_device: dict[str, set[str]] = {}
    for r in results:
        notes = annotations(r)
        # The worker saw the pinning variable of its own device, set before it loaded.
        assert notes["test.kernelindex.dev/pinned"] == r.device.removeprefix("cpu-")
        assert notes["test.kernelindex.dev/device"] == "cpu"
        by_device.setdefault(r.device, set()).add(notes["test.kernelindex.dev/pid"])
    assert set(by_device) == {"cpu-a", "cpu-b"}
    pids = [pid for group in by_device.values() for pid in group]
    assert len(pids) == len(set(pids)) == 2
    assert str(os.getpid()) not in pids


def test_points_are_split_by_cost() -> None:
    points = [("ok", i) for i in range(4)]
    costs = {0: 10.0, 1: 1.0, 2: 1.0, 3: 1.0}
    with contextlib.closing(
        run_on_devices(fake_worker, points, CPUS, failed=failed, cost=lambda p: costs[p[1]])
    ) as it:
        devices = {r.point[1]: r.device for r in it}
    assert devices == {0: "cpu-a", 1: "cpu-b", 2: "cpu-b", 3: "cpu-b"}


def test_a_dead_worker_becomes_failed_records_and_the_others_go_on() -> None:
    # With equal costs cpu-a gets points 0, 2, 4 and cpu-b 1, 3, 5 (dealt by count).
    points = [("ok", 0), ("ok", 1), ("die", 2), ("ok", 3), ("ok", 4), ("ok", 5)]
    results = run(points)
    assert sorted(r.point for r in results) == sorted(points)
    failures = {r.point: annotations(r) for r in results if r.worker_failed}
    assert set(failures) == {("die", 2), ("ok", 4)}
    for notes in failures.values():
        assert notes["test.kernelindex.dev/failure"] == (
            "the worker process on cpu-a exited with status 3 before finishing this point"
        )
    assert {r.point for r in results if not r.worker_failed} == {
        ("ok", 0),
        ("ok", 1),
        ("ok", 3),
        ("ok", 5),
    }


def test_a_worker_that_raises_stops_and_says_why() -> None:
    points = [("raise", 0), ("ok", 1), ("ok", 2)]
    results = run(points)
    failures = {r.point: annotations(r) for r in results if r.worker_failed}
    assert set(failures) == {("raise", 0), ("ok", 2)}
    assert failures["raise", 0]["test.kernelindex.dev/failure"] == (
        "the worker on cpu-a raised RuntimeError: cannot run point 0"
    )


def test_an_invalid_record_becomes_a_failed_record() -> None:
    """The worker's own dumps refuses it (dumps validates), so it never reaches the parent."""
    results = run([("bad", 0), ("ok", 1)])
    [failure] = [r for r in results if r.worker_failed]
    reason = annotations(failure)["test.kernelindex.dev/failure"]
    assert reason.startswith("the worker on cpu-a raised SchemaValidationError: ")
    assert "/run/spec/timing/latencyNs/median" in reason


def test_a_killed_worker_is_named_by_its_signal() -> None:
    script = textwrap.dedent(
        """
        import contextlib, os, signal, sys
        from _fake_workers import fake_worker, record
        from kernelindex_sdk.reference_kernels.workers import Device, run_on_devices

        def failed(point, device, reason):
            print("FAILED", point[1], reason, flush=True)
            return record(point[1])

        devices = [Device(name="cpu-a", target="cpu")]
        it = run_on_devices(fake_worker, [("ok", 0), ("hang", 1)], devices, failed=failed)
        with contextlib.closing(it):
            for finished in it:
                print("GOT", finished.point[1], finished.worker_failed, flush=True)
                if not finished.worker_failed:
                    pid = finished.record.run.metadata.annotations["test.kernelindex.dev/pid"]
                    os.kill(int(pid), signal.SIGKILL)
        """
    )
    out = _python(script, timeout=120)
    assert out.stdout.splitlines() == [
        "GOT 0 False",
        "FAILED 1 the worker process on cpu-a was killed by SIGKILL before finishing this point",
        "GOT 1 True",
    ]


def _env() -> dict[str, str]:
    """A child interpreter that imports _fake_workers (and what pytest put on the path)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}


def _python(script: str, *, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_an_interrupt_stops_the_workers_and_keeps_every_finished_record(tmp_path: Path) -> None:
    """SIGINT to the parent (as Ctrl-C): finished records are written, no worker is left."""
    out = tmp_path / "runs.jsonl"
    script = textwrap.dedent(
        f"""
        import contextlib, multiprocessing, sys
        from _fake_workers import fake_worker, record
        from kernelindex_sdk.documents import JSONLinesWriter
        from kernelindex_sdk.reference_kernels.workers import Device, run_on_devices

        devices = [Device(name="cpu-" + t, target="cpu") for t in "ab"]
        points = [("ok", 0), ("ok", 1), ("hang", 2), ("hang", 3)]
        it = run_on_devices(fake_worker, points, devices, failed=lambda p, d, r: record(p[1]))
        try:
            with JSONLinesWriter({str(out)!r}) as writer, contextlib.closing(it):
                for finished in it:
                    writer.write(finished.record)
                    print("GOT", finished.point[1], flush=True)
        except KeyboardInterrupt:
            print("INTERRUPTED", len(multiprocessing.active_children()), flush=True)
            sys.exit(130)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], env=_env(), stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        got = [process.stdout.readline().strip() for _ in range(2)]
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=120)
    assert sorted(got) == ["GOT 0", "GOT 1"]
    assert rest.splitlines() == ["INTERRUPTED 0"]
    assert process.returncode == 130
    names = [line.split('"name":"')[1].split('"')[0] for line in out.read_text().splitlines()]
    assert sorted(names) == ["point-0", "point-1"]


def test_an_interrupt_still_yields_the_records_already_sent(tmp_path: Path) -> None:
    """Records a worker sent before the interrupt, not yet read by the parent, are kept."""
    import multiprocessing
    import time

    mark = tmp_path / "mark"
    device = Device(name="cpu-a", target="cpu", environ={MARK: str(mark)})
    points = [("ok", 0), ("ok", 1), ("ok", 2), ("mark-hang", 3)]
    it = run_on_devices(fake_worker, points, [device], failed=failed)
    with contextlib.closing(it):
        first = next(it)
        # The worker marks once records 1 and 2 are in the pipe, unread.
        deadline = time.monotonic() + 120
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mark.exists()
        kept = [it.throw(KeyboardInterrupt)]
        with pytest.raises(KeyboardInterrupt):
            kept.extend(it)
    assert [first.point, *(k.point for k in kept)] == points[:3]
    assert not any(k.worker_failed for k in kept)
    assert multiprocessing.active_children() == []


def test_leaving_the_loop_early_stops_the_workers() -> None:
    import multiprocessing

    it = run_on_devices(fake_worker, [("ok", 0), ("hang", 1)], CPUS[:1], failed=failed)
    with contextlib.closing(it):
        first = next(it)
    assert first.point == ("ok", 0)
    assert multiprocessing.active_children() == []


def test_parse_devices() -> None:
    assert parse_devices("all", 4) == [0, 1, 2, 3]
    assert parse_devices("2,0", 4) == [2, 0]


@pytest.mark.parametrize(
    ("text", "available", "fragment"),
    [
        ("all", 0, "no GPU is visible"),
        ("0,4", 4, "indices below 4, got '0,4'"),
        ("x", 4, "got 'x'"),
        ("1,1", 4, "expected each GPU once"),
        ("", 4, "got ''"),
    ],
)
def test_bad_device_lists_are_usage_errors(text: str, available: int, fragment: str) -> None:
    with pytest.raises(LaunchError) as caught:
        parse_devices(text, available)
    assert caught.value.setting == "--devices"
    assert fragment in str(caught.value)


def test_cuda_devices_pin_the_physical_gpu_behind_each_ordinal() -> None:
    devices = cuda_devices([0, 1], {"CUDA_VISIBLE_DEVICES": "4,6"})
    assert [(d.name, d.target, dict(d.environ)) for d in devices] == [
        ("cuda:0", "cuda:0", {"CUDA_VISIBLE_DEVICES": "4"}),
        ("cuda:1", "cuda:0", {"CUDA_VISIBLE_DEVICES": "6"}),
    ]
    assert [dict(d.environ) for d in cuda_devices([1], {})] == [{"CUDA_VISIBLE_DEVICES": "1"}]
