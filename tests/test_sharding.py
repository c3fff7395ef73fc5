"""Shards of a sweep: the partition, the launcher's variables and per-rank output paths.

Slurm is not installed on the machines these tests run on: its variables are set by
hand here, as Slurm documents them, not by a real srun or job array.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import KernelIndexError, LaunchError
from kernelindex_sdk.sharding import Launch, Shard, detect_launch, output_path, partition

# A sweep like `bench jsd`'s: (tokens, vocab, bytes per element), cost = bytes moved.
POINTS = [
    (t, v, b)
    for b, v, t in itertools.product((4, 2), (32000, 128256), (1024, 2048, 4096, 8192, 333))
]


def cost(point: tuple[int, int, int]) -> int:
    tokens, vocab, itemsize = point
    return 2 * tokens * vocab * itemsize


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 20, 25])
def test_partition_is_disjoint_complete_and_keeps_sweep_order(count: int) -> None:
    shards = partition(POINTS, count, cost=cost)
    assert len(shards) == count
    flat = [p for shard in shards for p in shard]
    assert sorted(flat) == sorted(POINTS)
    assert len(flat) == len(set(flat))
    for shard in shards:
        assert shard == sorted(shard, key=POINTS.index)


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8])
def test_partition_is_balanced_by_cost_within_the_costliest_point(count: int) -> None:
    loads = [sum(map(cost, shard)) for shard in partition(POINTS, count, cost=cost)]
    assert max(loads) - min(loads) <= max(map(cost, POINTS))


def test_partition_balances_cost_not_count() -> None:
    """One point as costly as all the rest together gets a shard of its own."""
    points = ["big", "a", "b", "c", "d"]
    costs = {"big": 4, "a": 1, "b": 1, "c": 1, "d": 1}
    assert partition(points, 2, cost=costs.__getitem__) == [["big"], ["a", "b", "c", "d"]]


def test_partition_deals_equal_costs_by_count() -> None:
    shards = partition(list(range(10)), 3, cost=lambda _: 0)
    assert [len(s) for s in shards] == [4, 3, 3]


def test_partition_with_more_shards_than_points_leaves_some_empty() -> None:
    shards = partition(["x", "y"], 4, cost=lambda _: 1)
    assert shards == [["x"], ["y"], [], []]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_partition_rejects_unusable_costs(bad: float) -> None:
    with pytest.raises(ValueError, match="finite cost"):
        partition(["x"], 2, cost=lambda _: bad)


_CHILD = """
import json, sys
from kernelindex_sdk.sharding import partition
# Strings hash differently under each seed; many equal costs exercise the tie-breaks.
points = [f"point-{i}-{s}" for i in range(40) for s in ("a", "b")]
costs = {p: len(p) * (i % 5 + 1) for i, p in enumerate(points)}
print(json.dumps(partition(points, int(sys.argv[1]), cost=costs.__getitem__)))
"""


def test_partition_is_the_same_in_every_process_and_hash_seed() -> None:
    """Each rank computes the split itself: it must not depend on the process."""
    results = set()
    for seed in ("0", "1", "12345", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, "3"], env=env, capture_output=True, check=True
        )
        results.add(out.stdout)
    assert len(results) == 1
    shards = json.loads(results.pop())
    assert sum(len(s) for s in shards) == 80


def test_shards_of_every_launcher_cover_the_plain_sweep() -> None:
    """The shards chosen by --shard, torchrun's and Slurm's variables are the same split."""
    plain = partition(POINTS, 1, cost=cost)[0]
    n = 3
    environments = {
        "--shard": [(f"{i}/{n}", {}) for i in range(n)],
        "torchrun": [(None, {"RANK": str(i), "WORLD_SIZE": str(n)}) for i in range(n)],
        "slurm": [(None, {"SLURM_PROCID": str(i), "SLURM_NTASKS": str(n)}) for i in range(n)],
    }
    by_source = {}
    for source, launches in environments.items():
        shards = []
        for option, env in launches:
            shards.append(detect_launch(option, env).select(POINTS, cost=cost))
        by_source[source] = shards
    assert by_source["--shard"] == by_source["torchrun"] == by_source["slurm"]
    union = [p for shard in by_source["--shard"] for p in shard]
    assert sorted(union, key=plain.index) == plain


def test_no_launcher_runs_the_whole_sweep() -> None:
    launch = detect_launch(None, {})
    assert (launch.shard.index, launch.shard.count, launch.processes, launch.gpu) == (0, 1, 1, None)
    assert "whole sweep" in launch.shard.reason


def test_torchrun_variables() -> None:
    launch = detect_launch(None, {"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"})
    assert (launch.shard.index, launch.shard.count, launch.rank, launch.processes) == (5, 8, 5, 8)
    assert launch.shard.reason == "torchrun: RANK=5, WORLD_SIZE=8"
    assert (launch.gpu, launch.gpu_reason) == (1, "LOCAL_RANK=1")


def test_slurm_variables() -> None:
    env = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "3"}
    launch = detect_launch(None, env)
    assert (str(launch.shard), launch.processes) == ("3/4", 4)
    assert launch.shard.reason == "Slurm: SLURM_PROCID=3, SLURM_NTASKS=4"
    assert (launch.gpu, launch.gpu_reason) == (3, "SLURM_LOCALID=3")


def test_torchrun_wins_over_slurm_when_srun_starts_torchrun() -> None:
    env = {
        "SLURM_PROCID": "1",
        "SLURM_NTASKS": "2",
        "SLURM_LOCALID": "0",
        "RANK": "6",
        "WORLD_SIZE": "8",
        "LOCAL_RANK": "2",
    }
    launch = detect_launch(None, env)
    assert (str(launch.shard), launch.gpu) == ("6/8", 2)


def test_explicit_shard_wins_over_the_launcher_but_keeps_its_process_count() -> None:
    launch = detect_launch("1/3", {"RANK": "0", "WORLD_SIZE": "2"})
    assert (str(launch.shard), launch.shard.reason) == ("1/3", "--shard 1/3")
    assert (launch.rank, launch.processes) == (0, 2)


def test_job_array_tasks_are_numbered_from_min_by_step() -> None:
    env = {
        "SLURM_ARRAY_TASK_ID": "7",
        "SLURM_ARRAY_TASK_COUNT": "4",
        "SLURM_ARRAY_TASK_MIN": "1",
        "SLURM_ARRAY_TASK_STEP": "2",
    }
    launch = detect_launch(None, env)
    assert (str(launch.shard), launch.processes) == ("3/4", 4)
    assert "SLURM_ARRAY_TASK_ID=7 is task 3 of 4" in launch.shard.reason


def test_job_array_tasks_times_processes_split_the_sweep() -> None:
    """Each array task's processes split that task's share: ranks cover 0..tasks*procs-1."""
    seen = []
    for task, proc in itertools.product(range(3), range(2)):
        env = {
            "SLURM_ARRAY_TASK_ID": str(task),
            "SLURM_ARRAY_TASK_COUNT": "3",
            "SLURM_PROCID": str(proc),
            "SLURM_NTASKS": "2",
        }
        launch = detect_launch(None, env)
        assert launch.shard.count == launch.processes == 6
        seen.append(launch.shard.index)
    assert seen == list(range(6))


@pytest.mark.parametrize(
    ("env", "setting", "fragment"),
    [
        (
            {"RANK": "x", "WORLD_SIZE": "2"},
            "RANK",
            "expected an integer in ASCII digits 0-9, got 'x'",
        ),
        ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK", "expected RANK < WORLD_SIZE=2, got '2'"),
        ({"RANK": "0"}, "RANK", "RANK is set but WORLD_SIZE is not"),
        ({"SLURM_NTASKS": "4"}, "SLURM_NTASKS", "set but SLURM_PROCID is not"),
        ({"SLURM_PROCID": "-1", "SLURM_NTASKS": "4"}, "SLURM_PROCID", "got '-1'"),
        (
            {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "3"},
            "SLURM_ARRAY_TASK_ID",
            "cannot number array task 4",
        ),
        (
            {"LOCAL_RANK": "2", "CUDA_VISIBLE_DEVICES": "0,1"},
            "LOCAL_RANK",
            "expected a GPU index below 2 (CUDA_VISIBLE_DEVICES='0,1'), got 2",
        ),
    ],
)
def test_bad_launcher_variables_are_one_line_errors(
    env: dict[str, str], setting: str, fragment: str
) -> None:
    with pytest.raises(LaunchError) as caught:
        detect_launch(None, env)
    assert caught.value.setting == setting
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, KernelIndexError)


# Every spelling int() would take that a person would not type, and numbers past any launch.
HOSTILE_INTEGERS = [
    "1_0",
    "\u0661",  # Arabic-Indic one
    "\uff11",  # fullwidth one
    " 1",
    "1 ",
    "1\n",
    "+1",
    "-1",
    "1.0",
    "1e3",
    "0x1",
    "",
    "99999999999999999999",
    "2147483648",
    "9" * 5000,
]


@pytest.mark.parametrize(
    "text",
    [
        "4/4",
        "1",
        "a/b",
        "-1/2",
        "0/0",
        "1/2/3",
        "",
        " 0/4",
        "0 / 4",
        "0/1_0",
        "\u0660/4",
        "0/99999999999999999999",
        "0/2147483648",
    ],
)
def test_bad_shard_option(text: str) -> None:
    with pytest.raises(
        LaunchError, match=r"--shard: expected I/N in ASCII digits with 0 <= I < N <= 2147483647"
    ):
        detect_launch(text, {})


@pytest.mark.parametrize(
    "name", ["RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "LOCAL_RANK", "SLURM_LOCALID"]
)
@pytest.mark.parametrize("value", HOSTILE_INTEGERS)
def test_launcher_variables_take_ascii_digits_in_range_only(name: str, value: str) -> None:
    # Each variable alone where it is read (torchrun's pair wins over Slurm's, LOCAL_RANK
    # over SLURM_LOCALID), a rank with its world.
    partners = {
        "RANK": "WORLD_SIZE",
        "WORLD_SIZE": "RANK",
        "SLURM_PROCID": "SLURM_NTASKS",
        "SLURM_NTASKS": "SLURM_PROCID",
    }
    env = {name: value}
    if name in partners:
        env[partners[name]] = "1"
    with pytest.raises(LaunchError) as caught:
        detect_launch(None, env)
    assert caught.value.setting == name
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "name",
    [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_STEP",
    ],
)
@pytest.mark.parametrize("value", ["1_0", "\u0661", " 1", "99999999999999999999"])
def test_job_array_variables_take_ascii_digits_in_range_only(name: str, value: str) -> None:
    env = {
        "SLURM_ARRAY_TASK_ID": "0",
        "SLURM_ARRAY_TASK_COUNT": "2",
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_ARRAY_TASK_STEP": "1",
        name: value,
    }
    with pytest.raises(LaunchError) as caught:
        detect_launch(None, env)
    assert caught.value.setting == name


def test_a_huge_world_selects_without_allocating_a_shard_each() -> None:
    """WORLD_SIZE at its bound: rank r of more ranks than points gets point r or nothing."""
    points = list(range(5))
    last = detect_launch(None, {"RANK": "2147483646", "WORLD_SIZE": "2147483647"})
    assert last.select(points, cost=float) == []
    for rank in range(5):
        launch = detect_launch(None, {"RANK": str(rank), "WORLD_SIZE": "2147483647"})
        # The same share as a split into exactly as many shards as points.
        assert launch.select(points, cost=float) == partition(points, 5, cost=float)[rank]


def test_cuda_visible_devices_narrowed_to_one_wins_over_the_local_rank() -> None:
    launch = detect_launch(None, {"LOCAL_RANK": "3", "CUDA_VISIBLE_DEVICES": "GPU-5d2c"})
    assert (launch.gpu, launch.gpu_reason) == (0, "CUDA_VISIBLE_DEVICES='GPU-5d2c' leaves one GPU")


def test_local_rank_counts_among_the_visible_gpus() -> None:
    launch = detect_launch(None, {"LOCAL_RANK": "1", "CUDA_VISIBLE_DEVICES": "4,5"})
    assert launch.gpu == 1


def test_describe_says_which_shard_ran_and_why() -> None:
    launch = detect_launch(None, {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1"})
    assert launch.describe(3, 12, 0.25) == (
        "shard 1/4 (torchrun: RANK=1, WORLD_SIZE=4): 3 of 12 points,"
        " 25% of the estimated cost; GPU cuda:1 (LOCAL_RANK=1)"
    )


def test_output_path_fills_rank_and_host() -> None:
    launch = detect_launch(None, {"SLURM_PROCID": "2", "SLURM_NTASKS": "4"})
    assert output_path("out/{host}/runs-{rank}.jsonl", launch, host="gpu7") == (
        "out/gpu7/runs-2.jsonl"
    )


def test_output_path_without_launcher_needs_no_placeholder() -> None:
    launch = detect_launch("2/4", {})
    assert output_path("runs.jsonl", launch) == "runs.jsonl"
    assert output_path("runs-{rank}.jsonl", launch) == "runs-2.jsonl"
    assert output_path("-", launch) == "-"


@pytest.mark.parametrize("template", ["runs.jsonl", "out/{host}.jsonl", "-"])
def test_several_processes_without_rank_placeholder_is_a_usage_error(template: str) -> None:
    launch = detect_launch(None, {"RANK": "0", "WORLD_SIZE": "2"})
    with pytest.raises(LaunchError) as caught:
        output_path(template, launch, host="h")
    message = str(caught.value)
    assert message.startswith("-o: 2 processes (torchrun: RANK=0, WORLD_SIZE=2) would write")
    assert "{rank}" in message
    assert "\n" not in message


def test_suggested_path_keeps_the_suffix() -> None:
    launch = Launch(shard=Shard(0, 2, "test"), processes=2)
    with pytest.raises(LaunchError, match=r"e\.g\. 'out/runs-\{rank\}\.jsonl'"):
        output_path("out/runs.jsonl", launch)


def test_cli_maps_launch_errors_to_usage_status(monkeypatch: pytest.MonkeyPatch) -> None:
    """A LaunchError reaching the CLI's boundary exits 2 with one line, no traceback."""
    import io

    from kernelindex_sdk._cli import merge as merge_cli

    def boom(*_: object, **__: object) -> object:
        raise LaunchError(setting="--shard", reason="expected I/N, got 'x'")

    monkeypatch.setattr(merge_cli.merge, "merge_paths", boom)
    err = io.StringIO()
    status = main(["merge", str(Path(__file__))], stdout=io.StringIO(), stderr=err)
    assert status == 2
    assert err.getvalue() == "kernelindex: --shard: expected I/N, got 'x'\n"


@pytest.mark.parametrize("count", range(1, 12))
def test_select_gives_the_partitions_share_for_any_count(count: int) -> None:
    """The shortcut for more shards than points changes no share (costs tie and differ)."""
    points = [5.0, 1.0, 5.0, 3.0, 0.0, 2.0]
    for index in range(count):
        launch = Launch(shard=Shard(index, count, "test"))
        assert launch.select(points, cost=float) == partition(points, count, cost=float)[index]
    assert Launch(shard=Shard(0, 3, "test")).select([], cost=float) == []


def test_a_long_shard_option_is_cut_in_its_message() -> None:
    with pytest.raises(LaunchError) as caught:
        detect_launch("0/" + "9" * 5000, {})
    assert len(str(caught.value)) < 200
    assert str(caught.value).endswith("...'")
