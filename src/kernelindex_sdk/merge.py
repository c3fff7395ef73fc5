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
from ._base.display import display_path
from ._base.files import existing_kind, replace_file
from ._json import text as _jsontext
from ._json.converter import as_json
from .documents import STDIN, JSONLinesWriter, check_json_lines_target, iter_documents, json_line
from .errors import FileProblem, Problem, RecordSetError
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


@attrs.frozen
class _Place:
    """Where a document came from: its file, its first line there, and its text."""

    source: str
    line: int | None = None
    text: str | None = None
    json_lines: bool = False

    def __str__(self) -> str:
        # As validate names a place: file for a JSON document, file:line for a JSON Lines one.
        source = display_path(self.source)
        return f"{source}:{self.line}" if self.json_lines else source

    def problem(self, pointer: str, message: str, code: str) -> FileProblem:
        """A problem at ``pointer`` of this document, located in its file when possible."""
        found = Problem(pointer=pointer, message=message, code=code)
        if self.text is not None and self.line is not None:
            where = _jsontext.SourceMap(self.text).locate(pointer)
            if where is not None:
                found = attrs.evolve(found, line=where[0] + self.line - 1, column=where[1])
        return FileProblem(
            source=self.source,
            problem=found,
            document_line=self.line if self.json_lines else None,
        )


def _record_key(doc: dict[str, Any]) -> tuple[str, str, str]:
    """The group a record is named in, its name, and the pointer of that name."""
    if "kind" not in doc:
        return "BenchmarkRun", doc["run"]["metadata"]["name"], "/run/metadata/name"
    return doc["kind"], doc["metadata"]["name"], "/metadata/name"


@attrs.define
class _Merger:
    records: dict[tuple[str, str], dict[str, Any]] = attrs.Factory(dict)
    # The rules validate keeps; a run repeated with the same content is dropped.
    rules: InputRules = attrs.Factory(lambda: InputRules(repeats=True))
    problems: list[FileProblem] = attrs.Factory(list)
    read: int = 0
    duplicates: int = 0

    def add(self, doc: dict[str, Any], place: _Place) -> None:
        admission = self.rules.admit(doc, str(place))
        if admission.problems:
            self.problems.extend(
                place.problem(p.pointer, p.message, p.code) for p in admission.problems
            )
            return
        key = _record_key(doc)[:2]
        if admission.repeat or key in self.records:
            # The same run again, or a protocol or environment repeated with its spec.
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
    for document in iter_documents(paths, stdin=stdin, on_notice=on_notice):
        merger.read += 1
        value, text, problems = _jsontext.parse(document.text)
        if not problems:
            problems = list(
                validation.iter_value_problems(value, text=text, verify_digests=verify_digests)
            )
        if problems:
            merger.problems.extend(FileProblem.in_document(document, p) for p in problems)
            continue
        merger.add(value, _Place(document.source, document.line, text, document.json_lines))
    return merger.result()


def merge_records(records: Iterable[Any], *, verify_digests: bool = False) -> MergedRecords:
    """Merge records given as models (``RecordBundle``, ``BenchmarkRun``, ...) or JSON values.

    Problems name a record by its position, ``records[3]``.

    Raises:
        RecordSetError: listing every invalid record and every clash.
    """
    merger = _Merger()
    for i, record in enumerate(_arguments.records(records)):
        merger.read += 1
        value = as_json(record)
        place = _Place(f"records[{i}]")
        problems = validation.validate(value, verify_digests=verify_digests)
        if problems:
            merger.problems.extend(FileProblem(source=place.source, problem=p) for p in problems)
            continue
        merger.add(value, place)
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
