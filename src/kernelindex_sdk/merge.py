"""Record sets from many processes or hosts merged into one, checked as they are read.

The shards of a sweep (one JSON Lines file per rank, per host, per array task) become
one record set: every document is validated; a record that appears twice with the same
content (RFC 8785 canonical bytes) is kept once; two different records under one name
are refused, naming both places; so are two different protocol (or environment) specs
under one name or one digest. The output order depends only on the records, never on
the order of the inputs, so the same records give the same bytes.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, Final

import attrs

from . import validation
from ._base import arguments as _arguments
from ._base.files import existing_kind, replace_file
from ._json.converter import as_json
from .documents import STDIN, JSONLinesWriter, check_documents, check_json_lines_target, json_line
from .errors import FileProblem, RecordSetError
from .validation import InputRules

__all__ = ["MergedRecords", "merge_paths", "merge_records", "write_records"]

# Output order: shared objects first, then runs, each by name.
_GROUP_ORDER: Final = {"BenchmarkProtocol": 0, "ExecutionEnvironment": 1, "BenchmarkRun": 2}


@attrs.frozen
class MergedRecords:
    """The merged record set and what merging it did.

    Attributes:
        records: The records (JSON values) in output order: protocols, environments,
            then runs and bundles, each group by name.
        read: How many documents were read.
        duplicates: How many of them repeated a record already read, and were dropped.
    """

    records: tuple[dict[str, Any], ...]
    read: int
    duplicates: int


def _record_key(doc: dict[str, Any]) -> tuple[str, str]:
    """The group a record is named in, and its name."""
    if "kind" not in doc:
        return "BenchmarkRun", doc["run"]["metadata"]["name"]
    return doc["kind"], doc["metadata"]["name"]


@attrs.define
class _Merger:
    records: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    problems: list[FileProblem] = attrs.Factory(list)
    read: int = 0
    duplicates: int = 0

    def keep(self, doc: dict[str, Any], repeat: bool) -> None:
        """Keep an admitted record, unless it repeats one kept (``repeat``: a run; or a
        protocol or environment, which the input's rules let repeat only unchanged)."""
        key = _record_key(doc)
        if repeat or key in self.records:
            self.duplicates += 1
            return
        self.records[key] = doc

    def result(self) -> MergedRecords:
        if self.problems:
            raise RecordSetError(problems=tuple(self.problems))
        order = sorted(self.records, key=lambda key: (_GROUP_ORDER[key[0]], key[1]))
        return MergedRecords(
            records=tuple(self.records[key] for key in order),
            read=self.read,
            duplicates=self.duplicates,
        )


def merge_paths(
    paths: Iterable[str | Path],
    *,
    verify_digests: bool = False,
    stdin: IO[bytes] | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> MergedRecords:
    """Merge the records of files and folders (as ``kernelindex validate`` reads them).

    Args:
        paths: Files, folders (searched for ``*.json`` and ``*.jsonl``) and ``-``.
        verify_digests: Also recompute every digest whose object a record carries.
        stdin: What ``-`` reads; standard input by default.
        on_notice: Called with one line for each folder that holds no records.

    Returns:
        The merged records, in an order that depends only on the records.

    Raises:
        RecordSetError: listing every invalid document and every clash, each with
            its file and line; nothing is merged then.
        InputError: when a path does not exist or cannot be read.
    """
    merger = _Merger()
    results = check_documents(
        paths, verify_digests=verify_digests, stdin=stdin, on_notice=on_notice, repeats=True
    )
    for checked in results:
        merger.read += 1
        if checked.problems:
            merger.problems.extend(checked.problems)
        else:
            merger.keep(checked.value, checked.repeat)
    return merger.result()


def merge_records(records: Iterable[Any], *, verify_digests: bool = False) -> MergedRecords:
    """Merge records given as models (``RecordBundle``, ``BenchmarkRun``, ...) or JSON values.

    Problems name a record by its position, ``records[3]``.

    Raises:
        RecordSetError: listing every invalid record and every clash.
    """
    merger = _Merger()
    # The rules validate keeps; a run repeated with the same content is dropped.
    rules = InputRules(repeats=True)
    for i, record in enumerate(_arguments.records(records)):
        merger.read += 1
        value = as_json(record)
        place = f"records[{i}]"
        problems = validation.validate(value, verify_digests=verify_digests)
        admission = None if problems else rules.admit(value, place)
        if admission is not None:
            problems = list(admission.problems)
        if problems:
            merger.problems.extend(FileProblem(source=place, problem=p) for p in problems)
        elif admission is not None:
            merger.keep(value, admission.repeat)
    return merger.result()


def write_records(
    path: str | Path, records: Iterable[Any], *, stream: IO[str] | None = None
) -> None:
    """Write records as JSON Lines, replacing ``path`` atomically (``-`` writes ``stream``).

    The lines go to a temporary file beside ``path`` that replaces it in one rename, so
    a reader never sees half a record set and an earlier file survives a failed write.
    A symlink is written through. A FIFO or a character device (``/dev/null``,
    ``/dev/stdout``) cannot be replaced: the lines are written to it as a stream.

    Raises:
        SchemaValidationError: when a record is not a JSON value; nothing is replaced.
        InputError: for a regular file whose name does not end in ``.jsonl`` (any letter
            case; :func:`~kernelindex_sdk.documents.check_json_lines_target`), for a path
            naming a folder, socket or block device, or one that cannot be written.
    """
    path = _arguments.path(path)
    records = _arguments.records(records)
    if str(path) == STDIN:
        with JSONLinesWriter(STDIN, stream=stream) as out:
            for record in records:
                out.write(record)
        return
    check_json_lines_target(path)
    info = existing_kind(path)
    if info is not None and (stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode)):
        with JSONLinesWriter(path) as out:
            for record in records:
                out.write(record)
        return
    replace_file(path, (json_line(record) for record in records))
