"""Writing files: whole files replaced atomically, and the checks that come before.

Every writer that replaces a file goes through :func:`replace_file`: the text goes to
a temporary file beside the target and one rename puts it in place, so a reader never
sees half a file. A symlink is written through (its target is replaced, the link
stays), and a path that names something other than a regular file (a device such as
``/dev/null``, a FIFO, a folder) is refused rather than renamed over.

Every command that writes calls :func:`refuse_overwriting_inputs` before it reads
anything: no output may be one of the files its inputs would read.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from ..errors import InputError, OutputIsInputError

__all__ = [
    "RECORD_SUFFIXES",
    "check_new_file",
    "check_output_file",
    "describe_mode",
    "ensure_folder",
    "existing_kind",
    "refuse_overwriting_inputs",
    "replace_file",
    "write_text_atomic",
]

#: File suffixes a folder given as input is searched for (compared case-insensitively).
RECORD_SUFFIXES: Final = (".json", ".jsonl")

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_mode(mode: int) -> str:
    """``a directory``, ``a FIFO``, ... for what is not a regular file; ``a file`` else."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a file"


def existing_kind(path: str | Path) -> os.stat_result | None:
    """What ``path`` names, following symlinks; None when nothing is there.

    A dangling symlink counts as nothing: writing through it creates its target.

    Raises:
        InputError: when ``path`` cannot be examined (a symlink loop, a name too long).
    """
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise InputError.from_os_error(path, err) from err
    except ValueError as err:  # an embedded NUL
        raise InputError(source=str(path), reason=f"not a usable path: {err}") from err


def _target(path: str | Path) -> Path:
    """The regular file a write to ``path`` replaces: symlinks resolved, others refused."""
    info = existing_kind(path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise InputError(
            source=str(path),
            reason=f"is {describe_mode(info.st_mode)}, expected a regular file to replace",
        )
    return Path(os.path.realpath(path))


def _mode_for(target: Path) -> int:
    """The mode the written file gets: the replaced file's, else what a new file gets."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(os.stat(target).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def replace_file(path: str | Path, chunks: Iterable[str]) -> None:
    """Write ``chunks`` (UTF-8) as the whole file at ``path``, in one rename.

    The text goes to a temporary file beside the target, synced to disk, that then
    replaces the target. A symlink at ``path`` stays and its target is replaced. An
    earlier file survives a failed write (including an exception raised while
    ``chunks`` is iterated), and the temporary file is removed.

    Args:
        path: The file to write; its folder must exist.
        chunks: The text, in pieces (e.g. one JSON line each).

    Raises:
        InputError: when ``path`` names something other than a regular file (a
            device, a FIFO, a folder), or cannot be written (no folder, no
            permission, a full disk).
    """
    target = _target(path)
    temporary: str | None = None
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fchmod(out.fileno(), _mode_for(target))
            os.fsync(out.fileno())
        os.replace(temporary, target)
        temporary = None
    except OSError as err:
        raise InputError.from_os_error(path, err) from err
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` as the whole file at ``path``; see :func:`replace_file`.

    Raises:
        InputError: as :func:`replace_file`.
    """
    replace_file(path, [text])


def ensure_folder(path: str | Path) -> Path:
    """Create the folder ``path`` (and its parents) unless it exists; return it.

    Raises:
        InputError: when ``path`` names something other than a folder, or cannot be
            created.
    """
    folder = Path(path)
    info = existing_kind(folder)
    if info is None and os.path.lexists(folder):
        raise InputError(source=str(folder), reason="dangling symbolic link, not a directory")
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise InputError(
            source=str(folder), reason=f"is {describe_mode(info.st_mode)}, not a directory"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError.from_os_error(folder, err) from err
    return folder


def _stat_output(output: str | Path | int) -> os.stat_result | None:
    """What an output names now, when it is a regular file; None otherwise."""
    try:
        info = os.fstat(output) if isinstance(output, int) else os.stat(output)
    except (OSError, ValueError):
        # Missing (it cannot be an input yet), or unusable: the writer says why.
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _files_read(
    given: str | Path, suffixes: tuple[str, ...]
) -> Iterator[tuple[Path, os.stat_result]]:
    """The regular files reading ``given`` would open: itself, or a folder's records.

    A folder is searched as the readers search it: recursively, symlinked folders not
    entered, files (or symlinks to files) whose suffix is one of ``suffixes``.
    """
    path = Path(given)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return  # the reader reports a missing or unreadable input
    if not stat.S_ISDIR(info.st_mode):
        yield path, info
        return
    for root, dirs, files in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            if not name.lower().endswith(suffixes):
                continue
            with contextlib.suppress(OSError):
                found = Path(root, name)
                yield found, os.stat(found)


def refuse_overwriting_inputs(
    outputs: Iterable[str | Path | int],
    inputs: Iterable[str | Path],
    *,
    suffixes: tuple[str, ...] = RECORD_SUFFIXES,
) -> None:
    """Refuse, before anything is read or written, to write over one of the inputs.

    An output is an input when it is the same file as one the inputs would read, by
    device and inode: the same path, a symlink to it, or a hard link of it. A folder
    given as an input stands for every file it would be searched for (``suffixes``,
    recursively, symlinked folders not entered). An output that does not exist yet, or
    is not a regular file (``/dev/null``, a FIFO, a terminal), cannot be an input.

    Args:
        outputs: The paths a command writes, and file descriptors it writes (``1``, the
            command's standard output redirected to a file); ``-`` is passed over.
        inputs: The files and folders the command reads; ``-`` (standard input) is
            passed over.
        suffixes: The file suffixes a folder input is searched for, in lowercase.

    Raises:
        OutputIsInputError: naming the first output that is an input, and that input
            (an :class:`InputError`: the command line's exit status 2).
    """
    targets: dict[tuple[int, int], str | Path | int] = {}
    for output in outputs:
        if output == "-":
            continue
        info = _stat_output(output)
        if info is not None:
            targets.setdefault((info.st_dev, info.st_ino), output)
    if not targets:
        return
    for given in inputs:
        if str(given) == "-":
            continue
        for path, info in _files_read(given, suffixes):
            clash = targets.get((info.st_dev, info.st_ino))
            if clash is None:
                continue
            where = "standard output" if isinstance(clash, int) else str(clash)
            inside = "" if path == Path(given) else f", read from the folder {str(given)!r}"
            raise OutputIsInputError(
                source=where,
                input=str(path),
                reason=(
                    f"is the input {str(path)!r}{inside}; expected an output that is none"
                    " of the inputs (writing it would destroy what is read)"
                ),
            )


def check_output_file(path: str | Path, *, suffixes: tuple[str, ...]) -> None:
    """Check, before any work, that a file of one of ``suffixes`` can be written at ``path``.

    Nothing is created. A new file needs an existing folder this process may write in;
    an existing path must not be a folder.

    Args:
        path: The file to be written.
        suffixes: The suffixes it may end in, lowercase with their dot (any letter case
            is accepted in ``path``).

    Raises:
        InputError: for an empty path, another suffix, a folder, or a folder that is
            missing or cannot be written in.
    """
    text = str(path)
    if not text:
        raise InputError(source="''", reason="expected a file path, got an empty path")
    suffix = Path(text).suffix
    if suffix.lower() not in suffixes:
        wanted = " or ".join(suffixes)
        raise InputError(source=text, reason=f"expected a {wanted} file, got {suffix!r}")
    info = existing_kind(text)
    if info is None:
        check_new_file(text)
    elif stat.S_ISDIR(info.st_mode):
        raise InputError(source=text, reason="is a directory, expected a file to write")


def check_new_file(path: str | Path) -> None:
    """Check that a file that does not exist yet can be created at ``path``; create nothing.

    Raises:
        InputError: when its folder is missing, is no folder, or cannot be written in.
    """
    text = str(path)
    folder = os.path.dirname(text) or "."
    facts = existing_kind(folder)
    if facts is None or not stat.S_ISDIR(facts.st_mode):
        raise InputError(source=text, reason=f"no directory {folder!r} to write in")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(source=text, reason=f"cannot write in {folder!r}")
