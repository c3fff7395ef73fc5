"""``kernelindex import``: foreign benchmark results into records."""

from __future__ import annotations

import argparse

from .._base.display import display_path, printable
from ..errors import InputError, KernelIndexError
from ..provenance import Provenance
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
    liger.add_argument("csv", nargs="+", metavar="CSV")
    add_out(liger)
    add_provenance(liger)
    liger.set_defaults(run=_cmd_import_liger)


def _cmd_import_liger(args: argparse.Namespace, io: Streams) -> int:
    from ..importers import liger

    rejected = 0

    def report(error: KernelIndexError) -> None:
        nonlocal rejected
        rejected += 1
        print(str(error), file=io.stderr)

    fd = stdout_fd(io)
    try:
        summary = liger.import_files(
            args.csv,
            args.out,
            stream=io.stdout,
            on_error=report,
            on_notice=notice(io),
            stream_fd=fd[0] if fd else None,
            provenance=Provenance(
                commit=args.commit, branch=args.branch, commit_time=args.commit_time
            ),
        )
    except InputError as err:
        if not reader_gone(err):
            raise
        # Standard output's reader went away (| head): the import stops there, with
        # the verdict of the rows read so far.
        silence_stdout(io)
        return EXIT_INVALID if rejected else EXIT_OK
    out = printable(display_path(args.out))
    skipped = f"; {summary.skipped} skipped, already in {out}" if summary.skipped else ""
    print(
        f"imported {summary.imported} row(s); {summary.rejected} rejected{skipped}",
        file=io.stderr,
    )
    return EXIT_INVALID if summary.rejected else EXIT_OK
