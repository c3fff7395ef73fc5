"""``kernelindex import``: foreign benchmark results into records."""

from __future__ import annotations

import argparse

from ..errors import KernelIndexError
from ._common import EXIT_INVALID, EXIT_OK, Streams, add_out

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
            " the exit status is then 1."
        ),
    )
    liger.add_argument("csv", nargs="+", metavar="CSV")
    add_out(liger)
    liger.set_defaults(run=_cmd_import_liger)


def _cmd_import_liger(args: argparse.Namespace, io: Streams) -> int:
    import warnings

    from ..documents import JSONLinesWriter
    from ..importers import liger

    rejected = 0

    def report(error: KernelIndexError) -> None:
        nonlocal rejected
        rejected += 1
        print(str(error), file=io.stderr)

    imported = 0
    with (
        warnings.catch_warnings(record=True) as caught,
        JSONLinesWriter(args.out, stream=io.stdout) as out,
    ):
        warnings.simplefilter("always", liger.UnknownGpuWarning)
        for bundle in liger.read_files(args.csv, on_error=report):
            out.write(bundle)
            imported += 1
    for warning in caught:
        print(f"warning: {warning.message}", file=io.stderr)
    print(f"imported {imported} row(s); {rejected} rejected", file=io.stderr)
    return EXIT_INVALID if rejected else EXIT_OK
