"""From a format's drafts to validated bundles in a JSON Lines file: the steps every
importer shares.

A format supplies a reader: a function from a path to its entries (drafts and rejected
entries, in file order). Everything else is here and the same for every format: a
bundle per draft with all four digests, validated; per-entry errors reported with the
entry's place and reason while the rest still import; runs the output already holds
skipped; names unique in the output; provenance added; the output created at the first
record. The Liger importer keeps its own copy of these steps
(:mod:`kernelindex_sdk.importers.liger`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

from .._base.files import refuse_overwriting_inputs
from ..convert import dump, load_record
from ..documents import STDIN, JSONLinesWriter
from ..errors import KernelIndexError, SchemaValidationError, UnsupportedSourceError
from ..models import RecordBundle
from ..provenance import Provenance, annotate
from ..validation import validate
from . import _output
from ._draft import Builder, Draft, Rejected, Where
from ._jsonfile import FileRejectedError
from ._namespace import Namespace
from ._output import ImportSummary

__all__ = [
    "OnError",
    "OnNotice",
    "OnSkip",
    "Reader",
    "import_files",
    "read_files",
]

Reader = Callable[[str], Iterator[Draft | Rejected]]
OnError = Callable[[UnsupportedSourceError], None]
OnSkip = Callable[[str, int | None], None]
OnNotice = Callable[[str], None]

# What converting one entry may raise for bad content; anything else is a bug to see.
_ENTRY_ERRORS: Final = (ValueError, OverflowError, RecursionError, KernelIndexError)


def _error(source: str, where: Where, reason: str) -> UnsupportedSourceError:
    line, pointer = where.resolve()
    text = reason.replace("\n", "; ")
    return UnsupportedSourceError(
        source=source, line=line, reason=f"{pointer}: {text}" if pointer else text
    )


def _bundle(builder: Builder, draft: Draft) -> dict[str, Any]:
    doc = builder.bundle(draft)
    problems = validate(doc, kind="RecordBundle")
    if problems:
        raise SchemaValidationError(problems=problems)
    return doc


def _entries(reader: Reader, source: str) -> Iterator[Draft | Rejected]:
    try:
        yield from reader(source)
    except FileRejectedError as err:
        yield Rejected(Where(line=err.line), err.reason)


def read_files(
    reader: Reader,
    paths: Iterable[str | Path],
    *,
    on_error: OnError | None = None,
    existing: Iterable[Any] = (),
    on_skip: OnSkip | None = None,
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per draft of every file, in order.

    Args:
        reader: The format's reader.
        paths: The files; run names stay unique across them.
        on_error: Called with each entry (or file) that gives no record, after which
            reading goes on; without it, the first raises.
        existing: Records already where the output goes: their names are taken, and a
            draft whose run spec equals one of theirs is skipped (once per such run).
        on_skip: Called with the file and line of each run skipped as already there.

    Raises:
        InputError: when a file cannot be opened or read.
        UnsupportedSourceError: without ``on_error``, for the first entry that gives no
            record.
    """
    builder = Builder(namespace=Namespace.of(existing))
    for path in paths:
        source = str(path)
        for entry in _entries(reader, source):
            if isinstance(entry, Rejected):
                error = _error(source, entry.where, entry.reason)
                if on_error is None:
                    raise error
                on_error(error)
                continue
            try:
                doc = _bundle(builder, entry)
            except _ENTRY_ERRORS as err:
                error = _error(source, entry.where, str(err))
                if on_error is None:
                    raise error from err
                on_error(error)
                continue
            run = doc["run"]
            if builder.namespace.already_written(run["spec"]):
                if on_skip is not None:
                    on_skip(source, entry.where.resolve()[0])
                continue
            run["metadata"]["name"] = builder.namespace.run(run["metadata"]["name"])
            yield load_record(doc, validate=False)


def import_files(
    reader: Reader,
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    kind: str,
    stream: IO[str] | None = None,
    on_error: OnError | None = None,
    stream_fd: int | None = None,
    provenance: Provenance | None = None,
) -> ImportSummary:
    """Import files into a JSON Lines file, appending record by record.

    Every input and the output are checked before anything is read or written, as
    :func:`kernelindex_sdk.importers.liger.import_files` does: the output may not be
    one of the inputs (by any path or link), must be a ``.jsonl`` file or ``-``, and
    is created at the first record. Runs it already holds are skipped and counted.

    Args:
        reader: The format's reader.
        paths: The files.
        kind: What an input is, for messages (``an nvbench JSON file``).
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        stream: Where ``-`` writes (standard output by default).
        on_error: Called with each entry or file that gives no record.
        stream_fd: The file descriptor behind ``stream``, when it has one.
        provenance: Commit, branch and commit time for runs whose file does not say.

    Returns:
        How many runs were imported, entries rejected and runs skipped.

    Raises:
        OutputIsInputError: when ``out`` (or ``stream_fd``) is one of the inputs.
        InputError: when an input cannot be read, or ``out`` cannot be written.
    """
    target = str(out)
    sources = [str(p) for p in paths]
    outputs: list[str | int] = [target] if target != STDIN else []
    if target == STDIN and stream_fd is not None:
        outputs.append(stream_fd)
    refuse_overwriting_inputs(outputs, sources)
    sources = _output.check_inputs(sources, target, what=kind)
    JSONLinesWriter(target, stream=stream).check()
    rejected = skipped = 0

    def report(error: UnsupportedSourceError) -> None:
        nonlocal rejected
        rejected += 1
        if on_error is not None:
            on_error(error)

    def skip(_source: str, _line: int | None) -> None:
        nonlocal skipped
        skipped += 1

    existing = _output.existing_records(target)
    with _output.LazyWriter(target, stream=stream) as writer:
        for bundle in read_files(reader, sources, on_error=report, existing=existing, on_skip=skip):
            if provenance:
                value = dump(bundle)
                annotate(value, provenance)
                writer.write(value)
            else:
                writer.write(bundle)
    return ImportSummary(imported=writer.count, rejected=rejected, skipped=skipped)
