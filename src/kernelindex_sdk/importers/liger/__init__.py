"""Liger-Kernel's published benchmark CSVs (``benchmark/data/all_benchmark_data.csv``) to records.

One row is one measured point: kernel, provider, pass, metric, one x value and an extra
config, with the median and the 20th and 80th percentiles. Speed comes from
``triton.testing.do_bench(..., quantiles=[0.5, 0.2, 0.8])`` in ms; memory from
``torch.cuda.max_memory_allocated`` quantiles over 10 calls in "MB", meaning 2^20 bytes.
Each row becomes a bundle: a run, its protocol (shared by every row of one pass and
metric) and its environment (shared by every row of one GPU). See docs/importers.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

from ..._base.files import refuse_overwriting_inputs
from ...convert import dump, load_record
from ...documents import STDIN, JSONLinesWriter
from ...errors import KernelIndexError, SchemaValidationError, UnsupportedSourceError
from ...models import RecordBundle
from ...provenance import Provenance, annotate
from ...validation import validate
from .. import _output
from .._csvfile import BLANKS, BadRecord, CsvFile
from .._namespace import Namespace
from .._output import ImportSummary
from ._bundles import Converter, baselines
from ._rows import Row
from ._tables import COLUMNS

__all__ = [
    "COLUMNS",
    "ImportSummary",
    "import_files",
    "read",
    "read_files",
]

# What converting one row may raise for bad content; anything else is a bug to see.
_ROW_ERRORS: Final = (ValueError, OverflowError, RecursionError, KernelIndexError)


def _convert(converter: Converter, fields: dict[str, str], where: str) -> dict[str, Any]:
    doc = converter.bundle(Row.parse(fields), where)
    problems = validate(doc, kind="RecordBundle")
    if problems:
        raise SchemaValidationError(problems=problems)
    return doc


OnError = Callable[[UnsupportedSourceError], None]
OnSkip = Callable[[str, int], None]
OnNotice = Callable[[str], None]


def read(
    path: str | Path, *, on_error: OnError | None = None, on_notice: OnNotice | None = None
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per row of a Liger-Kernel benchmark CSV.

    Args:
        path: The CSV file (UTF-8, with or without a byte order mark).
        on_error: Called with each row that cannot be converted (its first line and the
            reason), and with a file that cannot be read as a Liger CSV, after which
            reading goes on; without it, the first such row or file raises.
        on_notice: Called with one line per GPU name the architecture table does not
            know (such rows import without an architecture); by default nothing is said.

    Raises:
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: for a file without Liger's columns, or (without
            ``on_error``) a row that cannot be converted.
    """
    return read_files([path], on_error=on_error, on_notice=on_notice)


def read_files(
    paths: Iterable[str | Path],
    *,
    on_error: OnError | None = None,
    existing: Iterable[Any] = (),
    on_skip: OnSkip | None = None,
    on_notice: OnNotice | None = None,
) -> Iterator[RecordBundle]:
    """Like :func:`read` over several CSVs forming one input: run names stay unique across them.

    Args:
        paths: The CSV files, read in order.
        on_error: As for :func:`read`.
        existing: Records already where the output goes (bundles or single documents,
            as JSON values or models): their names are taken, and a row whose run spec
            equals that of one of their runs is skipped, once per such run.
        on_skip: Called with the file and first line of each row skipped as already there.
        on_notice: As for :func:`read`.
    """
    converter = Converter(namespace=Namespace.of(existing), on_notice=on_notice)
    for path in paths:
        yield from _read_one(str(path), converter, on_error, on_skip)


def _read_one(
    source: str,
    converter: Converter,
    on_error: OnError | None,
    on_skip: OnSkip | None,
) -> Iterator[RecordBundle]:
    def fail(error: UnsupportedSourceError, cause: BaseException | None = None) -> None:
        if on_error is None:
            raise error from cause
        on_error(error)

    with CsvFile(source, COLUMNS, kind="Liger-Kernel benchmark CSV") as csv_file:
        # Read whole: each kernel's baseline is the provider its rows in this file name.
        found = list(csv_file.records())
        providers: dict[str, set[str]] = {}
        for record in found:
            if not isinstance(record, BadRecord):
                kernel = (record.fields.get("kernel_name") or "").strip(BLANKS)
                provider = (record.fields.get("kernel_provider") or "").strip(BLANKS)
                providers.setdefault(kernel, set()).add(provider)
        converter.baselines = baselines(providers)
        for record in found:
            if isinstance(record, BadRecord):
                fail(UnsupportedSourceError(source=source, line=record.line, reason=record.reason))
                continue
            try:
                doc = _convert(converter, record.fields, f"{source}:{record.line}")
            except _ROW_ERRORS as err:
                reason = str(err).replace("\n", "; ")
                fail(UnsupportedSourceError(source=source, line=record.line, reason=reason), err)
                continue
            run = doc["run"]
            if converter.namespace.already_written(run["spec"]):
                if on_skip is not None:
                    on_skip(source, record.line)
                continue
            run["metadata"]["name"] = converter.namespace.run(run["metadata"]["name"])
            yield load_record(doc, validate=False)


def import_files(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    stream: IO[str] | None = None,
    on_error: OnError | None = None,
    on_notice: OnNotice | None = None,
    stream_fd: int | None = None,
    provenance: Provenance | None = None,
) -> ImportSummary:
    """Import Liger-Kernel CSVs into a JSON Lines file, appending record by record.

    Every input and the output are checked before anything is read or written: the
    output may not be one of the inputs (by device and inode: a symlink or a hard link
    counts), and must be a ``.jsonl`` file (or ``-``) that can be written (a file named
    twice is read once). The output is created only when the first record is written. An
    output that already holds records is extended: its names stay taken, and rows whose
    run it already holds are skipped (counted in the summary), so importing the same CSV
    twice writes each record once.

    Args:
        paths: The CSV files.
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        stream: Where ``-`` writes (standard output by default).
        on_error: Called with each row or file that cannot be converted.
        on_notice: Called with one line per GPU name the architecture table does not know.
        stream_fd: The file descriptor behind ``stream`` when it has one: a stream that
            is one of the inputs (``>> input.csv``) is refused too.
        provenance: The commit, branch and commit time of the CSV's version, written to
            each run as its ``kernelindex.dev/...`` annotations (see
            :mod:`kernelindex_sdk.provenance`).

    Returns:
        How many rows were imported, rejected and skipped.

    Raises:
        OutputIsInputError: when ``out`` (or ``stream_fd``) is one of the inputs.
        InputError: when an input cannot be opened or read, or when ``out`` is a
            directory, does not end in ``.jsonl``, or cannot be read or written.
    """
    target = str(out)
    sources = [str(p) for p in paths]
    outputs: list[str | int] = [target] if target != STDIN else []
    if target == STDIN and stream_fd is not None:
        outputs.append(stream_fd)
    refuse_overwriting_inputs(outputs, sources)
    sources = _output.check_inputs(sources, target)
    JSONLinesWriter(target, stream=stream).check()
    rejected = skipped = 0

    def report(error: UnsupportedSourceError) -> None:
        nonlocal rejected
        rejected += 1
        if on_error is not None:
            on_error(error)

    def skip(_source: str, _line: int) -> None:
        nonlocal skipped
        skipped += 1

    existing = _output.existing_records(target)
    with _output.LazyWriter(target, stream=stream) as writer:
        for bundle in read_files(
            sources, on_error=report, existing=existing, on_skip=skip, on_notice=on_notice
        ):
            if provenance:
                value = dump(bundle)
                annotate(value, provenance)
                writer.write(value)
            else:
                writer.write(bundle)
    return ImportSummary(imported=writer.count, rejected=rejected, skipped=skipped)
