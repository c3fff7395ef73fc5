"""NVIDIA nvbench's JSON output (``--json FILE``) to records.

An nvbench file holds benchmarks, each a list of states: one point of the benchmark's
axes on one device. Each state becomes one run per measurement it holds: ``cold``
(each execution timed alone with CUDA events after an L2 flush), ``batch`` (executions
back to back between one pair of events) and ``cpu_only`` (the host clock), each under
a protocol of its own, so the three never pair in compare. A skipped state becomes one
failed run (``unsupported``, nvbench's reason as the message). The device (name, SM
version, memory, SMs, L2) becomes the environment; the axes become the workload's
parameters. See docs/importers/nvbench.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Final

from ...models import RecordBundle
from ...provenance import Provenance
from .. import _pipeline
from .._draft import Draft, Rejected, Where
from .._jsonfile import FileRejectedError, load_json, object_at
from .._keys import annotation_key, annotation_value, flat_annotations
from .._observed import observed_or_file_time
from .._output import ImportSummary
from ._states import FileContext, provider_of, state_entries
from ._tables import SOURCE

__all__ = ["KIND", "SOURCE", "ImportSummary", "import_files", "read", "read_files", "reader"]

#: What an input is, for messages.
KIND: Final = "an nvbench JSON file"
_MAJOR: Final = 1


def _version(meta: Any) -> Any:
    try:
        return meta["version"]["json"]["major"]
    except (KeyError, TypeError):
        return None


def reader(observed_at: datetime | None = None) -> _pipeline.Reader:
    """The reader of nvbench JSON files.

    Args:
        observed_at: When the runs were measured (aware); nvbench writes no time, so
            by default each file's modification time stands for it.
    """

    def entries(source: str) -> Iterator[Draft | Rejected]:
        doc = load_json(source)
        root = doc.value
        if not isinstance(root, dict) or not isinstance(root.get("benchmarks"), list):
            raise FileRejectedError("not an nvbench JSON file: no 'benchmarks' list")
        meta = object_at(root, "meta")
        major = _version(meta)
        if major is not None and major != _MAJOR:
            raise FileRejectedError(
                f"nvbench JSON version {major}; this importer reads version {_MAJOR}"
            )
        devices = {
            d["id"]: d
            for d in (root["devices"] if isinstance(root.get("devices"), list) else ())
            if isinstance(d, dict) and isinstance(d.get("id"), int)
        }
        notes = flat_annotations("nvbench/meta", {k: v for k, v in meta.items() if k != "argv"})
        if "argv" in meta:
            notes[annotation_key("nvbench/meta/argv")] = annotation_value(meta["argv"])
        context = FileContext(
            devices=devices,
            provider=provider_of(meta.get("argv")),
            observed=observed_or_file_time(observed_at, source),
            annotations=notes,
            find_line=doc.line,
        )
        for b, bench in enumerate(root["benchmarks"]):
            states = bench.get("states") if isinstance(bench, dict) else None
            if not isinstance(states, list):
                where = Where(pointer=f"/benchmarks/{b}", find_line=doc.line)
                yield Rejected(where, "a benchmark is an object with a 'states' list")
                continue
            for s, state in enumerate(states):
                yield from state_entries(context, b, bench, s, state)

    return entries


def read(
    path: str | Path,
    *,
    on_error: _pipeline.OnError | None = None,
    observed_at: datetime | None = None,
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per run of an nvbench JSON file.

    Args:
        path: The file nvbench wrote with ``--json``.
        on_error: Called with each state that gives no run (its pointer, line and
            reason) and with a file that is not nvbench JSON, after which reading
            goes on; without it, the first raises.
        observed_at: When the runs were measured; by default the file's mtime.

    Raises:
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: without ``on_error``, for a state or file that gives
            no run.
    """
    return read_files([path], on_error=on_error, observed_at=observed_at)


def read_files(
    paths: Iterable[str | Path],
    *,
    on_error: _pipeline.OnError | None = None,
    existing: Iterable[Any] = (),
    on_skip: _pipeline.OnSkip | None = None,
    observed_at: datetime | None = None,
) -> Iterator[RecordBundle]:
    """Like :func:`read` over several files: run names stay unique across them.

    Args:
        paths: The files, read in order.
        on_error: As for :func:`read`.
        existing: Records already where the output goes: their names are taken and
            runs equal to theirs are skipped.
        on_skip: Called with the file and line of each run skipped as already there.
        observed_at: As for :func:`read`.
    """
    return _pipeline.read_files(
        reader(observed_at), paths, on_error=on_error, existing=existing, on_skip=on_skip
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
) -> ImportSummary:
    """Import nvbench JSON files into a JSON Lines file, appending record by record.

    Behaves as :func:`kernelindex_sdk.importers.liger.import_files`: the output is
    checked first, created at the first record, and never given a run twice.

    Args:
        paths: The files.
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        stream: Where ``-`` writes.
        on_error: Called with each state or file that gives no run.
        stream_fd: The file descriptor behind ``stream``, when it has one.
        provenance: Commit, branch and commit time of the code measured.
        observed_at: As for :func:`read`.

    Returns:
        How many runs were imported, states rejected and runs skipped.

    Raises:
        OutputIsInputError: when ``out`` is one of the inputs.
        InputError: when an input cannot be read, or ``out`` cannot be written.
    """
    return _pipeline.import_files(
        reader(observed_at),
        paths,
        out,
        kind=KIND,
        stream=stream,
        on_error=on_error,
        stream_fd=stream_fd,
        provenance=provenance,
    )
