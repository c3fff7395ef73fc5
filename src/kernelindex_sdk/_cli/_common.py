"""What every subcommand shares: the streams, the exit statuses and argument types.

Every numeric option is read by :mod:`kernelindex_sdk._base.numbers` (ASCII digits, a finite
range), as the launcher variables are: one reading of numbers for the whole command.

Every argument that takes a value is checked as it is parsed (:func:`checked_type`, which
the command's parser class applies to each): a path may hold bytes that are not UTF-8
(a POSIX file name may), any other argument must be text; neither may hold a NUL. Bad
input is one usage line naming the argument, exit 2, before any library call.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io as _io
import os
import re
import sys
from collections.abc import Callable
from typing import IO, Any, Final

import attrs

from .._base.numbers import parse_decimal, parse_integer
from .._base.schemas import SAFE_INT
from ..errors import ArgumentError, InputError
from ..store import masked_url

__all__ = [
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "PATH_ARGUMENTS",
    "Streams",
    "add_out",
    "checked_type",
    "decimal",
    "ints",
    "mask_secrets",
    "names",
    "notice",
    "percent",
    "reader_gone",
    "silence_stdout",
    "stdout_fd",
]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

#: The destinations of the arguments that name files, folders or a store: the only ones
#: that may hold bytes that are not UTF-8 (POSIX file names may; Python hands them over
#: as lone surrogates, which open the same file again). tests/_cli/test_cli_arguments.py
#: lists every argument of every command against this.
PATH_ARGUMENTS: Final = frozenset({"paths", "files", "out", "plot", "base", "new", "db"})
# A store URL inside a message, to the next blank (a password may hold quotes); a path's
# display may have folded its "//" into "/".
_URL: Final = re.compile(r"(postgres(?:ql)?:/+)(\S*)", re.IGNORECASE)
# What ends a message's word rather than the URL: quotes, a separator ("URL: no such file").
_AFTER_URL: Final = re.compile(r"['\",:;)\]]*\Z")


# A connection string's password item inside a message (its value quoted or one word;
# a message's other words are not taken for the rest of an unquoted password).
_PASSWORD_ITEM: Final = re.compile(
    r"(?P<key>\b(?:ssl)?password\s*=\s*)"
    r"(?:'(?:[^'\\]|\\.)*'?|(?:[^\s\\'\"]|\\.)+?(?=:?(?:\s|['\"]|\Z)))",
    re.IGNORECASE | re.DOTALL,
)


def _masked_match(found: re.Match[str]) -> str:
    scheme, rest = found.groups()
    after = _AFTER_URL.search(rest)
    cut = after.start() if after is not None else len(rest)
    masked = masked_url("postgresql://" + rest[:cut])[len("postgresql://") :]
    return scheme + masked + rest[cut:]


def mask_secrets(text: str) -> str:
    """``text`` with every PostgreSQL password in it as ``***`` (the store's one rule,
    :func:`kernelindex_sdk.store.masked_url`): URLs anywhere in it, and ``password=``
    items of a connection string. Everything the command writes to standard error
    passes through it, so no message, the parser's included, shows a password."""
    folded = text.casefold()
    if "postgres" not in folded and "password" not in folded:
        return text
    text = _URL.sub(_masked_match, text)
    return _PASSWORD_ITEM.sub(r"\g<key>***", text)


def _shown_bytes(value: str) -> str:
    try:
        return repr(os.fsencode(value))
    except UnicodeEncodeError:
        return ascii(value)


def _check_text(value: str) -> str:
    if "\x00" in value:
        raise argparse.ArgumentTypeError(f"expected text without NUL, got {value!a}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            f"expected UTF-8 text, got {_shown_bytes(value)} (bytes that are not UTF-8)"
        ) from None
    return value


def _check_path(value: str) -> str:
    if "\x00" in value:
        raise argparse.ArgumentTypeError(
            f"expected a path, got {_shown_bytes(value)} (a NUL cannot be in a path)"
        )
    return value


def checked_type(dest: str, convert: Callable[[str], Any] | None) -> Callable[[str], Any]:
    """The argument type of ``dest``: the check for its kind (a path or text), then
    ``convert``, the type the command gave it (None: the str itself).

    The name stays ``convert``'s, as argparse names the type in its messages.
    """
    check = _check_path if dest in PATH_ARGUMENTS else _check_text
    if convert is None:
        return check

    @functools.wraps(convert)
    def parse(value: str) -> Any:
        return convert(check(value))

    return parse


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
        help="JSON Lines file (.jsonl) to append to (default: standard output)",
    )


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


def _integer_item(item: str) -> int:
    try:
        return parse_integer(item, what="item", maximum=SAFE_INT)
    except ArgumentError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers in ASCII digits 0-9 up to {SAFE_INT}, got {item!r}"
        ) from None


def ints(text: str) -> tuple[int, ...]:
    """A comma-separated list of integers in ASCII digits (up to 2^53 - 1): no sign,
    ``_``, empty item or repeated value (``int()`` alone would take ``1_024`` and other
    scripts' digits)."""
    items = _items(text, "integers")
    values = [_integer_item(item) for item in items]
    for value in values:
        if values.count(value) > 1:
            raise argparse.ArgumentTypeError(f"{value} is given twice in {text!r}")
    return tuple(values)


def decimal(minimum: float, maximum: float | None = None) -> Callable[[str], float]:
    """An argument type: a finite number from ``minimum`` to ``maximum`` in ASCII digits."""

    def parse(text: str) -> float:
        try:
            return parse_decimal(text, what="value", minimum=minimum, maximum=maximum)
        except ArgumentError as err:
            raise argparse.ArgumentTypeError(err.reason) from None

    return parse


def percent(text: str) -> float:
    """An argument type: a finite percentage >= 0, such as ``5``, ``2.5`` or ``5%``."""
    number = text[:-1] if text.endswith("%") else text
    try:
        return parse_decimal(number, what="percentage", minimum=0)
    except ArgumentError:
        raise argparse.ArgumentTypeError(
            f"expected a percentage >= 0 in ASCII digits such as 5 or 2.5 (finite), got {text!r}"
        ) from None


def notice(io: Streams) -> Callable[[str], None]:
    """The one way a command says something that is not a problem: one line on stderr."""

    def say(text: str) -> None:
        print(f"kernelindex: {text}", file=io.stderr)

    return say


def stdout_fd(io: Streams) -> list[int]:
    """Standard output's file descriptor, as a list of outputs (empty when it has none).

    A command that reads files passes it to ``refuse_overwriting_inputs``: standard
    output redirected onto an input (``>> runs.jsonl``) would destroy it.
    """
    try:
        return [io.stdout.fileno()]
    except (AttributeError, OSError, ValueError, _io.UnsupportedOperation):
        return []


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
