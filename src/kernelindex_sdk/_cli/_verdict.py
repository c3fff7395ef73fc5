"""What compare prints, shared by ``compare BASE NEW`` and ``compare --history``: runs
read with their problems said, the comparison written, and the exit status."""

from __future__ import annotations

import argparse

from .. import compare
from .._base.display import printable
from ..compare import RunSet, load_runs
from ._common import EXIT_INVALID, EXIT_OK, Streams, notice, silence_stdout

__all__ = ["load", "problems", "verdict", "write"]


def write(text: str, io: Streams) -> None:
    """Write the output; a reader that went away (| head) leaves the verdict to come."""
    try:
        io.stdout.write(text)
        io.stdout.flush()
    except BrokenPipeError:
        silence_stdout(io)


def load(paths: list[str], io: Streams, verify_digests: bool) -> RunSet:
    """load_runs, with a folder that holds no records said on one line, as validate says it."""
    return load_runs(paths, stdin=io.stdin, verify_digests=verify_digests, on_notice=notice(io))


def problems(runs: RunSet, side: str, io: Streams) -> int:
    for problem in runs.problems:
        print(f"{side}: {problem}", file=io.stderr)
    return runs.invalid


def verdict(args: argparse.Namespace, io: Streams, result: compare.Comparison, invalid: int) -> int:
    """Print the comparison, then the exit status: invalid input, then the gate."""
    write(compare.render(result, args.format), io)
    status = EXIT_OK
    if invalid:
        print(f"kernelindex: {invalid} invalid record(s) left out", file=io.stderr)
        status = EXIT_INVALID
    if args.fail_on_regression is not None and not _gate(result, args.fail_on_regression, io):
        status = EXIT_INVALID
    return status


def _gate(result: compare.Comparison, percent: float, io: Streams) -> bool:
    """Name each regression and each pair the gate cannot judge; whether the gate passed."""
    slower = result.regressions(percent)
    for pair in slower:
        if pair.base is not None and pair.new is not None and pair.ratio is not None:
            who = f"{pair.base.implementation} -> {pair.new.implementation}"
            what = printable(f"{result.label(pair.base)} · {who}")
            print(
                f"regression: {what}: NEW/BASE {pair.ratio:.3f}, more than {percent:g}% slower",
                file=io.stderr,
            )
    unjudged = result.problems
    for pair in unjudged:
        base, new = pair.run, pair.new or pair.run
        what = printable(f"{result.label(base)} · {base.implementation} -> {new.implementation}")
        print(f"cannot judge: {what}: {printable(pair.problem or '')}", file=io.stderr)
    return not slower and not unjudged
