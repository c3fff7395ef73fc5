"""TritonBench's output (its ``;``-separated CSV or its JSON) to records.

Each provider at each x value becomes a run of the operator's workload: the latency
(ms, a median) its timing, TFLOPS, GB/s and the speedup over the baseline each a
measurement of its own, the x value (``(M, N, K)`` split into M, N, K) the parameters,
the mode (``fwd``, ``bwd``, ``fwd_bwd``, ``fwd_no_grad``) the pass. TritonBench writes
neither the GPU nor the time: the GPU is given (``gpu``), the time defaults to the
file's modification time. The CSV names no operator either: give it (``op``, and
``mode`` when not ``fwd``). The ``average`` row and the ``-avg`` keys are derived
from the others and not imported. See docs/importers/tritonbench.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Final

from ..._base.display import short_repr
from ...errors import InputError
from ...models import RecordBundle
from ...provenance import Provenance
from .. import _pipeline
from .._draft import Draft, Rejected, Shared
from .._jsonfile import FileRejectedError, load_json
from .._observed import observed_or_file_time
from .._output import ImportSummary
from ._runs import SOURCE, Options, draft, environment
from ._tables import MODES, Point, csv_points, json_points

__all__ = [
    "KIND",
    "MODES",
    "SOURCE",
    "ImportSummary",
    "import_files",
    "read",
    "read_files",
    "reader",
]

#: What an input is, for messages.
KIND: Final = "a TritonBench CSV or JSON file"


def _is_json(source: str) -> bool:
    try:
        with open(source, "rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as err:
        raise InputError.from_os_error(source, err) from err
    return head.startswith(b"{")


def _names(bench: str, op: str | None, mode: str | None) -> tuple[str, str]:
    """Operator and mode of a JSON file's benchmark name (``gemm_fwd``); ``op`` and
    ``mode``, when given, must agree with it."""
    for known in sorted(MODES, key=len, reverse=True):
        if bench.endswith(f"_{known}"):
            found_op, found_mode = bench[: -len(known) - 1], known
            break
    else:
        # A custom --benchmark-name: the caller names the operator.
        if op is None:
            raise FileRejectedError(
                f"benchmark {short_repr(bench)} names no mode; give the operator (--op)"
            )
        return op, mode or "fwd"
    if (op is not None and op != found_op) or (mode is not None and mode != found_mode):
        raise FileRejectedError(
            f"the file is {short_repr(found_op)} in mode {short_repr(found_mode)},"
            f" but {short_repr(op or found_op)} in mode {short_repr(mode or found_mode)}"
            " was given"
        )
    return found_op, found_mode


def _entry(
    point: Point,
    op: str,
    mode: str,
    options: Options,
    shared: Shared,
    hashes: dict[str, str],
) -> Draft | Rejected:
    try:
        return draft(
            point,
            op=op,
            mode=mode,
            options=options,
            environment=shared,
            source_hash=hashes.get(point.provider),
        )
    except ValueError as err:
        return Rejected(point.where, str(err))


def reader(
    *,
    gpu: str,
    op: str | None = None,
    mode: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    x_label: str | None = None,
    observed_at: datetime | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> _pipeline.Reader:
    """The reader of TritonBench files.

    Args:
        gpu: The GPU the file was measured on, as its driver names it
            (``NVIDIA H100 80GB HBM3``): TritonBench writes none.
        op: The operator (``gemm``); required for a CSV, which names none.
        mode: ``fwd`` (TritonBench's default), ``bwd``, ``fwd_bwd`` or ``fwd_no_grad``.
        parameters: Workload parameters the file does not record (``precision``).
        x_label: The x label (``(M, N, K)``) for a JSON file, which writes none, so
            that its parameters are named as the CSV's are; by default ``x_val``.
        observed_at: When the runs were measured; by default the file's mtime.
        on_notice: Hears once of a GPU the architecture table does not know.

    Raises:
        ValueError: for an unknown mode or an empty GPU name.
    """
    if mode is not None and mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    if not gpu.strip():
        raise ValueError("the GPU name is empty")
    shared, known = environment(gpu.strip())
    told = [known]

    def entries(source: str) -> Iterator[Draft | Rejected]:
        options = Options(
            observed=observed_or_file_time(observed_at, source),
            parameters=dict(parameters or {}),
        )
        if _is_json(source):
            bench, points = json_points(load_json(source))
            found_op, found_mode = _names(bench, op, mode)
        else:
            if op is None:
                raise FileRejectedError(
                    "a TritonBench CSV does not name its operator; give it (--op)"
                )
            found_op, found_mode, points = op, mode or "fwd", csv_points(source)
        if not told[0] and on_notice is not None:
            on_notice(f"{source}: unknown GPU {short_repr(gpu)}: imported without architecture")
            told[0] = True
        hashes: dict[str, str] = {}
        ready: list[Point] = []
        for point in points:
            if isinstance(point, Rejected):
                yield point
            elif point.source_hash is not None and point.x == "hashes":
                hashes[point.provider] = point.source_hash
            else:
                if not point.label and x_label:
                    point.label = x_label
                ready.append(point)
        for point in ready:
            yield _entry(point, found_op, found_mode, options, shared, hashes)

    return entries


def read(
    path: str | Path,
    *,
    gpu: str,
    op: str | None = None,
    mode: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    x_label: str | None = None,
    on_error: _pipeline.OnError | None = None,
    on_notice: Callable[[str], None] | None = None,
    observed_at: datetime | None = None,
) -> Iterator[RecordBundle]:
    """Yield one validated bundle per provider and x value of a TritonBench file.

    Args:
        path: A CSV TritonBench wrote (``--csv``, ``--output``) or its JSON
            (``--output-json``).
        gpu: The GPU it ran on (TritonBench writes none).
        op: The operator; required for a CSV.
        mode: The mode, for a CSV (default ``fwd``).
        parameters: Workload parameters the file does not record.
        x_label: The x label for a JSON file (``(M, N, K)``), which writes none.
        on_error: Called with each point or file that gives no run, after which
            reading goes on; without it, the first raises.
        on_notice: Hears once of a GPU the architecture table does not know.
        observed_at: When the runs were measured; by default the file's mtime.

    Raises:
        InputError: when the file cannot be opened or read.
        UnsupportedSourceError: without ``on_error``, for a point or file that gives no run.
        ValueError: for an unknown mode or an empty GPU name.
    """
    return read_files(
        [path],
        gpu=gpu,
        op=op,
        mode=mode,
        parameters=parameters,
        x_label=x_label,
        on_error=on_error,
        on_notice=on_notice,
        observed_at=observed_at,
    )


def read_files(
    paths: Iterable[str | Path],
    *,
    gpu: str,
    op: str | None = None,
    mode: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    x_label: str | None = None,
    on_error: _pipeline.OnError | None = None,
    existing: Iterable[Any] = (),
    on_skip: _pipeline.OnSkip | None = None,
    on_notice: Callable[[str], None] | None = None,
    observed_at: datetime | None = None,
) -> Iterator[RecordBundle]:
    """Like :func:`read` over several files: run names stay unique across them.

    Args:
        paths: The files, read in order.
        gpu: As for :func:`read`.
        op: As for :func:`read`.
        mode: As for :func:`read`.
        parameters: As for :func:`read`.
        x_label: As for :func:`read`.
        on_error: As for :func:`read`.
        existing: Records already where the output goes (their names are taken and runs
            equal to theirs skipped).
        on_skip: Called with the file and line of each run skipped as already there.
        on_notice: As for :func:`read`.
        observed_at: As for :func:`read`.
    """
    chosen = reader(
        gpu=gpu,
        op=op,
        mode=mode,
        parameters=parameters,
        x_label=x_label,
        observed_at=observed_at,
        on_notice=on_notice,
    )
    return _pipeline.read_files(
        chosen, paths, on_error=on_error, existing=existing, on_skip=on_skip
    )


def import_files(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    gpu: str,
    op: str | None = None,
    mode: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    x_label: str | None = None,
    stream: IO[str] | None = None,
    on_error: _pipeline.OnError | None = None,
    on_notice: Callable[[str], None] | None = None,
    stream_fd: int | None = None,
    provenance: Provenance | None = None,
    observed_at: datetime | None = None,
) -> ImportSummary:
    """Import TritonBench files into a JSON Lines file, record by record.

    Behaves as :func:`kernelindex_sdk.importers.liger.import_files`.

    Args:
        paths: The files.
        out: The JSON Lines file to append to; ``-`` writes to ``stream``.
        gpu: As for :func:`read`.
        op: As for :func:`read`.
        mode: As for :func:`read`.
        parameters: As for :func:`read`.
        x_label: As for :func:`read`.
        stream: Where ``-`` writes.
        on_error: Called with each point or file that gives no run.
        on_notice: As for :func:`read`.
        stream_fd: The file descriptor behind ``stream``, when it has one.
        provenance: Commit, branch and commit time of the code measured.
        observed_at: As for :func:`read`.

    Returns:
        How many runs were imported, points rejected and runs skipped.

    Raises:
        OutputIsInputError: when ``out`` is one of the inputs.
        InputError: when an input cannot be read, or ``out`` cannot be written.
        ValueError: for an unknown mode or an empty GPU name.
    """
    chosen = reader(
        gpu=gpu,
        op=op,
        mode=mode,
        parameters=parameters,
        x_label=x_label,
        observed_at=observed_at,
        on_notice=on_notice,
    )
    return _pipeline.import_files(
        chosen,
        paths,
        out,
        kind=KIND,
        stream=stream,
        on_error=on_error,
        stream_fd=stream_fd,
        provenance=provenance,
    )
