"""What every subcommand shares: the streams, the exit statuses and argument types."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import IO

import attrs

from ..errors import InputError

__all__ = [
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "Streams",
    "add_out",
    "ints",
    "names",
    "reader_gone",
    "silence_stdout",
]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


@attrs.frozen
class Streams:
    stdout: IO[str]
    stderr: IO[str]
    stdin: IO[bytes]


def add_verify_digests(parser: argparse.ArgumentParser, then: str = "") -> None:
    """``--verify-digests``, as validate, merge, compare and report take it."""
    parser.add_argument(
        "--verify-digests",
        action="store_true",
        help="recompute every digest whose object a record carries" + then,
    )


def add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--out",
        default="-",
        metavar="OUT.jsonl",
        help="JSON Lines file to append to (default: standard output)",
    )


_DIGITS = frozenset("0123456789")


def _items(text: str, what: str) -> list[str]:
    items = [part.strip(" ") for part in text.split(",")]
    if "" in items:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated {what} without empty items, got {text!r}"
        )
    for item in items:
        if items.count(item) > 1:
            raise argparse.ArgumentTypeError(f"{item!r} is given twice in {text!r}")
    return items


def names(text: str) -> tuple[str, ...]:
    """A comma-separated list of names: no empty item, none twice."""
    return tuple(_items(text, "names"))


def ints(text: str) -> tuple[int, ...]:
    """A comma-separated list of integers in ASCII digits: no sign, ``_``, empty item or
    repeated value (``int()`` alone would take ``1_024`` and other scripts' digits)."""
    items = _items(text, "integers")
    bad = [item for item in items if not _DIGITS.issuperset(item)]
    if bad:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers (digits 0-9), got {bad[0]!r}"
        )
    values = [int(item) for item in items]
    for value in values:
        if values.count(value) > 1:
            raise argparse.ArgumentTypeError(f"{value} is given twice in {text!r}")
    return tuple(values)


def reader_gone(err: BaseException) -> bool:
    """Whether ``err`` is standard output's reader going away (``| head``)."""
    cause = err if isinstance(err, BrokenPipeError) else err.__cause__
    return isinstance(cause, BrokenPipeError) and (
        not isinstance(err, InputError) or err.source == "<stdout>"
    )


def silence_stdout(io: Streams) -> None:
    """After stdout failed (a closed pipe, a full disk), point file descriptor 1 at
    /dev/null, so that the interpreter's last flush does not fail again at exit."""
    if io.stdout is not sys.stdout:
        return
    with contextlib.suppress(OSError, AttributeError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
