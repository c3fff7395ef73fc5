"""``kernelindex import``: foreign benchmark results into records."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from .._base.display import display_path, printable
from .._base.timestamps import parse_observed_at
from ..errors import ArgumentError, InputError, KernelIndexError
from ..importers import ImportSummary
from ..provenance import Provenance, normalize_commit_time
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    Streams,
    add_out,
    notice,
    reader_gone,
    silence_stdout,
    stdout_fd,
)
from .store import add_provenance

__all__ = ["register"]

_BEHAVIOUR: Final = (
    " Each becomes a bundle (run, protocol, environment) with all four digests,"
    " validated, appended to OUT as JSON Lines record by record. An entry that cannot be"
    " converted is reported with its place and reason; the others still convert, and"
    " the exit status is then 1. Runs OUT already holds are skipped and counted, so"
    " importing a file again adds nothing twice. OUT (or standard output redirected to a"
    " file) may not be an input, and must end in .jsonl."
)
_MODES: Final = ("fwd", "bwd", "fwd_bwd", "fwd_no_grad")


def _observed_at(text: str) -> datetime:
    """An RFC 3339 timestamp with a zone."""
    try:
        return parse_observed_at(normalize_commit_time(text))
    except (ArgumentError, KernelIndexError):
        raise argparse.ArgumentTypeError(
            f"expected an RFC 3339 timestamp with a zone, got {text!r}"
        ) from None


def _nonempty(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text.strip()


def _param(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def _observed_option(parser: argparse.ArgumentParser, when: str) -> None:
    parser.add_argument(
        "--observed-at",
        metavar="RFC3339",
        type=_observed_at,
        help=f"when the runs were measured ({when})",
    )


def _format(
    formats: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    what: str,
) -> argparse.ArgumentParser:
    parser = formats.add_parser(name, help=summary, description=what + _BEHAVIOUR)
    parser.add_argument("files", nargs="+", metavar="FILE")
    add_out(parser)
    add_provenance(parser)
    return parser


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    importer = sub.add_parser("import", help="convert foreign benchmark results into records")
    formats = importer.add_subparsers(dest="format", metavar="FORMAT", required=True)
    liger = formats.add_parser(
        "liger",
        help="Liger-Kernel's benchmark CSVs (benchmark/data/all_benchmark_data.csv)",
        description=(
            "Convert each row into a bundle (run, protocol, environment) with all four digests,"
            " validated, appended to OUT as JSON Lines record by record. A row that cannot be"
            " converted is reported with its line and reason; the others still convert, and"
            " the exit status is then 1. Rows whose run OUT already holds are skipped and"
            " counted, so importing a CSV again adds nothing twice. OUT (or standard output"
            " redirected to a file) may not be an input, and must end in .jsonl."
            " When standard output's reader goes away (| head), the import stops and exits"
            " with the verdict of the rows read so far."
        ),
    )
    liger.add_argument("files", nargs="+", metavar="CSV")
    add_out(liger)
    add_provenance(liger)
    liger.set_defaults(run=_cmd_import, reading=_liger, noun="row(s)")

    nvbench = _format(
        formats,
        "nvbench",
        "NVIDIA nvbench's JSON (--json FILE)",
        "Convert each state of each benchmark: one run per measurement it holds (cold,"
        " batch, CPU only), a skipped state as a failed run.",
    )
    _observed_option(nvbench, "nvbench writes no time; default: the file's modification time")
    nvbench.set_defaults(run=_cmd_import, reading=_nvbench, noun="run(s)")

    gbench = _format(
        formats,
        "gbench",
        "Google Benchmark's JSON (--benchmark_format=json, --benchmark_out)",
        "Convert each benchmark instance: one run from its aggregates (_mean, _median,"
        " _stddev) when repeated, else one run per repetition row.",
    )
    gbench.add_argument(
        "--machine",
        type=_nonempty,
        help="the CPU's name for the environment (Google Benchmark writes none)",
    )
    _observed_option(gbench, "for a file without context.date; default: its modification time")
    gbench.set_defaults(run=_cmd_import, reading=_gbench, noun="run(s)")

    pytest_benchmark = _format(
        formats,
        "pytest-benchmark",
        "pytest-benchmark's JSON (--benchmark-json FILE, .benchmarks/ saves)",
        "Convert each benchmark; commit_info gives provenance (before --commit/--branch),"
        " and a save from a dirty work tree is marked kernelindex.dev/dirty.",
    )
    _observed_option(
        pytest_benchmark, "for a file without datetime; default: its modification time"
    )
    pytest_benchmark.set_defaults(run=_cmd_import, reading=_pytest_benchmark, noun="run(s)")

    tritonbench = _format(
        formats,
        "tritonbench",
        "TritonBench's CSV (--csv, --output) or JSON (--output-json)",
        "Convert each provider at each x value (the average row and -avg keys are"
        " derived and left out). TritonBench writes neither the GPU nor the time.",
    )
    tritonbench.add_argument(
        "--gpu", required=True, type=_nonempty, help="the GPU it ran on ('NVIDIA H100 80GB HBM3')"
    )
    tritonbench.add_argument("--op", type=_nonempty, help="the operator; required for a CSV")
    tritonbench.add_argument("--mode", choices=_MODES, help="the mode (a CSV's default: fwd)")
    tritonbench.add_argument(
        "--x-label",
        type=_nonempty,
        metavar="LABEL",
        help="the x column's label for a JSON file, which writes none ('(M, N, K)')",
    )
    tritonbench.add_argument(
        "--param",
        action="append",
        type=_param,
        default=[],
        metavar="KEY=VALUE",
        help="a workload parameter the file does not record (--param precision=bf16)",
    )
    _observed_option(
        tritonbench, "TritonBench writes no time; default: the file's modification time"
    )
    tritonbench.set_defaults(run=_cmd_import, reading=_tritonbench, noun="run(s)")


def _nvbench(args: argparse.Namespace, io: Streams) -> tuple[Callable[..., Any], dict[str, Any]]:
    from ..importers import nvbench

    return nvbench.import_files, {"observed_at": args.observed_at}


def _liger(args: argparse.Namespace, io: Streams) -> tuple[Callable[..., Any], dict[str, Any]]:
    from ..importers import liger

    return liger.import_files, {"on_notice": notice(io)}


def _gbench(args: argparse.Namespace, io: Streams) -> tuple[Callable[..., Any], dict[str, Any]]:
    from ..importers import gbench

    return gbench.import_files, {"observed_at": args.observed_at, "machine": args.machine}


def _pytest_benchmark(
    args: argparse.Namespace, io: Streams
) -> tuple[Callable[..., Any], dict[str, Any]]:
    from ..importers import pytest_benchmark

    return pytest_benchmark.import_files, {"observed_at": args.observed_at}


def _tritonbench(
    args: argparse.Namespace, io: Streams
) -> tuple[Callable[..., Any], dict[str, Any]]:
    from ..importers import tritonbench

    return tritonbench.import_files, {
        "observed_at": args.observed_at,
        "gpu": args.gpu,
        "op": args.op,
        "mode": args.mode,
        "parameters": dict(args.param),
        "x_label": args.x_label,
        "on_notice": notice(io),
    }


def _summary(noun: str, summary: ImportSummary, out: str) -> str:
    where = printable(display_path(out))
    skipped = f"; {summary.skipped} skipped, already in {where}" if summary.skipped else ""
    return f"imported {summary.imported} {noun}; {summary.rejected} rejected{skipped}"


def _cmd_import(args: argparse.Namespace, io: Streams) -> int:
    import_files, options = args.reading(args, io)
    rejected = 0

    def report(error: KernelIndexError) -> None:
        nonlocal rejected
        rejected += 1
        print(str(error), file=io.stderr)

    fd = stdout_fd(io)
    try:
        summary = import_files(
            args.files,
            args.out,
            stream=io.stdout,
            on_error=report,
            stream_fd=fd[0] if fd else None,
            provenance=Provenance(
                commit=args.commit, branch=args.branch, commit_time=args.commit_time
            ),
            **options,
        )
    except InputError as err:
        if not reader_gone(err):
            raise
        # Standard output's reader went away (| head): the import stops there, with
        # the verdict of the entries read so far.
        silence_stdout(io)
        return EXIT_INVALID if rejected else EXIT_OK
    print(_summary(args.noun, summary, args.out), file=io.stderr)
    return EXIT_INVALID if summary.rejected else EXIT_OK
