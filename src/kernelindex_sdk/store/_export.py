"""Export: stored records back as JSON Lines, never over the store's own file."""

from __future__ import annotations

import json
from pathlib import Path

from .._base.files import refuse_overwriting_inputs
from ..convert import dumps
from ._url import MEMORY, StoreURL

__all__ = ["export_line", "refuse_store_file"]


def export_line(text: str, form: str) -> str:
    """A stored record as one JSON line: its line as it came, else its compact published form."""
    if form == "line":
        return text + "\n"
    return dumps(json.loads(text), indent=None) + "\n"


def refuse_store_file(out_path: str | Path | int, url: StoreURL) -> None:
    """Refuse to write over the store's own file (or its journal) with an export.

    The one rule every writer follows
    (:func:`kernelindex_sdk._base.files.refuse_overwriting_inputs`): the same path, a
    symlink or a hard link of an input is refused before anything is read.

    Args:
        out_path: The file export writes, or the file descriptor it writes to.
        url: The store's address.

    Raises:
        OutputIsInputError: naming the path (an :class:`InputError`).
    """
    if url.dialect != "sqlite" or url.target == MEMORY:
        return
    store_files = [url.target + companion for companion in ("", "-wal", "-shm", "-journal")]
    refuse_overwriting_inputs([out_path], store_files)
