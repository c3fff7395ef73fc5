"""``kernelindex merge``: the record sets of many processes or hosts into one."""

from __future__ import annotations

import argparse

from .. import merge
from .._base.display import display_path, printable
from .._base.files import refuse_overwriting_inputs
from ..documents import check_json_lines_target
from ._common import EXIT_OK, Streams, add_verify_digests, notice, stdout_fd

__all__ = ["register"]


def _cmd_merge(args: argparse.Namespace, io: Streams) -> int:
    # OUT may be an input: it is replaced in one rename once every record was read (the
    # documented in-place rewrite). Standard output cannot be replaced: redirected onto
    # an input (>> runs.jsonl) it would add the merged records to it.
    refuse_overwriting_inputs(stdout_fd(io) if args.out == "-" else [], args.paths)
    check_json_lines_target(args.out)
    merged = merge.merge_paths(
        args.paths, verify_digests=args.verify_digests, stdin=io.stdin, on_notice=notice(io)
    )
    merge.write_records(args.out, merged.records, stream=io.stdout)
    where = "standard output" if args.out == "-" else printable(display_path(args.out))
    print(
        f"kernelindex: merged {len(merged.records)} records from {merged.read} documents"
        f" ({merged.duplicates} duplicates dropped) into {where}",
        file=io.stderr,
    )
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "merge",
        help="merge record sets (e.g. one per rank) into one, refusing clashes",
        description=(
            "Read JSON and JSON Lines records as validate does (folders searched recursively,"
            " '-' for standard input), validating each. A record repeated with the same"
            " content is written once; two different records under one name, or two"
            " different protocol or environment specs under one name or digest, are errors"
            " naming both places. The output order depends only on the records. Exits 0 when"
            " merged, 1 for invalid or clashing records (nothing is written), 2 on usage or"
            " I/O errors. When standard output's reader goes away (| head) the status"
            " stays 0: the records were merged before any was written."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="IN")
    parser.add_argument(
        "-o",
        "--out",
        default="-",
        metavar="OUT.jsonl",
        help=(
            "JSON Lines file (.jsonl) to write, replaced atomically once every input was"
            " read, so it may be one of the inputs; written through a symlink; a FIFO or"
            " a device such as /dev/null is written as a stream (default: standard output)"
        ),
    )
    add_verify_digests(parser)
    parser.set_defaults(run=_cmd_merge)
