"""``kernelindex bench jsd`` past one process: --shard, launcher variables, {rank}, --devices.

On the CPU, with tiny points (Triton in its interpreter). The launchers' variables are
set by hand, as torchrun and Slurm document them; no torchrun or Slurm job runs here.
``--devices cpu,cpu`` starts CPU worker processes in place of GPUs (a test hook): it
proves the process plumbing (shares, records streamed to one writer, dead workers as
failed records), not GPU pinning or timing faithfulness.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest
import torch

from kernelindex_sdk._cli import main
from kernelindex_sdk.convert import dumps
from kernelindex_sdk.errors import LaunchError
from kernelindex_sdk.reference_kernels.jsd import sweep
from kernelindex_sdk.reference_kernels.launch import CPU_WORKERS, JSDOptions, prepare_jsd
from kernelindex_sdk.reference_kernels.workers import Device
from kernelindex_sdk.validation import check

TINY = ("--tokens", "2,3", "--vocab", "33", "--dtype", "fp32", "--impl", "torch,triton")
# The launchers' variables this process may have inherited: each test sets its own.
LAUNCHER = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
    CPU_WORKERS,
)
# The time a run started and the random suffix that sets apart runs of one millisecond.
STAMP = re.compile(r"-\d{4}(-\d\d){5}-\d{3}-[0-9a-f]{8}$")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER}
    return {**env, **extra}


def plan(shard: str | None = None, **environ: str) -> Any:
    return prepare_jsd(
        JSDOptions(providers=("torch", "triton"), tokens=(2, 3, 5, 8), vocab=(33, 64),
                   dtypes=("fp32", "bf16")),
        out="runs-{rank}.jsonl",
        shard=shard,
        environ=clean_env(**environ),
    )  # fmt: skip


def test_every_point_is_one_provider_on_one_case_in_sweep_order() -> None:
    whole = plan()
    cases = sweep.cases((2, 3, 5, 8), (33, 64), ("fp32", "bf16"))
    assert list(whole.chosen) == [(p, c) for c in cases for p in ("torch", "triton")]
    assert whole.total == len(whole.chosen) == 32
    assert whole.out == "runs-0.jsonl"


@pytest.mark.parametrize(
    "shards",
    [
        [{"shard": f"{i}/3"} for i in range(3)],
        [{"RANK": str(i), "WORLD_SIZE": "4", "LOCAL_RANK": str(i)} for i in range(4)],
        [{"SLURM_PROCID": str(i), "SLURM_NTASKS": "5"} for i in range(5)],
        [{"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_COUNT": "2"} for i in range(2)],
        # An explicit --shard wins over the launcher's variables.
        [{"shard": f"{i}/2", "RANK": "0", "WORLD_SIZE": "7"} for i in range(2)],
    ],
    ids=["--shard", "torchrun", "srun", "job-array", "--shard-wins"],
)
def test_shards_are_disjoint_cover_the_plain_sweep_and_balance_bytes(
    shards: list[dict[str, str]],
) -> None:
    whole = plan()
    parts = [plan(**settings) for settings in shards]
    assert [p.launch.shard.count for p in parts] == [len(shards)] * len(shards)
    assert [p.launch.shard.index for p in parts] == list(range(len(shards)))
    chosen = [point for p in parts for point in p.chosen]
    assert Counter(chosen) == Counter(whole.chosen)
    assert len(set(chosen)) == len(chosen) == whole.total
    for p in parts:
        # Each shard keeps the sweep's order.
        assert list(p.chosen) == [x for x in whole.chosen if x in set(p.chosen)]
    costs = [sum(map(sweep.point_cost, p.chosen)) for p in parts]
    assert max(costs) - min(costs) <= max(map(sweep.point_cost, whole.chosen))
    assert sum(p.cost_share or 0 for p in parts) == pytest.approx(1.0)


def test_the_stderr_line_says_which_shard_ran_and_why() -> None:
    part = plan(RANK="2", WORLD_SIZE="4")
    assert part.describe().startswith(
        f"shard 2/4 (torchrun: RANK=2, WORLD_SIZE=4): {len(part.chosen)} of 32 points"
    )
    assert part.out == "runs-2.jsonl"
    assert plan("1/2", RANK="2", WORLD_SIZE="4").describe().startswith("shard 1/2 (--shard 1/2)")


def test_no_gpu_means_no_gpu_claimed_from_the_local_rank() -> None:
    # On a host without CUDA, LOCAL_RANK picks nothing: the line must not name a GPU.
    part = plan(RANK="1", WORLD_SIZE="2", LOCAL_RANK="1")
    assert part.device.type == "cpu"
    assert part.launch.gpu is None
    assert "GPU" not in part.describe()


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(b""))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("out", ["runs.jsonl", "-"])
def test_several_processes_and_no_rank_placeholder_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    target = out if out == "-" else str(tmp_path / out)
    status, stdout, err = run("bench", "jsd", *TINY, "-o", target)
    assert status == 2
    assert err.count("\n") == 1
    assert err.startswith("kernelindex: -o: 2 processes (torchrun: RANK=0, WORLD_SIZE=2)")
    assert "{rank}" in err
    assert stdout == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (
            ("--shard", "2/2"),
            {},
            "kernelindex: --shard: expected I/N in ASCII digits with 0 <= I < N",
        ),
        (("--devices", "cpu,cpu"), {}, "kernelindex: --devices: expected 'all' or comma"),
        (("--devices", "0,1"), {}, "kernelindex: --devices: no GPU is visible, got '0,1'"),
        ((), {"RANK": "1"}, "kernelindex: RANK: RANK is set but WORLD_SIZE is not"),
    ],
    ids=["shard", "cpu-without-hook", "no-gpu", "half-a-launcher"],
)
def test_bad_launch_settings_are_one_line_usage_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    env: dict[str, str],
    expected: str,
) -> None:
    for name in LAUNCHER:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    status, _, err = run("bench", "jsd", *TINY, *argv, "-o", str(tmp_path / "x-{rank}.jsonl"))
    assert status == 2
    assert err.startswith(expected)
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def bench(cwd: Path, *argv: str, **env: str) -> str:
    """Run ``kernelindex bench jsd`` in a fresh process, as a launcher would; its stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk", "bench", "jsd", *TINY, "--no-progress", *argv],
        cwd=cwd,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


def merged(tmp_path: Path, name: str, *inputs: Path) -> list[dict[str, Any]]:
    out = tmp_path / name
    status, _, err = run("merge", *map(str, inputs), "-o", str(out))
    assert status == 0, err
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def identity(bundles: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What two runs of the same points share: names (runs: less time and suffix), status,
    digests."""
    rows = []
    for bundle in bundles:
        run, spec = bundle["run"], bundle["run"]["spec"]
        digests = tuple(spec[f] for f in sorted(spec) if f.endswith("Digest"))
        names = (bundle["protocol"]["metadata"]["name"], bundle["environment"]["metadata"]["name"])
        rows.append((STAMP.sub("", run["metadata"]["name"]), spec["status"], *digests, *names))
    return sorted(rows)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("plain")
    err = bench(tmp, "-o", "plain.jsonl")
    assert "shard 0/1 (no --shard and no launcher variables: the whole sweep): 4 of 4" in err
    docs = merged(tmp, "merged.jsonl", tmp / "plain.jsonl")
    assert len(docs) == 4
    assert all(STAMP.search(d["run"]["metadata"]["name"]) for d in docs)
    assert len({STAMP.sub("", d["run"]["metadata"]["name"]) for d in docs}) == 4
    return docs


def test_merged_shards_equal_the_plain_sweep(plain: list[dict[str, Any]], tmp_path: Path) -> None:
    err0 = bench(tmp_path, "--shard", "0/2", "-o", "shard-{rank}.jsonl")
    err1 = bench(tmp_path, "-o", "shard-{rank}.jsonl", RANK="1", WORLD_SIZE="2", LOCAL_RANK="1")
    assert "shard 0/2 (--shard 0/2)" in err0
    assert "shard 1/2 (torchrun: RANK=1, WORLD_SIZE=2)" in err1
    shards = [tmp_path / "shard-0.jsonl", tmp_path / "shard-1.jsonl"]
    assert [len(p.read_text().splitlines()) for p in shards] == [2, 2]
    assert identity(merged(tmp_path, "merged.jsonl", *shards)) == identity(plain)


def test_devices_with_cpu_workers_give_the_plain_sweeps_records(
    plain: list[dict[str, Any]], tmp_path: Path
) -> None:
    err = bench(tmp_path, "--devices", "cpu,cpu", "-o", "all.jsonl", **{CPU_WORKERS: "1"})
    assert "one worker process per device: cpu:0, cpu:1" in err
    assert identity(merged(tmp_path, "merged.jsonl", tmp_path / "all.jsonl")) == identity(plain)


def test_a_worker_that_fails_gives_failed_records_and_the_rest_go_on() -> None:
    part = prepare_jsd(
        JSDOptions(providers=("torch",), tokens=(2, 3), vocab=(33,), dtypes=("fp32",)),
        devices="cpu,cpu",
        environ=clean_env(**{CPU_WORKERS: "1"}),
    )
    good, _ = part.devices
    # A device string torch refuses: the second worker raises before its first point.
    broken = Device(name="cpu:1", target="no-such-device", environ=dict(good.environ))
    records: list[Any] = []
    attrs.evolve(part, devices=(good, broken)).run(records.append)
    assert len(records) == 2
    by_status = {r.run.spec.status: r for r in records}
    assert set(by_status) == {"passed", "failed"}
    failure = by_status["failed"].run.spec.failure
    assert failure is not None
    assert failure.message.startswith("ChildProcessError: the worker on cpu:1 raised RuntimeError")


def test_failed_record_validates_and_says_why() -> None:
    point = ("triton", sweep.JSDCase(tokens=2, vocab=33, dtype="fp32"))
    record = sweep.failed_record(point, torch.device("cpu"), "the worker was killed")
    check(json.loads(dumps(record)), verify_digests=True)
    assert record.run.spec.status == "failed"
    assert record.run.spec.failure is not None
    assert record.run.spec.failure.message == "ChildProcessError: the worker was killed"
    assert record.run.spec.implementation.provider == "triton"
    assert record.run.spec.workload.parameters["tokens"] == 2


def test_bad_devices_reach_the_library_caller_as_launch_errors() -> None:
    with pytest.raises(LaunchError, match="no GPU is visible"):
        prepare_jsd(JSDOptions(providers=("torch",)), devices="all", environ=clean_env())


def test_an_interrupt_while_writing_still_writes_what_the_workers_finished() -> None:
    part = prepare_jsd(
        JSDOptions(providers=("torch",), tokens=(2, 3, 5, 8), vocab=(33,), dtypes=("fp32",)),
        devices="cpu,cpu",
        environ=clean_env(**{CPU_WORKERS: "1"}),
    )
    written: list[Any] = []

    def write(record: Any) -> None:
        if written or interrupted:
            written.append(record)
            return
        # Ctrl-C while the first record is being written, once both workers have sent
        # every record and exited: none of those may be lost.
        deadline = time.monotonic() + 300
        while multiprocessing.active_children() and time.monotonic() < deadline:
            time.sleep(0.05)
        interrupted.append(record)
        raise KeyboardInterrupt

    interrupted: list[Any] = []
    with pytest.raises(KeyboardInterrupt):
        part.run(write)
    assert len(interrupted) == 1
    names = {r.run.metadata.name for r in [*interrupted, *written]}
    assert len(names) == len(written) + 1 == 4
    assert all(r.run.spec.status == "passed" for r in written)


def test_ctrl_c_keeps_every_finished_record_and_stops_the_workers(tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    tokens = ",".join(map(str, range(2, 34)))
    argv = [*TINY[:-2], "--impl", "torch,triton", "--tokens", tokens, "--devices", "cpu,cpu"]
    argv += ["--no-progress", "-o", str(out)]
    process = subprocess.Popen(
        [sys.executable, "-m", "kernelindex_sdk", "bench", "jsd", *argv],
        env=clean_env(**{CPU_WORKERS: "1"}),
        stderr=subprocess.PIPE,
        text=True,
        # A process group of its own, as a terminal's foreground job has.
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while (not out.exists() or not out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = len(out.read_text().splitlines())
    # Like Ctrl-C in a terminal: the parent and its workers get SIGINT.
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert err.endswith("kernelindex: interrupted\n")
    kept = out.read_text().splitlines()
    assert seen >= 1
    assert seen <= len(kept) < 64
    for line in kept:
        check(json.loads(line), verify_digests=True)
