"""The store's tables: a public, versioned contract (docs/store.md describes each column).

:data:`LAYOUT_VERSION` is recorded in the table ``kernelindex_layout``. A store of an
older layout is migrated on opening (each step in :data:`_MIGRATIONS`, in one
transaction); one of a newer layout, or a database holding our table names without
that record, is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from ._extract import canonical

__all__ = [
    "GROUP_COLUMNS",
    "LAYOUT_VERSION",
    "OBJECT_TABLES",
    "TABLES",
    "create_statements",
    "group_key",
    "migrations",
]

#: The layout version this package reads and writes.
LAYOUT_VERSION: Final = 3

#: The object tables by kind, as :meth:`Store.spec` names them.
OBJECT_TABLES: Final = {
    "workload": "workloads",
    "implementation": "implementations",
    "protocol": "protocols",
    "environment": "environments",
}
#: Every table of the layout, the version table first.
TABLES: Final = (
    "kernelindex_layout",
    *OBJECT_TABLES.values(),
    "documents",
    "run_groups",
    "runs",
    "run_texts",
)
#: The columns of a run that ``run_groups`` holds once per distinct combination, in
#: the order of :func:`group_key`'s list.
GROUP_COLUMNS: Final = (
    "status",
    "branch",
    "workload_digest",
    "implementation_digest",
    "protocol_digest",
    "environment_digest",
    "labels",
)

# {json}: jsonb in PostgreSQL (queried with ->, ->>), text holding JSON in SQLite (json_extract).
# {seq}: the order of arrival (a file's records in the file's order).
# No secondary index: three (series digests, branch, commit) took 40% of a run's insert
# time in SQLite (17 of 41 us per Liger bundle, measured), and the queries of a history
# read whole series anyway.
# An index a team adds for its own queries does not change the layout.
# Version 2 keeps each run's record text in run_texts, beside its run: a history reads
# every run's columns, and with the texts (a few KiB each) in the runs table that scan
# read them all (10,000 runs: 31 ms of fetching, against a few without).
# Version 3 names, in runs.group_id, the row of run_groups that holds the run's status,
# branch, four digests and labels (which runs share in long stretches): a history reads
# a run's 7 own columns and that integer, and each group once. Python's sqlite3 costs
# about 1,300 instructions per value read (it releases the GIL around each), so 8 values
# a run instead of 14 halve the read (benchmarks/results/history_fetch_variants.json).
# runs keeps those columns too: SQL written against layout 2 reads them as it did.
_DDL: Final = (
    """CREATE TABLE kernelindex_layout (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """CREATE TABLE workloads (
    digest TEXT PRIMARY KEY,
    operation TEXT,
    pass TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE implementations (
    digest TEXT PRIMARY KEY,
    provider TEXT,
    entry_point TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE protocols (
    digest TEXT PRIMARY KEY,
    name TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE environments (
    digest TEXT PRIMARY KEY,
    name TEXT,
    hardware TEXT,
    spec {json} NOT NULL
)""",
    """CREATE TABLE documents (
    seq {seq},
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line')),
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    UNIQUE (kind, name)
)""",
    """CREATE TABLE run_groups (
    id {group_id},
    key TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    branch TEXT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels {json} NOT NULL
)""",
    """CREATE TABLE runs (
    seq {seq},
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    commit_id TEXT,
    branch TEXT,
    commit_time TEXT,
    median_ns BIGINT,
    p20_ns BIGINT,
    p80_ns BIGINT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels {json} NOT NULL,
    annotations {json} NOT NULL,
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    group_id BIGINT NOT NULL
)""",
    """CREATE TABLE run_texts (
    seq {run_seq},
    record_text TEXT NOT NULL,
    record_form TEXT NOT NULL CHECK (record_form IN ('document', 'line'))
)""",
)

_TYPES: Final = {
    "sqlite": {
        "json": "TEXT",
        "seq": "INTEGER PRIMARY KEY",
        "run_seq": "INTEGER PRIMARY KEY",
        "group_id": "INTEGER PRIMARY KEY",
    },
    "postgresql": {
        "json": "JSONB",
        "seq": "BIGINT PRIMARY KEY DEFAULT nextval('kernelindex_arrival')",
        "run_seq": "BIGINT PRIMARY KEY",
        "group_id": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    },
}


class Execute(Protocol):
    """Runs one statement and returns its rows (a migration step's only way to the
    database)."""

    def __call__(self, sql: str, params: Sequence[Any] = ..., /) -> list[tuple[Any, ...]]: ...


#: A step from one layout version to the next: ``step(execute, dialect)``.
Migration = Callable[[Execute, str], None]

# The columns layout 2 keeps in runs, in their order.
_RUN_COLUMNS_V2: Final = (
    "seq, name, status, observed_at, commit_id, branch, commit_time, median_ns, p20_ns,"
    " p80_ns, workload_digest, implementation_digest, protocol_digest, environment_digest,"
    " labels, annotations, source, ingested_at"
)


def group_key(values: Sequence[Any], labels: Any) -> str:
    """``run_groups.key``: the SHA-256 of a group's values as one JSON text, equal for
    equal values.

    The text: a compact JSON array of the :data:`GROUP_COLUMNS` in their order, ``labels``
    as an object with its keys sorted (the same labels in another order are one group),
    non-ASCII characters as they are. The key is ``"sha256:"`` and the hex SHA-256 of the
    text's UTF-8.

    Args:
        values: The group's status, branch and four digests, in that order.
        labels: The run's labels as a JSON value (a mapping), not as text.

    Returns:
        The key, 71 characters whatever the values.
    """
    # A digest, not the text: PostgreSQL's unique btree index takes at most 2704 bytes
    # an entry, and a run's branch and each label value may be 4096 characters.
    text = canonical([*values, labels])
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _statement(dialect: str, head: str) -> str:
    return next(s for s in create_statements(dialect) if s.startswith(head))


def _runs_statement(dialect: str) -> str:
    return _statement(dialect, "CREATE TABLE runs (")


def _texts_statement(dialect: str) -> str:
    return _statement(dialect, "CREATE TABLE run_texts")


# Layout 2's runs table (made under another name, then renamed).
_V2_RUNS: Final = """CREATE TABLE runs_v2 (
    seq {seq},
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    commit_id TEXT,
    branch TEXT,
    commit_time TEXT,
    median_ns BIGINT,
    p20_ns BIGINT,
    p80_ns BIGINT,
    workload_digest TEXT NOT NULL,
    implementation_digest TEXT NOT NULL,
    protocol_digest TEXT NOT NULL,
    environment_digest TEXT NOT NULL,
    labels {json} NOT NULL,
    annotations {json} NOT NULL,
    source TEXT NOT NULL,
    ingested_at TEXT NOT NULL
)"""


def _sqlite_set_aside(execute: Execute) -> list[str]:
    """Before SQLite's ``runs`` is built again: set aside what refers to it.

    SQLite's procedure for a change ALTER TABLE cannot make
    (https://www.sqlite.org/lang_altertable.html#otheralter): remember the statements
    that made the indexes and triggers on ``runs`` (dropping the old table drops them)
    and every view and every other trigger (their text may name ``runs``, and renaming
    the new table checks them all, failing on one that names the dropped table); drop
    those views and triggers. :func:`_sqlite_restore` makes them all again afterwards.

    Returns:
        The statements, in the order they were first made.
    """
    kept = execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
        " AND (type IN ('view', 'trigger') OR (type = 'index' AND tbl_name = 'runs'))"
        " ORDER BY rowid"
    )
    for kind, name, table, _ in kept:
        if kind == "view" or (kind == "trigger" and table != "runs"):
            quoted = name.replace('"', '""')
            execute(f'DROP {kind.upper()} "{quoted}"')
    return [sql for *_, sql in kept]


def _sqlite_restore(execute: Execute, kept: Sequence[str]) -> None:
    """Make again, in their order, what :func:`_sqlite_set_aside` set aside.

    Raises:
        StoreError: (from ``execute``) when one no longer applies, say an index on a
            column the step removed; the migration then rolls back whole.
    """
    for sql in kept:
        execute(sql)


def _v1_to_v2(execute: Execute, dialect: str) -> None:
    """Layout 1 to 2: each run's record text and form move to run_texts, by the run's seq.

    PostgreSQL: the runs table is locked first, so no writer of layout 1 (a 0.4.0 client)
    can commit a run between the copy of the texts and the change of the table: such a
    run would be left without its text. The two columns are then dropped in place, which
    keeps a team's own indexes, grants and views on runs (their space is reclaimed at the
    table's next rewrite). SQLite (one writer at a time, and no ``DROP COLUMN`` of a
    column with a CHECK) builds the table again without them, its rows copied in their
    seq, following SQLite's documented procedure: a team's indexes, triggers and views
    are made again (:func:`_sqlite_set_aside`); nothing else changes.
    """
    if dialect == "postgresql":
        execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
    execute(_texts_statement(dialect))
    execute(
        "INSERT INTO run_texts (seq, record_text, record_form)"
        " SELECT seq, record_text, record_form FROM runs ORDER BY seq"
    )
    if dialect == "postgresql":
        execute("ALTER TABLE runs DROP COLUMN record_text, DROP COLUMN record_form")
        return
    kept = _sqlite_set_aside(execute)
    execute(_V2_RUNS.format(**_TYPES[dialect]))
    execute(
        f"INSERT INTO runs_v2 ({_RUN_COLUMNS_V2})"  # noqa: S608 (constant text)
        f" SELECT {_RUN_COLUMNS_V2} FROM runs ORDER BY seq"
    )
    execute("DROP TABLE runs")
    execute("ALTER TABLE runs_v2 RENAME TO runs")
    _sqlite_restore(execute, kept)


# run_groups' columns past its id, in order; the same in runs but the key.
_GROUP_INSERT: Final = "key, " + ", ".join(GROUP_COLUMNS)
_GROUP_VALUES: Final = ", ".join(GROUP_COLUMNS)


def _match(dialect: str) -> str:
    """A group's row (``g``) matches a run's (``r``): every column equal, an absent
    branch in both included (SQLite's ``IS`` is PostgreSQL's ``IS NOT DISTINCT FROM``)."""
    same = "IS NOT DISTINCT FROM" if dialect == "postgresql" else "IS"
    return " AND ".join(
        f"g.{column} {same if column == 'branch' else '='} r.{column}" for column in GROUP_COLUMNS
    )


def _v2_to_v3(execute: Execute, dialect: str) -> None:
    """Layout 2 to 3: run_groups is made from the distinct combinations of the runs'
    status, branch, digests and labels, and each run names its own in ``group_id``.

    The keys are computed here as ingest computes them (:func:`group_key`), so that a
    run ingested later joins the group of its combination. PostgreSQL: the runs table is
    locked first (as in :func:`_v1_to_v2`), the column added, filled and then made
    NOT NULL in place (a team's indexes, grants and views on runs stay). SQLite builds
    runs again with the column, its rows copied in their seq: each run's group found by
    its exact values (two texts of the same labels are two combinations of one group);
    a team's indexes, triggers and views are made again (:func:`_sqlite_set_aside`).
    Not ``ALTER TABLE ADD COLUMN``: SQLite adds a NOT NULL column only with a non-null
    default, which would let a writer leave a run without its group unnoticed.
    """
    postgres = dialect == "postgresql"
    if postgres:
        execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
    execute(_statement(dialect, "CREATE TABLE run_groups ("))
    labels = "labels::text" if postgres else "labels"
    found = execute(
        f"SELECT DISTINCT {_GROUP_VALUES.replace('labels', labels)} FROM runs"  # noqa: S608
    )
    # The key, the six text columns, the labels (from text to jsonb in PostgreSQL).
    marks = ", ".join(["?"] * len(GROUP_COLUMNS)) + (", CAST(? AS JSONB)" if postgres else ", ?")
    for row in found:
        *values, text = row
        execute(
            f"INSERT INTO run_groups ({_GROUP_INSERT}) VALUES ({marks})"  # noqa: S608
            " ON CONFLICT (key) DO NOTHING",
            (group_key(values, json.loads(text)), *values, text),
        )
    if postgres:
        execute("ALTER TABLE runs ADD COLUMN group_id BIGINT")
        execute(
            f"UPDATE runs r SET group_id = g.id FROM run_groups g WHERE {_match(dialect)}"  # noqa: S608
        )
        execute("ALTER TABLE runs ALTER COLUMN group_id SET NOT NULL")
        return
    # SQLite: each distinct text of the labels maps to its group by key.
    execute(
        f"CREATE TEMPORARY TABLE kernelindex_v3_groups ({_GROUP_VALUES}, group_id INTEGER NOT NULL)"
    )
    for row in found:
        *values, text = row
        execute(
            f"INSERT INTO kernelindex_v3_groups ({_GROUP_VALUES}, group_id)"  # noqa: S608
            f" SELECT {', '.join('?' * len(GROUP_COLUMNS))}, id FROM run_groups WHERE key = ?",
            (*values, text, group_key(values, json.loads(text))),
        )
    kept = _sqlite_set_aside(execute)
    execute(_runs_statement(dialect).replace("CREATE TABLE runs (", "CREATE TABLE runs_v3 (", 1))
    own = ", ".join(f"r.{column.strip()}" for column in _RUN_COLUMNS_V2.split(","))
    execute(
        f"INSERT INTO runs_v3 ({_RUN_COLUMNS_V2}, group_id)"  # noqa: S608 (constant text)
        f" SELECT {own}, g.group_id FROM runs r JOIN kernelindex_v3_groups g ON {_match(dialect)}"
        " ORDER BY r.seq"
    )
    execute("DROP TABLE kernelindex_v3_groups")
    execute("DROP TABLE runs")
    execute("ALTER TABLE runs_v3 RENAME TO runs")
    _sqlite_restore(execute, kept)


#: Steps from one layout version to the next: ``_MIGRATIONS[n]`` turns version n into
#: n + 1. Version 1 is the first.
_MIGRATIONS: Final[dict[int, Migration]] = {1: _v1_to_v2, 2: _v2_to_v3}


def create_statements(dialect: str) -> list[str]:
    """The statements that create the current layout in ``dialect`` (sqlite, postgresql)."""
    types = _TYPES[dialect]
    # PostgreSQL: one sequence numbers every arrival; a writer takes a file's numbers
    # in the file's order (SQLite's rowid does the same in its one writer).
    first = ["CREATE SEQUENCE kernelindex_arrival"] if dialect == "postgresql" else []
    return first + [statement.format(**types) for statement in _DDL]


def migrations(found: int) -> list[Migration]:
    """The steps from layout ``found`` to :data:`LAYOUT_VERSION`, in order.

    Raises:
        KeyError: when a step is missing (the caller refuses such a store).
    """
    return [_MIGRATIONS[version] for version in range(found, LAYOUT_VERSION)]
