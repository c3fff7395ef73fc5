"""Documents in files: JSON and JSON Lines, folders and stdin, validated with locations.

One input (all the paths of one call) is one namespace: a run name may appear once,
and a protocol or environment name must always name the same content.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import attrs

from . import _jsontext, validation
from .convert import dumps
from .errors import InputError, Problem

__all__ = [
    "Document",
    "FileProblem",
    "JSONLinesWriter",
    "iter_documents",
    "validate_paths",
    "write_json",
]

SUFFIXES: Final = (".json", ".jsonl")
STDIN: Final = "-"
_KIND_OF_KEY: Final = {
    "run": "BenchmarkRun",
    "protocol": "BenchmarkProtocol",
    "environment": "ExecutionEnvironment",
}


@attrs.frozen
class Document:
    """One document's text and where it starts: ``line`` is 1 for a JSON file."""

    source: str
    line: int
    text: str | bytes


@attrs.frozen
class FileProblem:
    """A problem of a document in a file, with the file's name and line."""

    source: str
    problem: Problem

    def __str__(self) -> str:
        p = self.problem
        where = f"{self.source}:{p.line}:{p.column}" if p.line is not None else self.source
        return f"{where}: {p.pointer or '(document)'}: {p.message} [{p.code}]"

    def as_dict(self) -> dict[str, Any]:
        """The problem as a JSON object (``kernelindex validate --format json``)."""
        return {"source": self.source, **attrs.asdict(self.problem)}


def _expand(paths: Iterable[str | Path]) -> Iterator[str | Path]:
    for given in paths:
        if str(given) == STDIN:
            yield STDIN
            continue
        path = Path(given)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.exists():
            yield path
        else:
            raise InputError(source=str(path), reason="no such file or directory")


def iter_documents(
    paths: Iterable[str | Path], *, stdin: IO[bytes] | None = None
) -> Iterator[Document]:
    """Yield each document of the given files and folders (``-`` is standard input).

    Folders are searched recursively for ``*.json`` and ``*.jsonl``. A ``.jsonl`` file
    holds one document per non-blank line; so does standard input when its first line
    is a whole JSON document and more lines follow, otherwise it is one document.

    Raises:
        InputError: when a path does not exist or cannot be read.
    """
    for path in _expand(paths):
        if path == STDIN:
            source = "<stdin>"
            data = (stdin or sys.stdin.buffer).read()
            lines = _looks_like_json_lines(data)
        else:
            source = str(path)
            try:
                data = Path(path).read_bytes()
            except OSError as err:
                raise InputError(source=source, reason=err.strerror or str(err)) from err
            lines = Path(path).suffix == ".jsonl"
        if not lines:
            yield Document(source=source, line=1, text=data)
            continue
        for number, line in enumerate(data.split(b"\n"), start=1):
            if line.strip():
                yield Document(source=source, line=number, text=line)


def _looks_like_json_lines(data: bytes) -> bool:
    """Standard input has no suffix: it is JSON Lines when its first line is a whole document."""
    first, _, rest = data.strip().partition(b"\n")
    if not rest.strip():
        return False
    try:
        json.loads(first)
    except ValueError:
        return False
    return True


@attrs.define
class _Names:
    """Names seen in one input: kind -> name -> (where, spec)."""

    seen: dict[tuple[str, str], tuple[str, Any]] = attrs.field(factory=dict)

    def problems(self, doc: Any, where: str) -> Iterator[Problem]:
        for pointer, kind, record in _records(doc):
            name = record["metadata"]["name"]
            key = (kind, name)
            if key not in self.seen:
                self.seen[key] = (where, record.get("spec"))
                continue
            first, spec = self.seen[key]
            # A shared protocol or environment repeats in every bundle: that is fine
            # as long as the name always means the same content.
            if kind != "BenchmarkRun" and spec == record.get("spec"):
                continue
            what = "a run" if kind == "BenchmarkRun" else f"a different {kind}"
            yield Problem(
                pointer=f"{pointer}/metadata/name",
                message=f"name {name!r} already names {what} at {first}",
                code="duplicate-name",
            )


def _records(doc: Any) -> Iterator[tuple[str, str, dict[str, Any]]]:
    if "kind" in doc:
        yield "", doc["kind"], doc
        return
    for key, kind in _KIND_OF_KEY.items():
        if key in doc:
            yield f"/{key}", kind, doc[key]


def validate_paths(
    paths: Iterable[str | Path],
    *,
    verify_digests: bool = False,
    stdin: IO[bytes] | None = None,
) -> Iterator[FileProblem]:
    """Validate every document of the given paths; yield each problem with its file and line.

    Raises:
        InputError: when a path does not exist or cannot be read.
    """
    names = _Names()
    for document in iter_documents(paths, stdin=stdin):
        value, text, problems = _jsontext.parse(document.text)
        if not problems:
            problems = list(
                validation.iter_value_problems(value, text=text, verify_digests=verify_digests)
            )
        if not problems:
            where = f"{document.source}:{document.line}"
            located = list(names.problems(value, where))
            source_map = _jsontext.SourceMap(text) if text is not None else None
            problems = [_locate(p, source_map) for p in located]
        offset = document.line - 1
        for problem in problems:
            shifted = problem
            if problem.line is not None and offset:
                shifted = attrs.evolve(problem, line=problem.line + offset)
            yield FileProblem(source=document.source, problem=shifted)


def _locate(problem: Problem, source_map: _jsontext.SourceMap | None) -> Problem:
    where = source_map.locate(problem.pointer) if source_map is not None else None
    return problem if where is None else attrs.evolve(problem, line=where[0], column=where[1])


class JSONLinesWriter:
    """Appends records to a JSON Lines file one by one, each flushed as it is written.

    A process interrupted or killed afterwards leaves every record it finished (the
    operating system holds flushed bytes); closing also syncs the file to disk.
    ``-`` writes to a stream instead.
    """

    def __init__(self, path: str | Path, *, stream: IO[str] | None = None) -> None:
        self._path = str(path)
        try:
            if self._path == STDIN:
                self._file: IO[str] = stream or sys.stdout
            else:
                self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (see close())
        except OSError as err:
            raise InputError(source=self._path, reason=err.strerror or str(err)) from err

    def write(self, record: Any) -> None:
        """Append one record (a model instance or its JSON value) as one line."""
        self._file.write(dumps(record, indent=None) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Sync the file to disk and close it (a stream is only flushed)."""
        self._file.flush()
        if self._path != STDIN:
            os.fsync(self._file.fileno())
            self._file.close()

    def __enter__(self) -> JSONLinesWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_json(path: str | Path, obj: Any) -> None:
    """Write a record (or any JSON value) in the published form, atomically.

    The text goes to a temporary file beside ``path`` that replaces it in one rename,
    so a reader never sees half a file and an earlier file survives a failed write.
    """
    target = Path(path)
    text = dumps(obj)
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except OSError as err:
        raise InputError(source=str(target), reason=err.strerror or str(err)) from err
