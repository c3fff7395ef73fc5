"""Google Benchmark's JSON output (``--benchmark_format=json`` or
``--benchmark_out=FILE --benchmark_out_format=json``) to records.

Each benchmark instance (a function with one set of arguments) becomes a run: with
repetitions, one run whose statistics are Google Benchmark's own aggregates (``_mean``,
``_median``, ``_stddev``; ``_cv`` and any other kept in ``sourceNative.metrics``), never
a run per aggregate row; without, one run per repetition row. The run name splits into
the family (the operation) and the arguments (the workload's parameters, named ones by
their name); the time type and the library's build type make the protocol, and the
``context`` the environment (vendor ``cpu``). See docs/importers/gbench.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Final

from ...models import RecordBundle
from ...provenance import Provenance
from .. import _pipeline
from .._draft import Draft, Rejected, Where
from .._jsonfile import FileRejectedError, load_json, object_at
from .._keys import flat_annotations
from .._observed import iso_instant, observed_or_file_time
from .._output import ImportSummary
from ._rows import group
from ._runs import FileContext, instance_entries
from ._tables import SOURCE, environment

__all__ = ["KIND", "SOURCE", "ImportSummary", "import_files", "read", "read_files", "reader"]

#: What an input is, for messages.
KIND: Final = "a Google Benchmark JSON file"


def _provider(context: dict[str, Any]) -> str:
    executable = context.get("executable")
    if isinstance(executable, str) and executable.strip():
        return os.path.basename(executable.rstrip("/\\")) or SOURCE
    return SOURCE


def reader(observed_at: datetime | None = None, machine: str | None = None) -> _pipeline.Reader:
    """The reader of Google Benchmark JSON files.

    Args:
        observed_at: When the runs were measured, for files without ``context.date``
            (by default the file's modification time).
        machine: The CPU's name for the environment (Google Benchmark writes none).
    """

    def entries(source: str) -> Iterator[Draft | Rejected]:
        doc = load_json(source)
        root = doc.value
        if not isinstance(root, dict) or not isinstance(root.get("benchmarks"), list):
            raise FileRejectedError("not a Google Benchmark JSON file: no 'benchmarks' list")
        context = object_at(root, "context")
        # context.date: ISO 8601 with an offset since Google Benchmark 1.5; older files
        # write local time without a zone, read as UTC.
        observed = iso_instant(context.get("date")) or observed_or_file_time(observed_at, source)
        build = context.get("library_build_type")
        file_context = FileContext(
            provider=_provider(context),
            observed=observed,
            environment=environment(context, machine),
            build_type=build if isinstance(build, str) else None,
            annotations=flat_annotations("gbench/context", context),
            find_line=doc.line,
        )
        instances, loose = group(root["benchmarks"])
        for i, reason in loose:
            yield Rejected(Where(pointer=f"/benchmarks/{i}", find_line=doc.line), reason)
        for instance in instances:
            yield from instance_entries(file_context, instance)

    return entries


def read(
    path: str | Path,
    *,
    on_error: _pipeline.OnError | None = None,
    observed_at: datetime | None = None,
    machine: str | None = None,
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per run of a Google Benchmark JSON file.

    Args:
        path: The file.
        on_error: Called with each row that gives no run (its pointer, line and reason)
            and with a file that is not Google Benchmark JSON, after which reading goes
            on; without it, the first raises.
        observed_at: When the runs were measured, for a file without ``context.date``.
        machine: The CPU's name (Google Benchmark writes none).

    Raises:
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: without ``on_error``, for a row or file that gives no run.
    """
    return read_files([path], on_error=on_error, observed_at=observed_at, machine=machine)


def read_files(
    paths: Iterable[str | Path],
    *,
    on_error: _pipeline.OnError | None = None,
    existing: Iterable[Any] = (),
    on_skip: _pipeline.OnSkip | None = None,
    observed_at: datetime | None = None,
    machine: str | None = None,
) -> Iterator[RecordBundle]:
    """Like :func:`read` over several files: run names stay unique across them.

    Args:
        paths: The files, read in order.
        on_error: As for :func:`read`.
        existing: Records already where the output goes (their names are taken and runs
            equal to theirs skipped).
        on_skip: Called with the file and line of each run skipped as already there.
        observed_at: As for :func:`read`.
        machine: As for :func:`read`.
    """
    return _pipeline.read_files(
        reader(observed_at, machine), paths, on_error=on_error, existing=existing, on_skip=on_skip
    )


def import_files(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    stream: IO[str] | None = None,
    on_error: _pipeline.OnError | None = None,
    stream_fd: int | None = None,
    provenance: Provenance | None = None,
    observed_at: datetime | None = None,
    machine: str | None = None,
) -> ImportSummary:
    """Import Google Benchmark JSON files into a JSON Lines file, record by record.

    Behaves as :func:`kernelindex_sdk.importers.liger.import_files`.

    Args:
        paths: The files.
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        stream: Where ``-`` writes.
        on_error: Called with each row or file that gives no run.
        stream_fd: The file descriptor behind ``stream``, when it has one.
        provenance: Commit, branch and commit time of the code measured.
        observed_at: As for :func:`read`.
        machine: As for :func:`read`.

    Returns:
        How many runs were imported, rows rejected and runs skipped.

    Raises:
        OutputIsInputError: when ``out`` is one of the inputs.
        InputError: when an input cannot be read, or ``out`` cannot be written.
    """
    return _pipeline.import_files(
        reader(observed_at, machine),
        paths,
        out,
        kind=KIND,
        stream=stream,
        on_error=on_error,
        stream_fd=stream_fd,
        provenance=provenance,
    )
