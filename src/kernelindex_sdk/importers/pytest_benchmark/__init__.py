"""pytest-benchmark's JSON (``--benchmark-json FILE`` and the saves under
``.benchmarks/``) to records.

Each benchmark becomes a run: its ``stats`` (seconds) the timing, the median primary;
``params`` the workload's parameters; ``machine_info`` the environment (vendor ``cpu``);
the timer and calibration options the protocol, one family per timer. ``commit_info``
gives the run's provenance, and a save from a work tree with uncommitted changes is
marked ``kernelindex.dev/dirty: "true"``. See docs/importers/pytest-benchmark.md.
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
from .._keys import flat_annotations
from .._observed import observed_or_file_time
from .._output import ImportSummary
from .._stats import timing
from ._runs import (
    SOURCE,
    commit_annotations,
    environment,
    measured_statistics,
    native_metrics,
    observed,
    protocol,
    workload,
)

__all__ = ["KIND", "SOURCE", "ImportSummary", "import_files", "read", "read_files", "reader"]

#: What an input is, for messages.
KIND: Final = "a pytest-benchmark JSON file"


def _draft(bench: Any, where: Where, shared: dict[str, Any], provider: str) -> Draft:
    if not isinstance(bench, dict):
        raise ValueError("a benchmark is an object")  # noqa: TRY004 (an entry's content)
    stats = bench.get("stats")
    if not isinstance(stats, dict):
        raise ValueError("the benchmark has no stats")  # noqa: TRY004 (an entry's content)
    run_workload, node = workload(bench)
    rounds = stats.get("rounds")
    run_timing, measurements = timing(
        measured_statistics(stats),
        "s",
        primary="median",
        samples=rounds if isinstance(rounds, int) and not isinstance(rounds, bool) else None,
        where="stats.median",
    )
    options = object_at(bench, "options")
    full = str(bench.get("fullname") or bench.get("name"))
    labels = {}
    if isinstance(bench.get("group"), str) and bench["group"]:
        labels["pytest-benchmark/group"] = bench["group"][:4096]
    return Draft(
        where=where,
        name=("pytest-benchmark", full),
        title=full,
        protocol=protocol(options),
        environment=shared["environment"],
        observed=shared["observed"],
        workload=run_workload,
        implementation={"provider": provider, "entryPoint": node[:512]},
        status="unverified",
        native={
            "source": SOURCE,
            "benchmark": node[:1024],
            "externalId": full[:1024],
            "metrics": native_metrics(bench),
        },
        timing=run_timing,
        measurements=measurements,
        labels=labels,
        annotations=shared["annotations"],
    )


def reader(observed_at: datetime | None = None) -> _pipeline.Reader:
    """The reader of pytest-benchmark JSON files.

    Args:
        observed_at: When the runs were measured, for a file without ``datetime`` (by
            default the file's modification time).
    """

    def entries(source: str) -> Iterator[Draft | Rejected]:
        doc = load_json(source)
        root = doc.value
        if not isinstance(root, dict) or not isinstance(root.get("benchmarks"), list):
            raise FileRejectedError("not a pytest-benchmark JSON file: no 'benchmarks' list")
        machine = object_at(root, "machine_info")
        commit = object_at(root, "commit_info")
        project = commit.get("project")
        provider = project if isinstance(project, str) and project.strip() else "pytest"
        annotations = {
            **flat_annotations("pytest-benchmark/machine_info", machine),
            **flat_annotations("pytest-benchmark/commit_info", commit),
            **flat_annotations("pytest-benchmark/version", root.get("version")),
            **flat_annotations("pytest-benchmark/datetime", root.get("datetime")),
            **commit_annotations(commit),
        }
        shared = {
            "environment": environment(machine),
            "observed": observed(root) or observed_or_file_time(observed_at, source),
            "annotations": annotations,
        }
        for i, bench in enumerate(root["benchmarks"]):
            where = Where(pointer=f"/benchmarks/{i}", find_line=doc.line)
            try:
                yield _draft(bench, where, shared, provider[:128])
            except ValueError as err:
                yield Rejected(where, str(err))

    return entries


def read(
    path: str | Path,
    *,
    on_error: _pipeline.OnError | None = None,
    observed_at: datetime | None = None,
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per benchmark of a pytest-benchmark JSON file.

    Args:
        path: The file (``--benchmark-json``, or a save under ``.benchmarks/``).
        on_error: Called with each benchmark that gives no run (its pointer, line and
            reason) and with a file that is not pytest-benchmark JSON, after which
            reading goes on; without it, the first raises.
        observed_at: When the runs were measured, for a file without ``datetime``.

    Raises:
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: without ``on_error``, for a benchmark or file that
            gives no run.
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
        existing: Records already where the output goes (their names are taken and runs
            equal to theirs skipped).
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
    """Import pytest-benchmark JSON files into a JSON Lines file, record by record.

    Behaves as :func:`kernelindex_sdk.importers.liger.import_files`. The file's
    ``commit_info`` comes first; ``provenance`` fills what it lacks.

    Args:
        paths: The files.
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        stream: Where ``-`` writes.
        on_error: Called with each benchmark or file that gives no run.
        stream_fd: The file descriptor behind ``stream``, when it has one.
        provenance: Commit, branch and commit time for runs whose file does not say.
        observed_at: As for :func:`read`.

    Returns:
        How many runs were imported, benchmarks rejected and runs skipped.

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
