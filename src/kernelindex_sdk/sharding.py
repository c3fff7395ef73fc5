"""Sweeps split across processes: shards, the launcher's variables, per-rank output paths.

Every process of a sweep computes the same split of the sweep's points into N disjoint
shards that together cover it, balanced by an estimated cost, and runs its own share.
Which share is this process's comes from ``--shard I/N`` or from the variables a
launcher sets (torchrun, Slurm, Slurm job arrays). Pure Python: nothing here imports
torch, so the core package may import it.
"""

from __future__ import annotations

import heapq
import math
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Final, TypeVar

import attrs

from ._base.numbers import parse_integer, shown
from .errors import ArgumentError, LaunchError

__all__ = [
    "MAX_LAUNCH_NUMBER",
    "Launch",
    "Shard",
    "detect_launch",
    "output_path",
    "parse_shard",
    "partition",
]

T = TypeVar("T")

RANK_PLACEHOLDER: Final = "{rank}"
HOST_PLACEHOLDER: Final = "{host}"
#: The largest shard count, rank or task id accepted (a C int, as launchers keep them).
MAX_LAUNCH_NUMBER: Final = 2**31 - 1


@attrs.frozen
class Shard:
    """Share ``index`` (0-based) of ``count``, and why this process runs it.

    ``str(shard)`` is the ``I/N`` form ``--shard`` takes, to re-run the same share.
    """

    index: int
    count: int
    reason: str

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@attrs.frozen
class Launch:
    """What this process of a sweep runs, and on which GPU.

    Attributes:
        shard: The share of the sweep's points this process runs.
        rank: This process's number among ``processes`` (what ``{rank}`` becomes):
            the launcher's rank, or the shard index without a launcher.
        processes: How many processes the launcher started for this sweep (torchrun's
            world times a job array's tasks); 1 without a launcher.
        gpu: The CUDA device ordinal, among the visible devices, this process should
            use; ``None`` leaves the choice to the default device.
        gpu_reason: Why that GPU (the variable that chose it), or ``""``.
    """

    shard: Shard
    rank: int = 0
    processes: int = 1
    gpu: int | None = None
    gpu_reason: str = ""

    def select(self, points: Sequence[T], *, cost: Callable[[T], float]) -> list[T]:
        """This process's shard of ``points``, in sweep order (see :func:`partition`).

        Raises:
            ArgumentError: when a cost is negative or not finite, or the shard count < 1.
        """
        # With more shards than points, shard i holds point i (in cost order) or nothing:
        # splitting into len(points) shards gives the same share without allocating
        # one list per shard of a huge count.
        count = min(self.shard.count, max(len(points), 1))
        if self.shard.index >= count:
            return []
        return partition(points, count, cost=cost)[self.shard.index]

    def describe(self, points: int, total: int, cost_share: float | None = None) -> str:
        """The line a sweep prints on stderr: which shard ran, why, and on which GPU.

        Args:
            points: How many points this shard holds.
            total: How many points the whole sweep holds.
            cost_share: This shard's fraction of the sweep's estimated cost, if known.
        """
        line = f"shard {self.shard} ({self.shard.reason}): {points} of {total} points"
        if cost_share is not None:
            line += f", {cost_share:.0%} of the estimated cost"
        if self.gpu is not None:
            line += f"; GPU cuda:{self.gpu} ({self.gpu_reason})"
        return line


def partition(points: Sequence[T], count: int, *, cost: Callable[[T], float]) -> list[list[T]]:
    """Split ``points`` into ``count`` disjoint shards that cover them, balanced by cost.

    Greedy longest-first: points in order of decreasing cost (ties: sweep order) each go
    to the shard with the least cost so far (ties: fewest points, then lowest index).
    So the costliest and cheapest shards differ by at most the costliest point, and
    points of equal cost are dealt out by count. Each shard keeps the sweep's order. The
    result depends only on the points' order and costs, never on hashing, so every
    process of a sweep computes the same split.

    Args:
        points: The sweep's points in their stable order.
        count: How many shards (N >= 1); some are empty when N exceeds the points.
        cost: Estimated cost of a point (e.g. bytes moved): finite and >= 0.

    Returns:
        ``count`` lists; list ``i`` holds shard ``i``'s points.

    Raises:
        ArgumentError: when ``count`` < 1 or a cost is negative or not finite (it is a
            ValueError too).
    """
    if count < 1:
        raise ArgumentError(argument="count", reason=f"expected at least one shard, got {count!r}")
    costs = [float(cost(point)) for point in points]
    for point, value in zip(points, costs, strict=True):
        if not math.isfinite(value) or value < 0:
            raise ArgumentError(
                argument="cost",
                reason=f"expected a finite cost >= 0, got {value!r} for {point!r}",
            )
    # (cost so far, points so far, shard index): the heap's least is the next to fill.
    loads = [(0.0, 0, shard) for shard in range(count)]
    owner = [0] * len(points)
    for i in sorted(range(len(points)), key=lambda i: (-costs[i], i)):
        load, held, shard = heapq.heappop(loads)
        owner[i] = shard
        heapq.heappush(loads, (load + costs[i], held + 1, shard))
    shards: list[list[T]] = [[] for _ in range(count)]
    for i, point in enumerate(points):
        shards[owner[i]].append(point)
    return shards


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``--shard I/N`` (0-based: ``0/4`` to ``3/4``) into ``(I, N)``.

    I and N are ASCII digits (no sign, ``_`` or whitespace), N at most
    :data:`MAX_LAUNCH_NUMBER`.

    Raises:
        LaunchError: for anything but two such integers with 0 <= I < N.
    """
    parts = text.split("/")
    if len(parts) == 2:
        try:
            count = parse_integer(parts[1], what="N", minimum=1, maximum=MAX_LAUNCH_NUMBER)
            index = parse_integer(parts[0], what="I", maximum=count - 1)
        except ArgumentError:
            pass
        else:
            return index, count
    raise LaunchError(
        setting="--shard",
        reason=(
            f"expected I/N in ASCII digits with 0 <= I < N <= {MAX_LAUNCH_NUMBER}"
            f" (e.g. '0/4'), got {shown(text)}"
        ),
    )


def _int(environ: Mapping[str, str], name: str) -> int | None:
    value = environ.get(name)
    if value is None:
        return None
    try:
        return parse_integer(value, what=name, maximum=MAX_LAUNCH_NUMBER)
    except ArgumentError as err:
        raise LaunchError(setting=name, reason=err.reason) from None


@attrs.frozen
class _Rank:
    index: int
    count: int
    reason: str


def _pair(environ: Mapping[str, str], rank: str, size: str, launcher: str) -> _Rank | None:
    index, count = _int(environ, rank), _int(environ, size)
    if index is None and count is None:
        return None
    if index is None or count is None:
        given, missing = (rank, size) if count is None else (size, rank)
        raise LaunchError(setting=given, reason=f"{given} is set but {missing} is not")
    if not 0 <= index < count:
        raise LaunchError(
            setting=rank, reason=f"expected {rank} < {size}={count}, got {environ[rank]!r}"
        )
    return _Rank(index, count, f"{launcher}: {rank}={index}, {size}={count}")


def _process_rank(environ: Mapping[str, str]) -> _Rank | None:
    # torchrun's RANK counts every process of every node; inside a Slurm step that runs
    # torchrun it is the finer rank, so it wins over SLURM_PROCID.
    torchrun = _pair(environ, "RANK", "WORLD_SIZE", "torchrun")
    return torchrun or _pair(environ, "SLURM_PROCID", "SLURM_NTASKS", "Slurm")


def _array_rank(environ: Mapping[str, str]) -> _Rank | None:
    task_id = _int(environ, "SLURM_ARRAY_TASK_ID")
    count = _int(environ, "SLURM_ARRAY_TASK_COUNT")
    if task_id is None or count is None:
        # Without both the task and the count, the share of this task is unknown.
        return None
    # Task ids run from SLURM_ARRAY_TASK_MIN by SLURM_ARRAY_TASK_STEP (--array=1-8:2).
    first = _int(environ, "SLURM_ARRAY_TASK_MIN") or 0
    step = _int(environ, "SLURM_ARRAY_TASK_STEP") or 1
    offset = task_id - first
    if offset < 0 or offset % step or offset // step >= count:
        raise LaunchError(
            setting="SLURM_ARRAY_TASK_ID",
            reason=(
                f"cannot number array task {task_id} among SLURM_ARRAY_TASK_COUNT={count}"
                f" from SLURM_ARRAY_TASK_MIN={first} by SLURM_ARRAY_TASK_STEP={step};"
                " use an evenly spaced --array such as 0-7, or pass --shard"
            ),
        )
    index = offset // step
    reason = f"Slurm job array: SLURM_ARRAY_TASK_ID={task_id} is task {index} of {count}"
    return _Rank(index, count, reason)


def _local_gpu(environ: Mapping[str, str]) -> tuple[int | None, str]:
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    entries = [e for e in (visible or "").split(",") if e.strip()] if visible is not None else None
    if entries is not None and len(entries) == 1:
        return 0, f"CUDA_VISIBLE_DEVICES={visible!r} leaves one GPU"
    for name in ("LOCAL_RANK", "SLURM_LOCALID"):
        local = _int(environ, name)
        if local is None:
            continue
        if entries is not None and local >= len(entries):
            raise LaunchError(
                setting=name,
                reason=(
                    f"expected a GPU index below {len(entries)}"
                    f" (CUDA_VISIBLE_DEVICES={visible!r}), got {local}"
                ),
            )
        return local, f"{name}={local}"
    return None, ""


def detect_launch(shard: str | None = None, environ: Mapping[str, str] | None = None) -> Launch:
    """Decide this process's shard and GPU from ``--shard`` and the launcher's variables.

    The shard: an explicit ``--shard I/N`` wins; else torchrun's ``RANK``/``WORLD_SIZE``,
    else Slurm's ``SLURM_PROCID``/``SLURM_NTASKS``; a Slurm job array
    (``SLURM_ARRAY_TASK_ID``/``SLURM_ARRAY_TASK_COUNT``, numbered from
    ``SLURM_ARRAY_TASK_MIN`` by ``SLURM_ARRAY_TASK_STEP``) splits the sweep between its
    tasks, and the processes of each task split the task's share. Without any of them,
    the whole sweep (``0/1``).

    The GPU: when ``CUDA_VISIBLE_DEVICES`` leaves exactly one, that one; else the local
    rank (``LOCAL_RANK``, then ``SLURM_LOCALID``) among the visible devices; else none.

    Args:
        shard: The ``--shard`` option's text, or ``None``.
        environ: The environment to read; ``os.environ`` by default.

    Raises:
        LaunchError: for a malformed ``--shard`` or launcher variable, a rank outside
            its world, or a local rank past the visible GPUs.
    """
    env = os.environ if environ is None else environ
    process, array = _process_rank(env), _array_rank(env)
    ranks = [r for r in (array, process) if r is not None]
    rank, processes = 0, 1
    for r in ranks:
        # Array tasks are the outer dimension: task t's processes take t's share.
        rank, processes = rank * r.count + r.index, processes * r.count
    if shard is not None:
        index, count = parse_shard(shard)
        chosen = Shard(index, count, f"--shard {index}/{count}")
    elif ranks:
        chosen = Shard(rank, processes, "; ".join(r.reason for r in ranks))
    else:
        chosen = Shard(0, 1, "no --shard and no launcher variables: the whole sweep")
    gpu, gpu_reason = _local_gpu(env)
    return Launch(
        shard=chosen,
        rank=rank if ranks else chosen.index,
        processes=processes,
        gpu=gpu,
        gpu_reason=gpu_reason,
    )


def output_path(template: str, launch: Launch, *, host: str | None = None) -> str:
    """The output path of this process: ``{rank}`` and ``{host}`` filled in.

    Several processes of one launch must not append to one file (their records would
    interleave), so a template without ``{rank}`` is refused when the launcher started
    more than one; so is ``-`` (standard output).

    Args:
        template: The ``-o`` option, e.g. ``runs-{rank}.jsonl``; ``-`` is standard output.
        launch: This process's launch, from :func:`detect_launch`.
        host: The host name for ``{host}``; by default this machine's.

    Raises:
        LaunchError: under a launcher of several processes, for ``-`` or a template
            without ``{rank}``.
    """
    several = launch.processes > 1
    if several and RANK_PLACEHOLDER not in template:
        if template == "-":
            found = "standard output"
            suggestion = f"runs-{RANK_PLACEHOLDER}.jsonl"
        else:
            found = repr(template)
            given = PurePath(template)
            suggestion = str(given.with_name(f"{given.stem}-{RANK_PLACEHOLDER}{given.suffix}"))
        raise LaunchError(
            setting="-o",
            reason=(
                f"{launch.processes} processes ({launch.shard.reason}) would write their"
                f" records to one {found}; put {RANK_PLACEHOLDER} in the path,"
                f" e.g. {suggestion!r}"
            ),
        )
    if template == "-":
        return template
    path = template.replace(RANK_PLACEHOLDER, str(launch.rank))
    if HOST_PLACEHOLDER in path:
        path = path.replace(HOST_PLACEHOLDER, host if host is not None else socket.gethostname())
    return path
