"""What every subcommand shares: the streams, the exit statuses and argument types."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import IO

import attrs

__all__ = [
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "Streams",
    "add_out",
    "ints",
    "names",
    "silence_stdout",
]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


@attrs.frozen
class Streams:
    stdout: IO[str]
    stderr: IO[str]
    stdin: IO[bytes]


def add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--out",
        default="-",
        metavar="OUT.jsonl",
        help="JSON Lines file to append to (default: standard output)",
    )


def names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in names(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None


def silence_stdout(io: Streams) -> None:
    """After stdout failed (a closed pipe, a full disk), point file descriptor 1 at
    /dev/null, so that the interpreter's last flush does not fail again at exit."""
    if io.stdout is not sys.stdout:
        return
    with contextlib.suppress(OSError, AttributeError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
