"""The ``kernelindex`` command: argument parsing and printing only.

Each subcommand lives in a module of its own and calls one library function;
KernelIndexError is mapped to an exit status here and nowhere else: 1 for invalid input,
2 for usage and I/O errors.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import IO

from .. import __version__
from ..errors import InputError, KernelIndexError
from . import analysis, bench, importer, records
from ._common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Streams

__all__ = ["main"]

# Subcommands in the order --help lists them; each module adds its parsers.
_COMMANDS = (records, importer, bench, analysis)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelindex",
        description="Produce and check GPU kernel benchmark records (kernelindex.dev/v1alpha1).",
    )
    parser.add_argument("--version", action="version", version=f"kernelindex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in _COMMANDS:
        command.register(sub)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[bytes] | None = None,
) -> int:
    """Run ``kernelindex`` with ``argv``; return the exit status."""
    io = Streams(
        stdout=stdout or sys.stdout, stderr=stderr or sys.stderr, stdin=stdin or sys.stdin.buffer
    )
    parser = _parser()
    try:
        # argparse writes --help, --version and usage errors to sys.stdout/stderr itself.
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return int(args.run(args, io))
    except InputError as err:
        print(f"kernelindex: {err}", file=io.stderr)
        return EXIT_USAGE
    except KernelIndexError as err:
        print(str(err), file=io.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        # Records already written stay: the writer flushed each one.
        print("kernelindex: interrupted", file=io.stderr)
        return 130
