"""Writing a file so that a reader never sees half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import InputError

__all__ = ["write_text_atomic"]


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file beside it and one rename.

    An earlier file at ``path`` survives a failed write, and the temporary file is removed.

    Raises:
        InputError: when the folder cannot be written or the disk is full.
    """
    target = Path(path)
    temporary: str | None = None
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError as err:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise InputError(source=str(target), reason=err.strerror or str(err)) from err
