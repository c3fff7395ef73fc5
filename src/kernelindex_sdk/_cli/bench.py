"""``kernelindex bench``: reference benchmark sweeps that write records."""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

import attrs

from ..errors import InputError, MissingDependencyError, SweepOptionError
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Streams,
    add_out,
    decimal,
    ints,
    names,
    reader_gone,
    silence_stdout,
)
from .store import add_provenance

if TYPE_CHECKING:
    from ..provenance import Provenance

__all__ = ["register"]


# The flag of each option (JSDOptions' attributes) a sweep option error names.
_FLAGS = {
    "providers": "--impl",
    "tokens": "--tokens",
    "vocab": "--vocab",
    "tokens/vocab": "--tokens/--vocab",
    "dtypes": "--dtype",
    "beta": "--beta",
    "input_grad": "--input-grad",
    "timer": "--timer",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser("bench", help="run a reference benchmark sweep, writing its records")
    suites = bench.add_subparsers(dest="suite", metavar="SUITE", required=True)
    jsd = suites.add_parser(
        "jsd",
        help="the JSD loss forward: torch, torch.compile, our Triton kernel, Liger-Kernel",
        description=(
            "Check each implementation against a float64 reference, time it, and append one"
            " record per point to OUT as it finishes. Without a GPU, runs on the CPU (Triton"
            " in its interpreter) on small default shapes with a wall-clock timer. OUT is"
            " checked before anything runs. When standard output's reader goes away"
            " (| head), the sweep stops with the verdict of the runs written so far."
        ),
    )
    jsd.add_argument(
        "--impl",
        type=names,
        default=("torch", "triton"),
        metavar="LIST",
        help="comma-separated: torch,triton,torch-compile,liger (default torch,triton)",
    )
    jsd.add_argument("--tokens", type=ints, metavar="LIST", help="rows BT (default per device)")
    jsd.add_argument("--vocab", type=ints, metavar="LIST", help="vocabulary V (default per device)")
    jsd.add_argument(
        "--dtype", type=names, metavar="LIST", help="fp32,bf16,fp16 (default per device)"
    )
    jsd.add_argument("--pass", dest="pass_", choices=("forward",), default="forward")
    jsd.add_argument(
        "--beta", type=decimal(0, 1), default=0.5, help="weight of P in [0, 1] (default 0.5)"
    )
    jsd.add_argument(
        "--input-grad",
        choices=("off", "on", "both"),
        default="off",
        help=(
            "on: time a training step, forward plus loss.backward() down to dL/dinput, for"
            " every implementation (pass 'full'), and check the gradient too; both: loss"
            " alone and the step (default off: the loss alone, pass 'forward')"
        ),
    )
    jsd.add_argument(
        "--timer",
        choices=("cuda-events", "cuda-graph"),
        default="cuda-events",
        help=(
            "GPU timer: CUDA events around each call as made (default), or around CUDA-graph"
            " replays (the GPU's time alone); recorded in the protocol"
        ),
    )
    jsd.add_argument(
        "--shard",
        metavar="I/N",
        help=(
            "run share I of N (0-based) of the points, balanced by bytes moved; by default"
            " from torchrun's RANK/WORLD_SIZE or Slurm's SLURM_PROCID/SLURM_NTASKS and job"
            " array variables, else the whole sweep"
        ),
    )
    jsd.add_argument(
        "--devices",
        metavar="all|0,1,...",
        help="one worker process per GPU, each pinned to its GPU; this process writes OUT",
    )
    add_out(jsd)
    jsd.add_argument("--no-progress", action="store_true", help="no progress bar")
    jsd.add_argument(
        "--no-summary",
        action="store_true",
        help=(
            "no table of medians and speedups on stderr at the end (noisy and degraded"
            " medians marked, each degraded run's reason, CPU-timed runs said so)"
        ),
    )
    # Provenance: these win over CI's variables and git (kernelindex_sdk.provenance.detect).
    add_provenance(jsd)
    jsd.set_defaults(run=_cmd_bench_jsd)


def _cmd_bench_jsd(args: argparse.Namespace, io: Streams) -> int:
    try:
        from ..reference_kernels.launch import JSDOptions, prepare_jsd
    except ImportError:
        print(
            str(
                MissingDependencyError(
                    feature="kernelindex bench", package="torch or Triton", extra="bench"
                )
            ),
            file=io.stderr,
        )
        return EXIT_USAGE
    from ..documents import JSONLinesWriter
    from ..models import RecordBundle

    options = JSDOptions(
        providers=args.impl,
        tokens=args.tokens,
        vocab=args.vocab,
        dtypes=args.dtype,
        beta=args.beta,
        input_grad=args.input_grad,
        timer=args.timer,
    )
    # Raises LaunchError or SweepOptionError (exit 2, one line) before anything runs.
    try:
        part = prepare_jsd(options, out=args.out, shard=args.shard, devices=args.devices)
    except SweepOptionError as err:
        # The library names its parameter (providers); the command line, its flag.
        raise attrs.evolve(err, source=_FLAGS.get(err.source, err.source)) from None
    from ..convert import dump
    from ..provenance import Provenance, detect

    # The commit measured: --commit/--branch, else CI's variables, else git here. The
    # harness found the same where no flag was given; a flag wins over what it found.
    origin = detect(
        Provenance(commit=args.commit, branch=args.branch, commit_time=args.commit_time)
    )
    writer = JSONLinesWriter(part.out, stream=io.stdout)
    # An empty or non-.jsonl path, a missing folder or a full device fails now, not after
    # the whole sweep ran; nothing is created before the first record.
    writer.check()
    if part.device.type == "cpu":
        print(
            "kernelindex: no GPU found; running on the CPU (Triton in its interpreter) on small"
            " shapes with a wall-clock timer",
            file=io.stderr,
        )
    print(f"kernelindex: {part.describe()}", file=io.stderr)
    from tqdm import tqdm

    failed = 0
    made: list[RecordBundle] = []
    total = len(part.chosen)
    with (
        writer as out,
        tqdm(total=total, file=io.stderr, disable=args.no_progress, unit="run") as progress,
    ):

        def write(record: RecordBundle) -> None:
            nonlocal failed
            value, changed = _with_provenance(dump(record), origin)
            # The harness validated the record: written as it is, it is not validated
            # again; one whose provenance the flags changed is a new record, checked whole.
            out.write(value, validated=not changed)
            made.append(record)
            spec = record.run.spec
            failed += spec.status == "failed"
            median = spec.timing.latency_ns.median if spec.timing else None
            shown = f"{median / 1e6:.4f} ms" if median is not None else spec.status
            progress.set_postfix_str(f"{record.run.metadata.name[:60]} {shown}")
            progress.update()

        try:
            with _state_notices(io.stderr):
                part.run(write)
        except InputError as err:
            if not reader_gone(err):
                raise
            # Standard output's reader went away (| head): the sweep stops there, with
            # the verdict of the runs written so far.
            silence_stdout(io)
            return EXIT_INVALID if failed else EXIT_OK
    if made and not args.no_summary:
        from .._analysis.bench_summary import bench_summary

        # stderr: standard output may carry the records themselves.
        # The harness validated each record it made: the summary does not again.
        print(bench_summary(made, validated=True), file=io.stderr, end="")
    if failed:
        print(f"kernelindex: {failed} of {total} runs failed; see their records", file=io.stderr)
    return EXIT_INVALID if failed else EXIT_OK


def _with_provenance(value: dict[str, Any], origin: Provenance) -> tuple[dict[str, Any], bool]:
    """The record with exactly ``origin``'s provenance annotations, and whether it changed."""
    from ..provenance import PROVENANCE_KEYS, annotate, without_provenance

    notes = value["run"]["metadata"].get("annotations") or {}
    if {k: notes[k] for k in PROVENANCE_KEYS if k in notes} == origin.annotations():
        return value, False
    value = without_provenance(value)
    annotate(value, origin)
    return value, True


@contextmanager
def _state_notices(stderr: IO[str]) -> Iterator[None]:
    """Say why the GPU's or the CPUs' state is not recorded as the command's own line, once."""
    from ..conditions import CpuStateWarning, GpuStateWarning

    said = (GpuStateWarning, CpuStateWarning)

    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message: Any, category: Any, *rest: Any, **named: Any) -> None:
            if isinstance(category, type) and issubclass(category, said):
                print(f"kernelindex: {message}", file=stderr)
            else:
                shown(message, category, *rest, **named)

        warnings.showwarning = show
        for kind in said:
            warnings.simplefilter("default", kind)
        yield
