"""The ``kernelindex`` command: argument parsing and printing only.

Each subcommand lives in a module of its own and calls one library function;
KernelIndexError is mapped to an exit status here and nowhere else: 1 for invalid input,
2 for usage and I/O errors (an OSError on a standard stream included). A reader that
goes away (``kernelindex validate x.json | head -1``) ends the output, not the verdict:
a command returns the status it had reached.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io as _io
import os
import sys
from collections.abc import Sequence
from typing import IO, Any

from .. import __version__
from ..errors import InputError, KernelIndexError, LaunchError
from . import analysis, bench, importer, merge, records
from ._common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Streams, silence_stdout

__all__ = ["main"]

# Subcommands in the order --help lists them; each module adds its parsers.
_COMMANDS = (records, importer, bench, merge, analysis)


class _ClosedStream(_io.TextIOBase):
    """Stands for a standard stream the process was started without (``>&-``, ``<&-``)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _closed(self, *_: Any) -> Any:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF), self.name)

    write = read = readline = _closed

    @property
    def buffer(self) -> _ClosedStream:
        return self

    def flush(self) -> None:
        pass


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
    for stream in (sys.stdout, sys.stderr):
        # A terminal that cannot show a character (or a lone surrogate from a file
        # name) gets an escape, not a UnicodeEncodeError.
        if isinstance(stream, _io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    io = Streams(
        stdout=stdout or sys.stdout or _ClosedStream("standard output"),  # type: ignore[arg-type]
        # Without a stderr there is nowhere to say anything: drop it.
        stderr=stderr or sys.stderr or open(os.devnull, "w"),  # noqa: SIM115
        stdin=stdin
        or (sys.stdin.buffer if sys.stdin is not None else _ClosedStream("standard input")),  # type: ignore[arg-type]
    )
    parser = _parser()
    try:
        # argparse writes --help, --version and usage errors to sys.stdout/stderr itself.
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return _run(args, io)


def _run(args: argparse.Namespace, io: Streams) -> int:
    """Run the parsed command, mapping its errors to exit statuses."""
    try:
        status = int(args.run(args, io))
        io.stdout.flush()
    except (InputError, LaunchError) as err:
        print(f"kernelindex: {err}", file=io.stderr)
        return EXIT_USAGE
    except KernelIndexError as err:
        print(str(err), file=io.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        # Commands whose verdict depends on what they print catch this themselves.
        silence_stdout(io)
        return EXIT_OK
    except OSError as err:
        # Only the standard streams are written outside the library's InputError.
        where = "standard output" if err.filename is None else err.filename
        print(f"kernelindex: {where}: {err.strerror or err}", file=io.stderr)
        silence_stdout(io)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # Records already written stay: the writer flushed each one.
        print("kernelindex: interrupted", file=io.stderr)
        return 130
    return status
