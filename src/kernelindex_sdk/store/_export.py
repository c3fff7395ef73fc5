"""Export: stored records back as JSON Lines, never over the store's own file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..convert import dumps
from ..errors import InputError
from ._url import MEMORY, StoreURL

__all__ = ["export_line", "refuse_store_file"]


def export_line(text: str, form: str) -> str:
    """A stored record as one JSON line: its line as it came, else its compact published form."""
    if form == "line":
        return text + "\n"
    return dumps(json.loads(text), indent=None) + "\n"


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_store_file(out_path: str | Path, url: StoreURL) -> None:
    """Refuse to write over the store's own file (or its journal) with an export.

    Raises:
        InputError: naming the path.
    """
    if url.dialect != "sqlite" or url.target == MEMORY or str(out_path) == "-":
        return
    for companion in ("", "-wal", "-shm", "-journal"):
        if _same_file(out_path, url.target + companion):
            raise InputError(
                source=str(out_path), reason=f"is the store's own file {url.target + companion!r}"
            )
