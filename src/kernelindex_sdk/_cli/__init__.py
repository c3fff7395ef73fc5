"""The ``kernelindex`` command: argument parsing and printing only.

Each subcommand lives in a module of its own and calls one library function;
KernelIndexError is mapped to an exit status here and nowhere else: 1 for invalid input,
2 for usage and I/O errors (an OSError on a standard stream included). A reader that
goes away (``kernelindex validate x.json | head -1``) ends the output, not the verdict:
a command returns the status it had reached. Standard error never changes the status:
a message it cannot take is dropped. Usage errors are one line, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import io as _io
import os
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import IO, Any, Final, NoReturn

from .. import __version__
from ..errors import InputError, KernelIndexError, LaunchError, StoreDamagedError
from . import analysis, bench, exports, history, importer, merge, records, site, store
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Streams,
    checked_type,
    mask_secrets,
    reader_gone,
    silence_stdout,
)

__all__ = ["main"]

# Subcommands in the order --help lists them; each module adds its parsers.
_COMMANDS = (records, importer, exports, bench, merge, analysis, store, history, site)
# The module that adds each command's parser (tests/_cli/test_cli_parser.py holds this to what
# the modules add): a command line that starts with a command needs that module's
# parsers only, not all of them (6 ms of building for the whole, most of a short
# command's own time).
_OWNERS: Final[dict[str, ModuleType]] = {
    "validate": records,
    "digest": records,
    "schema": records,
    "import": importer,
    "convert": exports,
    "bench": bench,
    "merge": merge,
    "compare": analysis,
    "report": analysis,
    "ingest": store,
    "export": store,
    "migrate": store,
    "history": history,
    "site": site,
}


# Actions that take no value from the command line (flags, --help, --version).
_NO_VALUE: Final = (
    argparse._StoreConstAction,  # store_true and store_false too
    argparse._AppendConstAction,
    argparse._CountAction,
    argparse._HelpAction,
    argparse._VersionAction,
    argparse._SubParsersAction,
)


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


class _QuietStderr(_io.TextIOBase):
    """Standard error that never fails the command and never shows a password.

    The exit status is the verdict; a full or closed stderr (``2>/dev/full``) must not
    change it: a message it cannot take is dropped. After the first failure the
    process's own stderr is pointed at /dev/null, so that the interpreter's last flush
    does not fail at exit either. Every message is masked (:func:`._common.mask_secrets`):
    a store URL given where a file was expected is echoed by the error that says so.
    """

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self._stream = stream
        self._failed = False

    def write(self, text: str) -> int:
        if not self._failed:
            try:
                self._stream.write(mask_secrets(text))
                if "\n" in text:
                    self._stream.flush()
            except (OSError, ValueError):
                self._give_up()
        return len(text)

    def flush(self) -> None:
        if not self._failed:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._give_up()

    # A progress bar asks what the stream is (a terminal, and how wide).
    def isatty(self) -> bool:
        return not self._failed and self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def _give_up(self) -> None:
        self._failed = True
        if self._stream is sys.stderr:
            with contextlib.suppress(OSError, AttributeError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stderr.fileno())
                sys.stderr.flush()


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, whose output can fail, and
    whose every argument that takes a value is checked as a path or as text
    (:func:`._common.checked_type`): one place, for every command.

    Subparsers are made of this class too (argparse uses the parent's class).
    """

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.nargs != 0 and not isinstance(action, _NO_VALUE):
            action.type = checked_type(action.dest, action.type)  # type: ignore[arg-type]
        return action

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse drops an OSError here, so --help to a full disk would exit 0.
        if message:
            stream = file or sys.stderr
            stream.write(message)
            stream.flush()


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """kernelindex's argument parser: every command's, or, for a command line whose first
    argument is ``command``, only the parsers of the module that adds it.

    A command's own parser is the same either way; the others only name themselves in
    the top level's help and usage errors, which a line starting with a command never
    shows (its own help and errors are its parser's).
    """
    parser = _Parser(
        prog="kernelindex",
        description="Produce and check GPU kernel benchmark records (kernelindex.dev/v1alpha1).",
    )
    parser.add_argument("--version", action="version", version=f"kernelindex {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    owner = None if command is None else _OWNERS.get(command)
    for module in _COMMANDS if owner is None else (owner,):
        module.register(sub)
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
        stderr=_QuietStderr(stderr or sys.stderr or open(os.devnull, "w")),  # type: ignore[arg-type]  # noqa: SIM115
        stdin=stdin
        or (sys.stdin.buffer if sys.stdin is not None else _ClosedStream("standard input")),  # type: ignore[arg-type]
    )
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(arguments[0] if arguments else None)
    try:
        # argparse writes --help, --version and usage errors to sys.stdout/stderr itself.
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    except OSError as err:
        silence_stdout(io)
        if isinstance(err, BrokenPipeError):
            return EXIT_OK  # --help | head -1: the reader had what it wanted
        # --help or --version to a closed or full standard output.
        print(f"kernelindex: standard output: {err.strerror or err}", file=io.stderr)
        return EXIT_USAGE
    return _run(args, io)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for one command, and resumed after if it was on.

    A command's records, runs, pairs and rows hold no reference cycles, so the
    collector's passes over 100,000 live objects find nothing: they cost about 8% of
    reading runs and half of pairing them. The library never does this to a program that
    embeds it (STYLE.md, the store); the CLI does it in its own process, for the command.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _run(args: argparse.Namespace, io: Streams) -> int:
    """Run the parsed command, mapping its errors to exit statuses."""
    try:
        with _collector_paused():
            status = int(args.run(args, io))
        io.stdout.flush()
    except (InputError, LaunchError, BrokenPipeError) as err:
        if reader_gone(err):
            # Standard output's reader went away (| head). Commands whose verdict
            # depends on what they print catch this themselves; merge reaches its
            # verdict before writing.
            silence_stdout(io)
            return EXIT_OK
        print(f"kernelindex: {err}", file=io.stderr)
        # A store that was read and holds what its layout forbids is invalid input.
        return EXIT_INVALID if isinstance(err, StoreDamagedError) else EXIT_USAGE
    except KernelIndexError as err:
        print(str(err), file=io.stderr)
        return EXIT_INVALID
    except OSError as err:
        # Only standard output is written outside the library's InputError (standard
        # input is read through it, and standard error never raises).
        where = "standard output" if err.filename is None else err.filename
        print(f"kernelindex: {where}: {err.strerror or err}", file=io.stderr)
        silence_stdout(io)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # Records already written stay: the writer flushed each one.
        print("kernelindex: interrupted", file=io.stderr)
        return 130
    return status
