"""Writing files: whole files replaced atomically, and the checks that come before.

Every writer that replaces a file goes through :func:`replace_file`: the text goes to
a temporary file beside the target and one rename puts it in place, so a reader never
sees half a file. A symlink is written through (its target is replaced, the link
stays), and a path that names something other than a regular file (a device such as
``/dev/null``, a FIFO, a folder) is refused rather than renamed over.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import InputError

__all__ = [
    "describe_mode",
    "ensure_folder",
    "existing_kind",
    "replace_file",
    "write_text_atomic",
]

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
