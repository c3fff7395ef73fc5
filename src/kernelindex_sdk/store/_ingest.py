"""Ingest: validated records of one file into the store, in one transaction.

A run whose name the store lacks is added. One it holds is compared: the same record
(byte-identical text, or the same JSON value) is skipped as identical; one that differs
only in its provenance annotations is skipped too, as the same measurement seen again,
and the first arrival keeps its provenance; anything else is a clash, and the whole
file is refused (rolled back) with each clash naming both places. A digest that names
another spec than the stored one is refused the same way, and so is a protocol or
environment document on its own whose name the store holds for another JSON value
(another spec, or the same spec with other metadata). JSON values compare numbers by
value: ``5`` and ``5.0`` are one value, as in RFC 8785 and merge.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Final

import attrs

from .. import documents, provenance
from .._base.display import display_path, json_safe
from .._base.timestamps import format_observed_at
from ..convert import dumps
from ..documents import Document
from ..errors import FileProblem, InputError, Problem, StoreError
from . import _extract
from ._backend import Backend, DataRefusedError
from ._layout import GROUP_COLUMNS, OBJECT_TABLES, group_key
from ._report import IngestReport

__all__ = ["ingest_paths"]

_RUN_COLUMNS: Final = _extract.RUN_COLUMNS
# A run's group (layout 3): its values of run_groups' columns, one slice of its row.
_GROUP_AT: Final = _RUN_COLUMNS.index(GROUP_COLUMNS[0])
_GROUP_OF: Final = operator.itemgetter(slice(_GROUP_AT, _GROUP_AT + len(GROUP_COLUMNS)))
# Within a group's values, its four digests, by kind.
_DIGEST_KINDS: Final = ("workload", "implementation", "protocol", "environment")
_DIGESTS_IN_GROUP: Final = slice(
    GROUP_COLUMNS.index("workload_digest"), GROUP_COLUMNS.index("environment_digest") + 1
)
_COMMIT_AT: Final = _RUN_COLUMNS.index("commit_id")
#: Records validated and stored at a time: memory holds one batch, whatever the file's size.
BATCH: Final = 2000
# A writer that lost a deadlock or serialization race tries its file again.
_RETRIES: Final = 5
_RETRY_STATES: Final = frozenset({"40P01", "40001"})
# A string value or key holding U+0000, as a JSON text writes it (a NUL cannot be
# written raw in JSON).
_NUL_ESCAPE: Final = "\\u0000"
_NUL_ESCAPE_BYTES: Final = _NUL_ESCAPE.encode()
# A backslash as ``int in bytes`` searches for it (a bytes needle of one byte goes the
# general way).
_BACKSLASH: Final = ord("\\")


class _RefusedError(Exception):
    """Rolls a file's transaction back; carries the problems that refused it."""

    def __init__(self, problems: list[FileProblem], clashes: int) -> None:
        super().__init__("refused")
        self.problems = problems
        self.clashes = clashes


@attrs.define
class _Record:
    """A validated record as its batch keeps it until its rows go in: its text as stored
    (UTF-8 bytes as read and checked by the reader, or str as written), its place, and
    its run's columns; not its parsed value (see :class:`_FileIngest`)."""

    document: Document
    raw: str | bytes
    form: str
    #: Whether the record is a bundle (its run at ``/run``) rather than a document alone.
    bundle: bool
    #: Its run's columns (:data:`_RUN_COLUMNS`); empty for a protocol or environment.
    row: tuple[Any, ...] = ()
    #: A protocol or environment document's value (rare, and small); None for a run.
    value: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The record's text as str (decoded on demand: most records never need it)."""
        raw = self.raw
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw

    def parsed(self) -> dict[str, Any]:
        """The record's JSON value: a run's read again from its text, which only a run
        stored before under another text needs. ``json`` reads a valid record's text to
        the value validation gave (the strict parser is ``json`` with hooks that only
        refuse), and a record that gained provenance was stored as its annotated value's
        text."""
        if self.value is not None:
            return self.value
        found: dict[str, Any] = json.loads(self.raw)
        return found

    def problem(self, pointer: str, message: str, code: str) -> FileProblem:
        return FileProblem(
            source=self.document.source,
            problem=Problem(pointer=pointer, message=message, code=code),
            document_line=self.document.line if self.document.json_lines else None,
        )


def _now() -> str:
    return format_observed_at(datetime.now(timezone.utc))


def _text_of(
    document: Document, value: dict[str, Any], given: provenance.Provenance, annotate: bool
) -> tuple[str | bytes, str]:
    """A record's text as stored and its form (``line`` or ``document``).

    ``annotate``: whether ``given`` holds any provenance (``bool(given)``, asked once).
    """
    raw = document.text
    form = "line" if document.json_lines else "document"
    if annotate and provenance.annotate(value, given):
        # The record gains provenance: it is stored as the published form of the
        # annotated record, in the form it came in (a line, or an indented document).
        newline = raw.endswith(b"\n") if isinstance(raw, bytes) else raw.endswith("\n")
        end = "\n" if newline else ""
        raw = dumps(value, indent=None if form == "line" else 2) + end
    return raw, form


def _stored_source(label: str) -> str:
    """A record's ``file[:line]`` as the store keeps it: text any database can hold.

    A file name that is not UTF-8 reaches Python with its bytes as lone surrogates, which
    neither SQLite nor PostgreSQL can store: those bytes are kept as ``\\xNN`` (as
    messages show them), any other lone surrogate as its ``\\uXXXX`` escape.
    """
    return label if label.isascii() else json_safe(display_path(label))


def _nul_pointer(value: Any, pointer: str = "") -> str | None:
    """The JSON pointer of the first key or string in ``value`` holding U+0000 (NUL)."""
    if isinstance(value, str):
        return pointer if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
            found = here if "\x00" in key else _nul_pointer(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _nul_pointer(item, f"{pointer}/{index}")
            if found is not None:
                return found
    return None


def _nul_problem(result: documents.DocumentResult) -> FileProblem | None:
    """The problem of a valid record holding U+0000 (NUL) in a key or string, which no
    store takes: PostgreSQL's text and jsonb cannot hold it, and SQLite refuses it alike,
    so that a record goes into either store or neither. None for any other record.

    The NUL is stored nowhere escaped instead: ``"\\u0000"`` in a spec would be another
    JSON value than the record's, and its digest another.
    """
    raw = result.document.text
    # A JSON text writes a NUL as this escape only. Most records hold no backslash at
    # all, which one byte's search (memchr) tells: a harness bundle's 3.3 KB in 0.09 us,
    # against 1.4 us for the escape's six bytes.
    if isinstance(raw, bytes):
        found = _BACKSLASH in raw and _NUL_ESCAPE_BYTES in raw
    else:
        found = "\\" in raw and _NUL_ESCAPE in raw
    if not found:
        return None
    pointer = _nul_pointer(result.value)
    if pointer is None:
        # The escape's backslash was itself escaped: no NUL.
        return None
    document = result.document
    return FileProblem(
        source=document.source,
        problem=Problem(
            pointer=pointer,
            message=(
                "a string holding U+0000 (NUL) cannot be stored: PostgreSQL's text and"
                " jsonb cannot hold it, and both stores refuse it alike"
            ),
            code="store-nul",
        ),
        document_line=document.line if document.json_lines else None,
    )


#: A bundle's digested objects: (kind, the run's digest key, whether the run's spec holds
#: the object; else the bundle does, as a document with a name).
_BUNDLE_OBJECTS: Final = (
    ("workload", "workloadDigest", True),
    ("implementation", "implementationDigest", True),
    ("protocol", "protocolDigest", False),
    ("environment", "environmentDigest", False),
)


def _new_objects(
    value: dict[str, Any],
    seen: dict[str, set[str]],
    objects: dict[str, dict[str, _extract.ObjectRow]],
) -> None:
    """Add each object of the record ``value`` whose digest ``seen`` (this file's, by
    kind) lacks to ``objects`` (by kind, then digest) and its digest to ``seen``.

    A repeat needs no comparison with the first: every record here passed validation's
    :class:`~kernelindex_sdk.validation.InputRules` over this same file, which refuses
    a digest standing for two different objects (compared as RFC 8785 values, at least
    as strict as :func:`_extract.json_equal`: tests/store/test_store.py holds the two
    to it), so all the objects of one digest in a file are the first one.
    """
    run = value.get("run")
    if run is None:
        # A run, protocol or environment document on its own (rare): the general way.
        for kind, digest, spec, name in _extract.object_specs(value):
            if digest not in seen[kind]:
                seen[kind].add(digest)
                objects[kind][digest] = _extract.object_row(kind, digest, spec, name)
        return
    # A bundle (the common record): its run's workload and implementation (when it
    # carries them) and its protocol and environment, by the digests the run declares.
    spec = run["spec"]
    for kind, key, in_run in _BUNDLE_OBJECTS:
        digest = spec[key]
        known = seen[kind]
        if digest in known:
            continue
        if in_run:
            if kind not in spec:
                continue
            found, name = spec[kind], None
        else:
            doc = value.get(kind)
            if doc is None:
                continue
            found, name = doc["spec"], doc["metadata"]["name"]
        known.add(digest)
        objects[kind][digest] = _extract.object_row(kind, digest, found, name)


@attrs.define
class _Batch:
    """What a batch of a file's records brings to the store, gathered record by record as
    each is read (see :class:`_FileIngest`)."""

    #: Documents read into this batch, valid or not.
    size: int = 0
    #: Its runs (bundles and runs alone), in the file's order, as three lists of one
    #: entry a run (no object a run: building one cost more than its columns' reads):
    #: its columns (:data:`_RUN_COLUMNS`), its text as stored (UTF-8 bytes as read and
    #: checked by the reader, or str as written) and its document.
    rows: list[tuple[Any, ...]] = attrs.Factory(list)
    texts: list[str | bytes] = attrs.Factory(list)
    documents: list[Document] = attrs.Factory(list)
    #: Each run's group id (runs.group_id), or a stand-in (negative) for a group not
    #: yet in the store; and whether any is a stand-in.
    gids: list[int] = attrs.Factory(list)
    pending: bool = False
    #: The positions of its runs on their own (not in a bundle): few, if any.
    alone: set[int] = attrs.Factory(set)
    #: Its protocol and environment documents on their own.
    standalone: list[_Record] = attrs.Factory(list)
    #: The objects whose digests no earlier record of the file carried, by kind.
    objects: dict[str, dict[str, _extract.ObjectRow]] = attrs.Factory(
        lambda: {kind: {} for kind in OBJECT_TABLES}
    )

    def record(self, index: int) -> _Record:
        """Run ``index`` as a :class:`_Record`, for the few that need one (a run stored
        before, a problem)."""
        document = self.documents[index]
        raw = self.texts[index]
        record = _Record(document, raw, _form(document), index not in self.alone)
        record.row = self.rows[index]
        return record


def _form(document: Document) -> str:
    return "line" if document.json_lines else "document"


class _FileIngest:
    """One file's records going into the store, a batch at a time, in one transaction.

    Each record is taken apart as it is read: its run's columns and the objects new to
    the file (the reader checked it, the store's rules included). A batch keeps only that and the
    record's text, not its parsed value: a harness bundle's value is about 11 KB, three
    times its text, and 2,000 of them held until their batch went in (22 MB, more than
    the caches keep) were written to memory, then read from it again for their columns
    and once more to be freed (docs/performance.md, "Where a large bundle's time went").

    Each batch's new objects and runs go in as it completes, so memory holds one batch
    of texts and columns. A batch repeats what an earlier one stored, and the store
    (inside the same transaction) tells whether it is the same. Once a problem is found
    nothing more goes in, but the rest of the file is still validated, so that every
    problem is reported; the caller then rolls the file back. A batch's problems are
    those of its validation, else those the store finds, in that order whatever the
    record.
    """

    def __init__(self, backend: Backend, source: str) -> None:
        self.backend = backend
        self.source = source
        self.documents = 0
        self.problems: list[FileProblem] = []
        self.clashes = 0
        self.added = 0
        self.identical = 0
        self.provenance_only = 0
        # Runs added without a kernelindex.dev/commit annotation.
        self.without_commit = 0
        self.now = _now()
        # The digests of the objects this file's earlier records carried, by kind.
        self._seen: dict[str, set[str]] = {kind: set() for kind in OBJECT_TABLES}
        # The id of each run group this file's runs named, by their values (the labels
        # as their text): a file's runs mostly share one or a few. Kept for this
        # transaction only: a group it inserted is gone if it rolls back.
        self._groups: dict[tuple[Any, ...], int] = {}
        self._label_values: dict[str, Any] = {}
        # The ids of the groups this file inserted, and of those among them that a run
        # this file inserted names: no other writer can name one before this file
        # commits (SQLite has one writer; in PostgreSQL the row is not yet visible, and
        # another writer inserting the same key waits for this transaction).
        self._made: set[int] = set()
        self._used: set[int] = set()
        # The groups of values (:data:`_GROUP_OF`) whose four digests are all in
        # ``_seen``: a run of one has no object new to the file.
        self._complete: set[tuple[Any, ...]] = set()
        # The complete groups with their ids (or stand-ins, until their batch's groups
        # go in): a run of one needs nothing more than its id.
        self._ready: dict[tuple[Any, ...], int] = {}
        # The groups of the batch being read that the store lacks, in the order they
        # came, with the stand-in (negative) id each run of one holds until then.
        self._stand_ins: dict[tuple[Any, ...], int] = {}

    def run(
        self, results: Iterable[documents.DocumentResult], given: provenance.Provenance
    ) -> None:
        """Take every document of the file, then refuse it if anything was wrong.

        Raises:
            _RefusedError: with every problem, for the caller's transaction to roll back.
        """
        annotate = bool(given)
        batch = _Batch()
        for result in results:
            self.documents += 1
            batch.size += 1
            if result.problems:
                self.problems.extend(result.problems)
            elif (nul := _nul_problem(result)) is not None:
                self.problems.append(nul)
            elif not self.problems:
                # Nothing goes in once a problem is found: its value is not needed.
                self._take(result, given, annotate, batch)
            if batch.size == BATCH:
                self._store(batch)
                batch = _Batch()
        if batch.size:
            self._store(batch)
        if self.problems:
            raise _RefusedError(self.problems, self.clashes)

    def _take(
        self,
        result: documents.DocumentResult,
        given: provenance.Provenance,
        annotate: bool,
        batch: _Batch,
    ) -> None:
        """One valid record into ``batch``, taken apart while its value is at hand.

        Every run passes here: its steps are inline, as few as give its columns, its
        new objects and its checks (a call or an object a run cost more than most steps).
        """
        document = result.document
        value = result.value
        if annotate:
            raw, _ = _text_of(document, value, given, annotate)
        else:
            raw = document.text
        run = value.get("run")
        if run is None:
            if value["kind"] != "BenchmarkRun":
                batch.standalone.append(_Record(document, raw, _form(document), False, value=value))
                _new_objects(value, self._seen, batch.objects)
                return
            run = value
            batch.alone.add(len(batch.rows))
        # The stored ``file:line``: ``_stored_source(document.label)``, which a line
        # number (ASCII) leaves as it is when the file's name is ASCII.
        label = f"{document.source}:{document.line}" if document.json_lines else document.source
        if not label.isascii():
            label = _stored_source(document.label)
        # The reader applied the store's rules (a latency past the 64-bit columns, say).
        row, _ = _extract.run_row(run, label, self.now)
        # A group of values met before in this file: its id is known, and so is every
        # object its digests name (see _new_objects). One lookup a run.
        group = _GROUP_OF(row)
        gid = self._ready.get(group)
        if gid is None:
            gid = self._new_group(group, value, batch)
        batch.rows.append(row)
        batch.texts.append(raw)
        batch.documents.append(document)
        batch.gids.append(gid)

    def _new_group(self, group: tuple[Any, ...], value: dict[str, Any], batch: _Batch) -> int:
        """A run's group of values not yet ready (:attr:`_ready`): its objects new to
        the file into ``batch``; its id, or for a group not yet in the store a stand-in
        (``batch`` is then pending: :meth:`_group_ids` inserts the batch's groups)."""
        if group not in self._complete:
            _new_objects(value, self._seen, batch.objects)
            seen = self._seen
            if all(
                digest in seen[kind]
                for kind, digest in zip(_DIGEST_KINDS, group[_DIGESTS_IN_GROUP], strict=True)
            ):
                self._complete.add(group)
        gid = self._groups.get(group)
        if gid is None:
            gid = self._stand_ins.get(group)
            if gid is None:
                gid = self._stand_ins[group] = -1 - len(self._stand_ins)
            batch.pending = True
        if group in self._complete:
            self._ready[group] = gid
        return gid

    def _store(self, batch: _Batch) -> None:
        """Store a batch's records, or find the problems that refuse them."""
        if self.problems:
            return
        for kind in OBJECT_TABLES:
            self._objects(kind, batch.objects[kind])
        self._documents(batch.standalone)
        self._runs(batch)

    def _objects(self, kind: str, rows: dict[str, _extract.ObjectRow]) -> None:
        if not rows:
            return
        values = [(row.digest, *row.extra, row.spec_text) for row in rows.values()]
        inserted = self.backend.insert_objects(kind, values)
        others = [digest for digest in rows if digest not in inserted]
        stored = self.backend.object_specs(kind, others)
        for digest in others:
            if not _extract.json_equal(stored[digest], rows[digest].spec):
                self.clashes += 1
                self.problems.append(
                    FileProblem(
                        source=self.source,
                        problem=Problem(
                            pointer="",
                            message=(
                                f"{kind} digest {digest!r} names another spec in"
                                f" {self.backend.url.shown}"
                            ),
                            code="digest-clash",
                        ),
                    )
                )

    def _documents(self, records: list[_Record]) -> None:
        now = self.now
        for record in records:
            value = record.parsed()
            kind = value["kind"]
            name = value["metadata"]["name"]
            digest = next(_extract.objects_of(value)).digest
            found = None
            for _ in range(2):
                found = self.backend.stored_document(kind, name)
                if found is not None:
                    break
                row = (
                    kind,
                    name,
                    digest,
                    record.text,
                    record.form,
                    _stored_source(record.document.label),
                    now,
                )
                if self.backend.insert_document(row):
                    self.added += 1
                    break
            if found is None:
                continue
            stored_digest, stored_source, stored_text = found
            # The same spec under the same name is not yet the same document: one whose
            # metadata (labels, annotations) differs is another record, as merge says.
            if stored_digest == digest and (
                stored_text == record.text or _extract.json_equal(json.loads(stored_text), value)
            ):
                self.identical += 1
                continue
            self.clashes += 1
            self.problems.append(
                record.problem(
                    "/metadata/name",
                    f"name {name!r} already names a different {kind} in"
                    f" {self.backend.url.shown} (from {display_path(stored_source)})",
                    "store-clash",
                )
            )

    def _runs(self, batch: _Batch) -> None:
        rows = batch.rows
        if not rows:
            return
        if self.problems:
            return
        # Each run's row ends with its group's id (runs.group_id).
        gids = self._group_ids(batch.gids) if batch.pending else batch.gids
        rows = list(map(operator.add, rows, zip(gids, strict=True)))
        seqs = self.backend.insert_runs(rows)
        forms = ["line" if document.json_lines else "document" for document in batch.documents]
        if isinstance(seqs, range):
            # Every run went in (the common case): no run's number to test.
            texts = list(zip(seqs, batch.texts, forms, strict=True))
            self.without_commit += sum(row[_COMMIT_AT] is None for row in rows)
        else:
            self.without_commit += sum(
                row[_COMMIT_AT] is None for row, seq in zip(rows, seqs, strict=True) if seq
            )
            texts = [
                (seq, raw, form)
                for seq, raw, form in zip(seqs, batch.texts, forms, strict=True)
                if seq is not None
            ]
        self.added += len(texts)
        self.backend.insert_texts(texts)
        if len(texts) == len(rows):
            if self._made:
                self._used.update(gids)
            return
        self._drop_unused(gids, seqs)
        others = [index for index, seq in enumerate(seqs) if seq is None]
        stored = self.backend.stored_runs([rows[index][0] for index in others])
        for index in others:
            name = rows[index][0]
            text, source = stored[name]
            self._compare(batch.record(index), name, text, source)

    def _drop_unused(self, gids: Sequence[int], seqs: Sequence[int | None]) -> None:
        """Delete the groups this file inserted that no run names: those of runs already
        stored (a run seen again with other provenance keeps its stored values), so that
        run_groups holds the combinations of stored runs only.

        Args:
            gids: The group id of each run of the batch.
            seqs: Each run's ``seq``; None for a run already stored.

        Raises:
            StoreError: when the store fails.
        """
        if not self._made:
            return
        self._used.update(gid for gid, seq in zip(gids, seqs, strict=True) if seq is not None)
        skipped = {gid for gid, seq in zip(gids, seqs, strict=True) if seq is None}
        spare = sorted(skipped & (self._made - self._used))
        if not spare:
            return
        self.backend.delete_groups(spare)
        self._made.difference_update(spare)
        gone = set(spare)
        # A later run of the same values inserts its group again.
        for combo in [combo for combo, gid in self._groups.items() if gid in gone]:
            del self._groups[combo]
            self._ready.pop(combo, None)

    def _group_ids(self, gids: list[int]) -> list[int]:
        """The batch's group ids with each stand-in replaced by its group's id, the
        groups the store lacks inserted.

        Raises:
            StoreError: when the store fails.
        """
        known = self._groups
        stand_ins, self._stand_ins = self._stand_ins, {}
        fresh = {combo: group_key(combo[:-1], self._labels(combo[-1])) for combo in stand_ins}
        # One row a key: another text of the same labels (rare) is the same group.
        rows_of = {key: (key, *combo) for combo, key in reversed(fresh.items())}
        ids, made = self.backend.insert_groups(list(rows_of.values()))
        self._made.update(ids[key] for key in made)
        real = {}
        for combo, key in fresh.items():
            known[combo] = real[stand_ins[combo]] = ids[key]
            if combo in self._ready:
                self._ready[combo] = ids[key]
        return list(map(real.get, gids, gids))

    def _labels(self, text: str) -> Any:
        """A run's labels as a JSON value, from their text (each text parsed once a file)."""
        value = self._label_values.get(text)
        if value is None:
            value = self._label_values[text] = json.loads(text)
        return value

    def _compare(self, record: _Record, name: str, text: str, source: str) -> None:
        if text == record.text:
            self.identical += 1
            return
        # JSON values, numbers by value (``5`` and ``5.0`` are one, as in RFC 8785, the
        # digests and merge), as objects are compared.
        value = json.loads(text)
        mine = record.parsed()
        if _extract.json_equal(value, mine):
            self.identical += 1
            return
        if _extract.json_equal(
            provenance.without_provenance(value), provenance.without_provenance(mine)
        ):
            self.provenance_only += 1
            return
        self.clashes += 1
        pointer = "/run/metadata/name" if record.bundle else "/metadata/name"
        self.problems.append(
            record.problem(
                pointer,
                f"run {name!r} is already stored with other content"
                f" (from {display_path(source)} in {self.backend.url.shown})",
                "store-clash",
            )
        )


def _retryable(err: StoreError) -> bool:
    return getattr(err.__cause__, "sqlstate", None) in _RETRY_STATES


def _ingest_once(
    backend: Backend,
    path: str | Path,
    given: provenance.Provenance,
    *,
    verify_digests: bool,
    stdin: IO[bytes] | None,
) -> IngestReport:
    source = "<stdin>" if str(path) == documents.STDIN else str(path)
    work = _FileIngest(backend, source)
    results = documents.check_documents(
        [path], verify_digests=verify_digests, stdin=stdin, for_store=True
    )
    try:
        with backend.transaction():
            work.run(results, given)
    except _RefusedError:
        return IngestReport(
            files=1,
            refused=work.documents,
            clashes=work.clashes,
            problems=tuple(work.problems),
        )
    except DataRefusedError as err:
        # Rolled back: the file is refused with the store's reason, the next files go on
        # (a failure of the store itself, a lost connection or a full disk, stops them).
        problem = Problem(
            pointer="",
            message=f"the store refused the file's records: {err.reason}",
            code="store-refused",
        )
        return IngestReport(
            files=1,
            refused=work.documents,
            problems=(FileProblem(source=source, problem=problem),),
        )
    return IngestReport(
        files=1,
        added=work.added,
        identical=work.identical,
        provenance_only=work.provenance_only,
        without_commit=work.without_commit,
    )


def _ingest_file(
    backend: Backend,
    path: str | Path,
    given: provenance.Provenance,
    *,
    verify_digests: bool,
    stdin: IO[bytes] | None,
) -> IngestReport:
    attempt = 1
    while True:
        try:
            return _ingest_once(backend, path, given, verify_digests=verify_digests, stdin=stdin)
        except StoreError as err:  # noqa: PERF203 (a retry reads the file again)
            # A file is read again for another try; standard input cannot be.
            again = str(path) != documents.STDIN and _retryable(err)
            if attempt < _RETRIES and again:
                attempt += 1
                continue
            raise


# A file's parsed records hold no reference cycles: the collector's passes over them
# find nothing and cost as much as the inserts.
def ingest_paths(
    backend: Backend,
    paths: Iterable[str | Path],
    given: provenance.Provenance,
    *,
    verify_digests: bool = False,
    stdin: IO[bytes] | None = None,
    on_notice: documents.OnNotice | None = None,
) -> IngestReport:
    """Ingest every file the paths name, each in one transaction; see the module's notes.

    Raises:
        StoreError: when the store fails (a lost connection, a full disk).
    """
    errors: list[InputError] = []
    report = IngestReport()
    for path in documents.expand_paths(paths, on_error=errors.append, on_notice=on_notice):
        # One unreadable file must not stop the others.
        try:
            report += _ingest_file(backend, path, given, verify_digests=verify_digests, stdin=stdin)
        except StoreError:  # noqa: PERF203
            raise
        except InputError as err:
            errors.append(err)
    return attrs.evolve(report, input_errors=report.input_errors + tuple(errors))
