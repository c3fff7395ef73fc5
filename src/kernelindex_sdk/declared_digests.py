"""The digests records in files declare, beside those computed from their content.

What ``kernelindex digest`` shows: for each document of the given files and folders
(read by :func:`kernelindex_sdk.documents.check_documents`, as ``kernelindex validate``
reads them, each document on its own), the comparisons of
:func:`kernelindex_sdk.validation.compare_digests`, or the problems validate finds, which
keep a document from having any.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import attrs

from . import validation
from .documents import Document, OnError, OnNotice, check_documents
from .errors import FileProblem

__all__ = ["DocumentDigests", "digest_documents"]


@attrs.frozen
class DocumentDigests:
    """One document's digest comparisons, or the problems of an invalid document."""

    document: Document
    comparisons: tuple[validation.DigestComparison, ...] = ()
    problems: tuple[FileProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """Valid, no declared digest differs from its content, and none failed to compute."""
        return not self.problems and all(
            c.matches is not False and c.error is None for c in self.comparisons
        )


def digest_documents(
    paths: Iterable[str | Path],
    *,
    stdin: IO[bytes] | None = None,
    on_error: OnError | None = None,
    on_notice: OnNotice | None = None,
) -> Iterator[DocumentDigests]:
    """Yield the digest comparisons of every document of the given paths.

    Every kind :func:`kernelindex_sdk.validate` accepts is taken: a run or a bundle
    gives the four digests it declares beside those computed from the objects it
    carries, a standalone protocol or environment its own digest (declared by nothing).
    Each document is checked on its own: the same run in two files gives its digests
    twice.

    Args:
        paths: Files, folders and ``-``, read as
            :func:`kernelindex_sdk.documents.iter_documents` reads them.
        stdin: The stream ``-`` reads (default: the process's standard input).
        on_error: Called with the InputError of each path that cannot be read, after
            which the next path is read; by default the error is raised.
        on_notice: Called with a line for each folder that holds no records.

    Raises:
        InputError: when a path cannot be read and ``on_error`` is not given.
    """
    results = check_documents(
        paths, stdin=stdin, on_error=on_error, on_notice=on_notice, one_input=False
    )
    for checked in results:
        if checked.problems:
            yield DocumentDigests(document=checked.document, problems=checked.problems)
            continue
        comparisons = validation.compare_digests(checked.value)
        yield DocumentDigests(document=checked.document, comparisons=tuple(comparisons))
