"""Export: stored records back as JSON Lines, streamed, never over the store's own file."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from .._base.files import refuse_overwriting_inputs
from ..convert import dumps
from ._backend import RunText, damaged
from ._url import MEMORY, StoreURL

__all__ = ["export_line", "export_lines", "refuse_store_file"]

_FORMS = frozenset({"line", "document"})


def export_line(text: str, form: str) -> str:
    """A stored record as one JSON line: its line as it came, else its compact published form."""
    if form == "line":
        return text + "\n"
    return dumps(json.loads(text), indent=None) + "\n"


def _run_name(line: str) -> object:
    """The run name a record's text gives (a bundle's or a run document's), else None."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    run = value.get("run", value) if isinstance(value, dict) else None
    metadata = run.get("metadata") if isinstance(run, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def _line(
    url: StoreURL, text: object, form: object, what: str, table: str, name: str | None = None
) -> str:
    """:func:`export_line` of a stored text, checked against the layout.

    A line's text is written as it is stored, so it is checked to be one JSON object on
    one line and, for a run, to hold the run's own name (a text edited into two lines or
    into another run's record would export a record the store does not hold:
    tests/store/test_export_texts_hostile.py). The name is sought as text first; only a
    text that lacks it is parsed.

    Raises:
        StoreDamagedError: for a missing text, a form that is neither, or a text that is
            not JSON, not one line, or not the run's record.
    """
    if type(text) is not str:
        raise damaged(url, f"{what} has no text in {table} ({text!r}), so it cannot be exported")
    if form not in _FORMS:
        raise damaged(url, f"{what} has record_form {form!r}, expected 'line' or 'document'")
    try:
        line = export_line(text, str(form))
    except ValueError:
        raise damaged(url, f"{what}'s text in {table} is not JSON") from None
    # A line keeps the whitespace it came with (a CRLF file's \r, trailing blanks):
    # JSON's own, so only a line break inside the text breaks the line.
    body = line.strip(" \t\r\n")
    if not (body[:1] == "{" and body[-1:] == "}") or "\n" in line[:-1]:
        raise damaged(url, f"{what}'s text in {table} is not one JSON object on one line")
    if name is not None and f'"name":{json.dumps(name)}' not in line and _run_name(line) != name:
        raise damaged(url, f"{what}'s text in {table} is not that run's record")
    return line


def export_lines(
    url: StoreURL,
    documents: Iterable[tuple[str, str]] | None,
    runs: Iterable[RunText],
) -> Iterator[str]:
    """Each record as one JSON line, as the backend's rows are read: the documents on
    their own first (when given), then the runs; memory holds one line at a time here.

    Raises:
        StoreDamagedError: for a run without its text (never skipped: an export that
            leaves a run out is not the store), or a text that breaks the layout.
    """
    if documents is not None:
        for text, form in documents:
            yield _line(url, text, form, "a document on its own", "documents")
    for name, run_text, run_form in runs:
        yield _line(url, run_text, run_form, f"run {name!r}", "run_texts", name)


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
