"""The Store: open, ingest, query, export."""

from __future__ import annotations

import operator
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final

import attrs

from .. import provenance
from .._base.arguments import instance, optional_text, path, path_or_fd, text, texts
from .._base.files import replace_file
from ..documents import check_json_lines_target
from ..errors import ArgumentError, KernelIndexError, StoreError
from ._backend import Backend
from ._connect import connect
from ._export import export_line, refuse_store_file
from ._ingest import ingest_paths
from ._layout import OBJECT_TABLES
from ._query import CHUNK, ROW_COLUMNS, chunks, run_rows, where
from ._report import IngestReport
from ._rows import RunRow
from ._url import MEMORY, StoreURL, parse_url

__all__ = ["NotInStoreError", "Store", "open_store"]


@attrs.frozen(kw_only=True, auto_exc=True)
class NotInStoreError(KernelIndexError, KeyError):
    """A run name the store does not hold. It is a KeyError too, as a mapping's would be.

    Attributes:
        store: The store, as messages show it.
        name: The name asked for.
    """

    store: str
    name: str

    def __str__(self) -> str:
        return f"{self.store}: no run named {self.name!r}"


# Runs' order: commit time, else observedAt (RunRow.order_key), then name. When every
# run has a commit time, or none has, the same order comes from two fields read in C
# (no Python call of order_key per run).
_order: Final = operator.attrgetter("order_key", "name")
_AT: Final = RunRow._fields.index
_COMMIT_TIME: Final = _AT("commit_time")
_NAME: Final = operator.itemgetter(_AT("name"))
_BY_COMMIT_TIME: Final = operator.itemgetter(_COMMIT_TIME)
_BY_OBSERVED: Final = operator.itemgetter(_AT("observed_at"))


def _sort(rows: list[RunRow]) -> None:
    """Sort ``rows`` by order key, then name.

    By name, then (a stable sort) by the one time that is every run's order key: the
    same order as by the pair, without a tuple made and compared for each run.
    """
    times = list(map(_BY_COMMIT_TIME, rows))
    missing = times.count(None)
    if missing in (0, len(rows)):
        rows.sort(key=_NAME)
        rows.sort(key=_BY_COMMIT_TIME if missing == 0 else _BY_OBSERVED)
    else:
        rows.sort(key=_order)


class Store:
    """A records store (SQLite or PostgreSQL); see :func:`open_store`.

    Usable as a context manager, which closes it. Methods raise :class:`StoreError`
    when the database fails.
    """

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    @property
    def url(self) -> StoreURL:
        """The store's parsed URL."""
        return self._backend.url

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._backend.dialect

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        commit: str | None = None,
        branch: str | None = None,
        commit_time: str | None = None,
        verify_digests: bool = False,
        stdin: IO[bytes] | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> IngestReport:
        """Validate and store the records of files and folders, each file in one transaction.

        Files are read as ``kernelindex validate`` reads them (folders searched for
        ``.json``/``.jsonl``; ``-`` is standard input) and validated the same way. A
        file with an invalid record, or with a run that clashes with a stored one, is
        refused whole; other files still go in. See the module for what is skipped.

        Args:
            paths: Files, folders, and ``-``.
            commit: Provenance for runs that lack a ``kernelindex.dev/commit`` annotation.
            branch: Likewise ``kernelindex.dev/branch``.
            commit_time: Likewise ``kernelindex.dev/commit-time`` (RFC 3339; stored in UTC).
            verify_digests: Recompute each digest whose object a record carries.
            stdin: The stream ``-`` reads (default: the process's standard input).
            on_notice: Called with a line for each folder that holds no records.

        Returns:
            The counts and every problem; ``report.ok`` is whether all went in or was
            skipped.

        Raises:
            ArgumentError: for a commit time that is not RFC 3339, or an argument of the
                wrong type.
            StoreError: when the store fails.
        """
        # The caller's mistake, not the records': a wrong type is refused here, not as
        # a problem of every record it would have been written into.
        for name, value in (("commit", commit), ("branch", branch), ("commit_time", commit_time)):
            optional_text(value, name)
        instance(verify_digests, bool, "verify_digests")
        given = provenance.Provenance(commit=commit, branch=branch, commit_time=commit_time)
        return ingest_paths(
            self._backend,
            paths,
            given,
            verify_digests=verify_digests,
            stdin=stdin,
            on_notice=on_notice,
        )

    # 10,000 runs are 10,000 new tuples: the collector's passes over them (they hold no
    # cycles) took as long as reading them.
    def rows(
        self,
        *,
        operation: str | None = None,
        pass_: str | None = None,
        provider: str | None = None,
        hardware: str | None = None,
        branch: str | None = None,
        commit: str | None = None,
        workload_digest: str | None = None,
        protocol_digest: str | None = None,
        names: Iterable[str] | None = None,
        status: str | None = None,
    ) -> list[RunRow]:
        """The stored runs that match every filter given, by order key, then name.

        Args:
            operation: The workload's operation (``jsd``).
            pass_: The workload's pass (``forward``).
            provider: The implementation's provider (``triton``).
            hardware: The environment's ``hardware.product`` (``NVIDIA H200``).
            branch: The ``kernelindex.dev/branch`` annotation.
            commit: The ``kernelindex.dev/commit`` annotation.
            workload_digest: The run's workload digest.
            protocol_digest: The run's protocol digest.
            names: Only these run names.
            status: The run's status (``passed``).

        Returns:
            One :class:`RunRow` per run, ordered by :attr:`RunRow.order_key` then name.
        """
        filters = {
            "operation": operation,
            "pass_": pass_,
            "provider": provider,
            "hardware": hardware,
            "branch": branch,
            "commit": commit,
            "workload_digest": workload_digest,
            "protocol_digest": protocol_digest,
            "status": status,
        }
        wanted = None if names is None else list(dict.fromkeys(texts(names, "names")))
        found: list[RunRow] = []
        columns = ", ".join(ROW_COLUMNS)
        for chunk in chunks(wanted):
            clause, params = where(filters, chunk)
            # The clause holds placeholders only; its columns are constants.
            sql = f"SELECT {columns} FROM runs r{clause}"  # noqa: S608
            result = self._backend.execute(sql, params)
            found.extend(run_rows(result, self._backend.fetch, self._backend.json_value))
        # Sorted here (PostgreSQL's text order follows the locale; SQLite's sorter took
        # half as long again as this).
        _sort(found)
        return found

    def spec(self, kind: str, digest: str) -> Mapping[str, Any] | None:
        """The stored spec of a digested object, or None when the store lacks it.

        Args:
            kind: ``workload``, ``implementation``, ``protocol`` or ``environment``.
            digest: Its ``sha256:`` digest.

        Raises:
            ArgumentError: for another kind.
        """
        table = OBJECT_TABLES.get(kind)
        if table is None:
            raise ArgumentError(
                argument="kind", reason=f"expected one of {', '.join(OBJECT_TABLES)}, got {kind!r}"
            )
        found = self._backend.execute(
            f"SELECT spec FROM {table} WHERE digest = ?",  # noqa: S608
            (digest,),
        )
        if not found:
            return None
        spec: Mapping[str, Any] = self._backend.json_value(found[0][0])
        return spec

    def record_text(self, name: str) -> str:
        """The text of the run ``name`` as it was stored, byte for byte (a document's whole
        text, or a JSON Lines line without its newline).

        Raises:
            NotInStoreError: when no run has that name.
        """
        ((_, found),) = self.records([text(name, "name")])
        return found

    def records(self, names: Iterable[str]) -> Iterator[tuple[str, str]]:
        """``(name, text)`` of each named run, in the order given (see :meth:`record_text`).

        Raises:
            NotInStoreError: for the first name the store lacks.
        """
        wanted = texts(names, "names")
        for start in range(0, len(wanted), CHUNK):
            chunk = wanted[start : start + CHUNK]
            stored = self._backend.stored_runs(chunk)
            for name in chunk:
                if name not in stored:
                    raise NotInStoreError(store=self.url.shown, name=name)
                yield name, stored[name][0]

    def export_lines(self, **filters: Any) -> Iterator[str]:
        """Each stored record as one JSON line, in the order of arrival; see :meth:`export`.

        With no filter: first the protocol and environment documents that came on their
        own, then every run. With filters (those of :meth:`rows`): the runs that match.
        """
        names = filters.pop("names", None)
        if names is not None:
            names = texts(names, "names")
        if not filters and names is None:
            for text, form in self._backend.execute(
                "SELECT record_text, record_form FROM documents ORDER BY seq"
            ):
                yield export_line(text, form)
        wanted = None if names is None else list(dict.fromkeys(names))
        found: list[tuple[int, str, str]] = []
        for chunk in chunks(wanted):
            clause, params = where(filters, chunk)
            found.extend(
                self._backend.execute(
                    "SELECT r.seq, t.record_text, t.record_form FROM runs r"  # noqa: S608
                    f" JOIN run_texts t ON t.seq = r.seq{clause}",
                    params,
                )
            )
        found.sort()
        for _, text, form in found:
            yield export_line(text, form)

    def export(self, out_path: str | Path, **filters: Any) -> int:
        """Write the stored records as JSON Lines to ``out_path`` (replaced atomically).

        A record that arrived as a JSON Lines line comes back as that line, byte for
        byte; one that arrived as a ``.json`` document comes back as its compact published
        form (one line), while :meth:`record_text` gives its document text as it came.

        Args:
            out_path: The file to write; never the store's own file.
            filters: Those of :meth:`rows`.

        Returns:
            The number of records written.

        Raises:
            InputError: when ``out_path`` is the store's file, is not a ``.jsonl`` path
                (a ``.json`` file holds one document), or cannot be written.
        """
        refuse_store_file(path(out_path, "out_path"), self.url)
        # Lines in a .json file would not read back (validate: "extra data").
        check_json_lines_target(out_path)
        lines = list(self.export_lines(**filters))
        replace_file(out_path, lines)
        return len(lines)

    def refuse_output(self, out: str | Path | int) -> None:
        """Refuse an output that would write over this store's own files.

        Args:
            out: A path a command writes, or a file descriptor it writes to (``1``).

        Raises:
            OutputIsInputError: when ``out`` is the store's file or its journal, by any
                name (same path, symlink, hard link).
        """
        refuse_store_file(path_or_fd(out, "out"), self.url)

    def close(self) -> None:
        """Close the connection."""
        self._backend.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _is_regular_or_missing(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError as err:
        raise StoreError(source=path, reason=err.strerror or str(err)) from err


def open_store(url: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
    """Open a records store, creating its tables when it has none.

    Args:
        url: A SQLite path or ``sqlite:///PATH`` URL (``sqlite:///:memory:`` for one in
            memory), or a ``postgresql://`` URL (needs the ``[postgres]`` extra). None
            means ``$KERNELINDEX_DB``, else :data:`DEFAULT_DB` (``kernelindex.sqlite3`` in
            the current directory).
        create: Create the store when there is none; otherwise an absent store is an error.

    Raises:
        StoreError: when the store cannot be opened (not a database, no server).
        StoreLayoutError: when its layout is newer than this package reads, or it is no
            kernelindex store (or none exists and ``create`` is false).
        MissingDependencyError: for PostgreSQL without psycopg.
    """
    parsed = parse_url(url)
    if (
        parsed.dialect == "sqlite"
        and parsed.target != MEMORY
        and not _is_regular_or_missing(parsed.target)
    ):
        raise StoreError(source=parsed.shown, reason="is not a regular file")
    return Store(connect(parsed, create=create))
