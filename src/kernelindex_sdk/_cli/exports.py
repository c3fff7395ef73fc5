"""``kernelindex convert`` and ``export --format``: records into the formats other
dashboards read (Bencher's BMF, github-action-benchmark's JSON)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from typing import Any

from .._base.display import display_path, printable
from .._base.files import check_output_file, refuse_overwriting_inputs, replace_file
from ..documents import check_documents
from ..exporters import FORMATS, export_chunks
from ..store import open_store
from ._common import EXIT_INVALID, EXIT_OK, Streams, notice, stdout_fd

__all__ = ["FORMAT_HELP", "export_formatted", "register"]

#: What ``--format`` writes.
FORMAT_HELP = (
    "jsonl: the records as they came (the default); bmf: Bencher Metric Format"
    " (bencher run --file); github-action-benchmark: its customSmallerIsBetter JSON."
    " The last two are lossy (docs/exporters.md says what they lose) and write a .json file"
)


def _check_out(out: str) -> None:
    if out != "-":
        check_output_file(out, suffixes=(".json",))


def _write(chunks: Iterator[str], out: str, io: Streams) -> None:
    if out == "-":
        for chunk in chunks:
            io.stdout.write(chunk)
    else:
        replace_file(out, chunks)


def export_formatted(args: argparse.Namespace, io: Streams, filters: dict[str, Any]) -> int:
    """``kernelindex export --format bmf|github-action-benchmark``: the store's records
    that match ``filters``, in that format."""
    _check_out(args.out)
    with open_store(args.db, create=False) as store:
        for target in [args.out] if args.out != "-" else stdout_fd(io):
            store.refuse_output(target)
        records = (json.loads(line) for line in store.export_lines(**filters))
        _write(export_chunks(records, args.format, on_notice=notice(io)), args.out, io)
    where = "standard output" if args.out == "-" else printable(display_path(args.out))
    print(f"exported the records as {args.format} to {where}", file=io.stderr)
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    convert = sub.add_parser(
        "convert",
        help="write records files in a format other dashboards read",
        description=(
            "Read the records of FILES and folders (as validate does) and write them in"
            " FORMAT: bmf (Bencher Metric Format, for bencher run --file) or"
            " github-action-benchmark (its customSmallerIsBetter JSON). Both hold one"
            " value per benchmark: a second run of one benchmark is left out and named on"
            " standard error. An invalid record is reported and left out, and the exit"
            " status is then 1. OUT is replaced atomically and may not be an input."
        ),
    )
    convert.add_argument("format", choices=FORMATS, metavar="FORMAT", help=", ".join(FORMATS))
    convert.add_argument("paths", nargs="+", metavar="FILE|DIR")
    convert.add_argument(
        "-o", "--out", default="-", metavar="OUT.json", help="file to write (default: stdout)"
    )
    convert.set_defaults(run=_cmd_convert)


def _cmd_convert(args: argparse.Namespace, io: Streams) -> int:
    outputs: list[str | int] = [args.out] if args.out != "-" else list(stdout_fd(io))
    refuse_overwriting_inputs(outputs, args.paths)
    _check_out(args.out)
    invalid = 0

    def valid(results: Iterable[Any]) -> Iterator[Any]:
        nonlocal invalid
        for result in results:
            if result.valid:
                yield result.value
                continue
            invalid += 1
            for problem in result.problems:
                print(str(problem), file=io.stderr)

    documents = check_documents(args.paths, stdin=io.stdin, on_notice=notice(io))
    chunks = export_chunks(valid(documents), args.format, on_notice=notice(io))
    _write(chunks, args.out, io)
    return EXIT_INVALID if invalid else EXIT_OK
